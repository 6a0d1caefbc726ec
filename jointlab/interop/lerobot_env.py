"""Importing LeRobot from JointLab: offline, with a torchvision that loads, with one error.

Every JointLab module that uses LeRobot imports it through :func:`import_lerobot`, which

* sets ``HF_HUB_OFFLINE=1`` unless the user set it (JointLab never reaches a hub: datasets
  are local folders);
* installs the torchvision stand-in where the real torchvision cannot load
  (:mod:`jointlab.interop.torchvision_stand_in`); LeRobot datasets are then decoded with
  LeRobot's ``pyav`` backend (:data:`VIDEO_BACKEND`);
* turns a missing LeRobot into a :class:`LeRobotMissing` error saying how to install it.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from jointlab.errors import ConfigurationError

__all__ = ["LEROBOT_VERSION", "LeRobotMissing", "import_lerobot", "video_backend"]

#: The LeRobot release JointLab's interop is written and tested against.
LEROBOT_VERSION = "0.4.4"


class LeRobotMissing(ConfigurationError):
    """LeRobot is not installed (the message says how to install it)."""


def video_backend() -> str | None:
    """LeRobot's video backend to ask for: ``"pyav"`` with the stand-in, else its default."""
    from jointlab.interop.torchvision_stand_in import is_stand_in

    return "pyav" if is_stand_in() else None


def import_lerobot(module: str = "lerobot") -> ModuleType:
    """Import ``module`` (a LeRobot module) offline, with a loadable torchvision.

    Raises:
        LeRobotMissing: LeRobot is not installed.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from jointlab.interop.torchvision_stand_in import ensure_torchvision

    ensure_torchvision()
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "lerobot":
            raise LeRobotMissing(
                f"LeRobot is not installed (needed for {module}): pip install --no-deps "
                f"lerobot=={LEROBOT_VERSION} and JointLab's 'lerobot' extra "
                "(pip install -e '.[lerobot]'), or run `make test`"
            ) from None
        raise
