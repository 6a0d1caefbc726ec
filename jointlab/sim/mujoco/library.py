"""Importing the ``mujoco`` package, headless where there is no display.

MuJoCo picks its OpenGL backend when it is first imported, from ``MUJOCO_GL``; on a machine
without a display (no ``DISPLAY`` or ``WAYLAND_DISPLAY``) JointLab sets ``MUJOCO_GL=egl``
first, unless it is already set, so the offscreen renderer works headless (see
:mod:`jointlab.sim.mujoco.render`).
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from jointlab.errors import ConfigurationError
from jointlab.sim.mujoco.render import GL_HELP

__all__ = ["import_mujoco"]


def import_mujoco() -> ModuleType:
    """Import the ``mujoco`` package, or say how to install it.

    Raises:
        ConfigurationError: ``mujoco`` is not installed, or fails to import because the
            OpenGL backend ``MUJOCO_GL`` names cannot be loaded.
    """
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if "mujoco" not in sys.modules and headless:
        os.environ.setdefault("MUJOCO_GL", "egl")
    try:
        return importlib.import_module("mujoco")
    except ImportError as exc:
        raise ConfigurationError(
            f"engine 'mujoco' needs the mujoco package, which cannot be imported ({exc}); "
            "install it with: pip install 'jointlab[mujoco]'"
        ) from exc
    except Exception as exc:  # mujoco loads its OpenGL backend on import, and may fail there
        backend = os.environ.get("MUJOCO_GL", "")
        raise ConfigurationError(
            f"the mujoco package fails to import with MUJOCO_GL={backend!r} "
            f"({type(exc).__name__}: {exc}). {GL_HELP}; MUJOCO_GL=disable runs the physics "
            "without rendering"
        ) from exc
