"""Importing LeRobot from JointLab, with one error when it is missing.

Every JointLab module that uses LeRobot imports it through :func:`import_lerobot`, which
turns a missing LeRobot into a :class:`LeRobotMissing` error saying how to install it.
Nothing here changes the process: no environment variable, no ``sys.modules`` entry.
JointLab's datasets are local folders that LeRobot opens without a hub; a program that
wants Hugging Face's hub client offline says so at its entry point (the ``jointlab`` command
sets ``HF_HUB_OFFLINE=1`` unless the user set it).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from jointlab.errors import ConfigurationError

__all__ = ["LEROBOT_VERSION", "LeRobotMissing", "import_lerobot"]

#: The LeRobot release JointLab's interop is written and tested against.
LEROBOT_VERSION = "0.4.4"


class LeRobotMissing(ConfigurationError):
    """LeRobot is not installed (the message says how to install it)."""


def import_lerobot(module: str = "lerobot") -> ModuleType:
    """Import ``module`` (a LeRobot module).

    Raises:
        LeRobotMissing: LeRobot is not installed.
    """
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
