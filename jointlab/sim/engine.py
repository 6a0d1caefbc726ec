"""The engine seam: what a physics engine implements, and how one is chosen by name.

A simulated robot (:class:`jointlab.sim.SimRobot`), the scenes, markers, sensors,
randomisation and the NJointAction law (:mod:`jointlab.sim.law`) are engine-neutral: they
talk only to the three protocols below. An engine is one package under ``jointlab/sim/``
(``pybullet/``, ``mujoco/``) that implements them and imports nothing from another engine;
this module finds it by name (``importlib``), so nothing engine-neutral imports an engine.

``"pybullet"`` is the default and always installed; ``"mujoco"`` comes with the ``mujoco``
extra (``pip install 'jointlab[mujoco]'``). Every place that takes an engine name
(``World(engine=...)``, ``SimRobot(engine=...)``, ``sim://NAME?engine=...``, the
environments' ``engine=``) checks it here, so a typo gets the same clear error everywhere.

What an engine implements (docs/architecture.md, "An engine"):

* :class:`Engine`: a world. ``attach_robot`` loads a description (refusing what the engine
  cannot represent, naming the engine, the joint and the reason), objects, ``step`` (one
  physics step of every robot), ``render`` (cameras), ``contacts``, markers, ``close``;
  optionally ``batch`` (several robots' worlds stepped by one call).
* :class:`EngineBody`: one description loaded in the world: ``read`` the joints, ``reset``,
  the randomisation hooks (``set_mass_scale``, ``set_damping``, ``tune``), brakes, link poses.
* :class:`EngineLoop`: the law stepped on that body (a :class:`jointlab.sim.law.DriveLoop`
  subclass): ``set_action`` (the actions of the robot), ``set_episode`` (friction, masses,
  latency, gains), ``run(steps)`` (N physics steps), and its state ``q``, ``qd``, ``tau``.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from jointlab.errors import ConfigurationError

if TYPE_CHECKING:
    from jointlab.interface import NJointAction
    from jointlab.robots.description import RobotDescription
    from jointlab.sim.randomization import EpisodeParameters

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "BatchStep",
    "Engine",
    "EngineBody",
    "EngineInfo",
    "EngineLoop",
    "World",
    "available_engines",
    "check_engine",
    "engine_package",
    "register_engine",
]


@dataclass(frozen=True)
class EngineInfo:
    """Where an engine lives and what installs it."""

    #: The engine's package; it defines ``World``, the engine's :class:`Engine` class.
    package: str
    #: The Python module the engine needs (tells whether it is installed).
    needs: str
    #: How to install it.
    install: str


_REGISTRY: dict[str, EngineInfo] = {
    "pybullet": EngineInfo("jointlab.sim.pybullet", "pybullet", "pip install jointlab"),
    "mujoco": EngineInfo("jointlab.sim.mujoco", "mujoco", "pip install 'jointlab[mujoco]'"),
}

#: The built-in engine names, the default first.
ENGINES = ("pybullet", "mujoco")
DEFAULT_ENGINE = "pybullet"


def register_engine(name: str, package: str, needs: str, install: str) -> None:
    """Make engine ``name`` (a package defining ``World``) choosable by name.

    A third engine is a folder: a package implementing the protocols of this module,
    registered here (the tests register a pure-numpy one this way).
    """
    _REGISTRY[str(name).lower()] = EngineInfo(package, needs, install)


def check_engine(engine: object) -> str:
    """Return ``engine`` as a known engine name (lower case), or raise.

    Raises:
        ConfigurationError: not a registered engine (with a "did you mean").
    """
    name = str(engine).strip().lower() if isinstance(engine, str) else None
    if name in _REGISTRY:
        return name
    known = list(_REGISTRY)
    hint = difflib.get_close_matches(str(engine).lower(), known, n=1)
    suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
    raise ConfigurationError(
        f"unknown physics engine {engine!r}; expected one of {known}{suggestion}"
    )


def available_engines() -> list[str]:
    """The registered engines whose Python module is installed."""
    return [n for n, info in _REGISTRY.items() if importlib.util.find_spec(info.needs)]


def engine_package(engine: object) -> ModuleType:
    """The package of engine ``engine`` (checked by :func:`check_engine`), imported.

    Raises:
        ConfigurationError: the engine's module is not installed: the message names what
            installs it and the engines that are available.
    """
    name = check_engine(engine)
    info = _REGISTRY[name]
    if importlib.util.find_spec(info.needs) is None:
        raise ConfigurationError(
            f"engine {name!r} needs the {info.needs} package, which is not installed; install "
            f"it with: {info.install} (engines available here: {available_engines()})"
        )
    return importlib.import_module(info.package)


class World:
    """A world of any engine: ``World(engine="mujoco")`` builds the MuJoCo one.

    Calling it returns the engine's :class:`Engine` (``jointlab.sim.pybullet.PybulletWorld``,
    ``jointlab.sim.mujoco.MujocoWorld``); every engine's world has the methods of
    :class:`jointlab.sim.scene.Scene` (its base: this module, below it, does not name it).

    Args:
        dt: Physics time step in seconds.
        gravity: Gravity vector in m/s², world frame.
        gui: Open the engine's GUI or viewer (needs a display).
        ground: Add a ground plane at z = 0.
        engine: An engine name (:data:`ENGINES`, or one registered with
            :func:`register_engine`).
    """

    def __new__(  # type: ignore[misc]
        cls,
        dt: float = 0.001,
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
        gui: bool = False,
        ground: bool = True,
        engine: str = DEFAULT_ENGINE,
    ) -> Engine:
        """The engine's world (see the class docstring)."""
        world: Engine = engine_package(engine).World(dt=dt, gravity=gravity, gui=gui, ground=ground)
        return world


