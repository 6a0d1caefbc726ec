"""The physics engines a simulated robot can run on, and how each is chosen.

``"pybullet"`` is the default and always installed; ``"mujoco"`` comes with the ``mujoco``
extra (``pip install 'jointlab[mujoco]'``). Every place that takes an engine name
(``World(engine=...)``, ``SimRobot(engine=...)``, ``sim://NAME?engine=...``, the
environments' ``engine=``) checks it here, so a typo gets the same clear error everywhere.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from types import ModuleType

from jointlab.errors import ConfigurationError

__all__ = ["DEFAULT_ENGINE", "ENGINES", "check_engine", "import_mujoco"]

#: Engine names, the default first.
ENGINES = ("pybullet", "mujoco")
DEFAULT_ENGINE = "pybullet"


def check_engine(engine: object) -> str:
    """Return ``engine`` as a known engine name (lower case), or raise.

    Raises:
        ConfigurationError: not one of :data:`ENGINES` (with a "did you mean").
    """
    name = str(engine).strip().lower() if isinstance(engine, str) else None
    if name in ENGINES:
        return name
    hint = difflib.get_close_matches(str(engine).lower(), ENGINES, n=1)
    suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
    raise ConfigurationError(
        f"unknown physics engine {engine!r}; expected one of {list(ENGINES)}{suggestion}"
    )


def import_mujoco() -> ModuleType:
    """Import the ``mujoco`` package, or say how to install it.

    MuJoCo picks its OpenGL backend when it is first imported, from ``MUJOCO_GL``; on a
    machine without a display (no ``DISPLAY`` or ``WAYLAND_DISPLAY``) JointLab sets
    ``MUJOCO_GL=egl`` first, unless it is already set, so the offscreen renderer works
    headless (see :mod:`jointlab.sim.mujoco.render`).

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
        from jointlab.sim.mujoco.render import GL_HELP

        backend = os.environ.get("MUJOCO_GL", "")
        raise ConfigurationError(
            f"the mujoco package fails to import with MUJOCO_GL={backend!r} "
            f"({type(exc).__name__}: {exc}). {GL_HELP}; MUJOCO_GL=disable runs the physics "
            "without rendering"
        ) from exc