# ==================================================================== the protocols
@runtime_checkable
class EngineBody(Protocol):
    """One description loaded into an engine's world (joint arrays in description order)."""

    description: RobotDescription
    #: The robot's handle in its world (as ``add_box`` returns for objects).
    body_id: int
    #: True when :meth:`frame_position` is cheaper than numpy kinematics of ``q``.
    cheap_kinematics: bool
    #: Coupling torques the law must add (an engine without exact couplings), or None.
    soft_coupling: Any

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions and velocities, ``(dof,)`` each (rad or m, rad/s or m/s)."""

    def reset(self, q: np.ndarray, qd: np.ndarray) -> None:
        """Put the joints at ``q``/``qd`` and the base back at its pose, at rest."""

    def set_mass_scale(self, scale: np.ndarray) -> None:
        """Randomisation: scale each link's nominal mass and inertia (base first)."""

    def set_damping(self, damping: np.ndarray) -> None:
        """Randomisation: viscous joint damping, ``(dof,)`` N·m·s/rad or N·s/m."""

    def tune(self, dt: float) -> np.ndarray:
        """Effective joint inertias at home, ``(dof,)`` (for friction's braking stiffness)."""

    def set_brakes(self, mask: np.ndarray, positions: np.ndarray) -> None:
        """Lock the joints in ``mask`` at ``positions``; release the others."""

    def link_index(self, name: str) -> Any:
        """The engine's reference of a link, a ``<leaf>_tool`` frame or ``"base"``."""

    def link_pose(self, name: str) -> np.ndarray:
        """World pose (4x4) of a link, tool frame or the base."""

    def frame_position(self, name: str) -> np.ndarray:
        """World position (m, ``(3,)``) of a frame at the current joints."""

    def remove(self) -> None:
        """Remove the robot from its world."""


@runtime_checkable
class EngineLoop(Protocol):
    """The NJointAction law stepped on one :class:`EngineBody` (a ``DriveLoop`` subclass).

    ``q``, ``qd`` (after the last physics step), ``qd_prev`` (before it), ``tau`` (actuator
    torque of the last step) and ``cmd`` are fresh arrays, never written in place.
    """

    body: EngineBody
    q: np.ndarray
    qd: np.ndarray
    qd_prev: np.ndarray
    tau: np.ndarray
    cmd: np.ndarray
    #: Queued external forces: ``[link reference, force, point or None, steps left]``.
    forces: list[list[Any]]
    #: The delay line of actuator latency, or None.
    delay: Any

    def set_action(self, action: NJointAction, active: np.ndarray) -> None:
        """Use ``action`` on the ``active`` joints from the next physics step on."""

    def set_episode(self, episode: EpisodeParameters) -> None:
        """Randomisation: one episode's masses, damping, friction, latency and gains."""

    def sync(self) -> None:
        """Re-read the state after a reset; forget queued commands."""

    def before_physics(self) -> None:
        """Send this physics step's torque (a world with several robots steps them)."""

    def after_physics(self) -> None:
        """Read the state a physics step produced."""

    def run(self, steps: int) -> None:
        """``steps`` physics steps of a robot alone in its world."""

    def current(self, tau: np.ndarray) -> np.ndarray:
        """Motor currents in A for actuator torque ``tau``."""


@runtime_checkable
class BatchStep(Protocol):
    """Several robots' worlds (one description) advanced by one call (``Engine.batch``)."""

    def ready(self) -> bool:
        """Whether the loops can be stepped together now (no delay line, pushes...)."""

    def step(self, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``steps`` physics steps of every robot.

        Returns:
            ``q``, ``qd`` (after the last step), ``tau`` and ``cmd`` (of the last step),
            ``(B, dof)`` each; every loop's ``q``, ``qd``, ``qd_prev``, ``tau`` and ``cmd``
            hold its rows, as after ``run(steps)``.
        """


@runtime_checkable
class Engine(Protocol):
    """A world of one engine (the methods users call are :class:`~jointlab.sim.scene.Scene`'s).

    An engine's world subclasses ``Scene``, which validates arguments and keeps the robots;
    the engine supplies the parts below.
    """

    #: The engine's name.
    engine: ClassVar[str]
    dt: float
    gravity: np.ndarray
    steps: int

    def _attach_robot(
        self, description: RobotDescription, dt: float
    ) -> tuple[EngineBody, EngineLoop]:
        """Load ``description``; refuse what the engine cannot represent (engine, joint, why)."""

    def _physics_step(self) -> None:
        """One physics step of the whole world."""

    def _render(self, width: int, height: int, camera: Any) -> np.ndarray:
        """An RGB image, ``(height, width, 3)`` uint8, seen by a ``scene.Camera``."""

    def _contacts(self, body_id: int) -> list[tuple[int, np.ndarray, float]]:
        """Contacts of a body: ``(other body, world point (3,) m, normal force N)``."""

    def batch(self, loops: Sequence[EngineLoop]) -> BatchStep | None:
        """A batched step of ``loops`` (each alone in its own world of this engine), or None."""

    def close(self) -> None:
        """Release the engine."""
