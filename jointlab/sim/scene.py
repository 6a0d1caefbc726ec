"""What every engine's world offers, engine-neutral: argument checks, stepping, lifetime.

:class:`Scene` is the base of every engine's world
(:class:`jointlab.sim.pybullet.PybulletWorld`, :class:`jointlab.sim.mujoco.MujocoWorld`;
``jointlab.sim.World(engine=...)`` makes one). Its public methods validate their arguments
(so both engines refuse the same bad input with the same message) and hand clean values to
the engine's ``_add_box``, ``_add_sphere``, ``_add_urdf``, ``_physics_step``, ``_render``
and ``_contacts``.
Bodies are named by integer ids (PyBullet body ids; MuJoCo world handles).

Both engines keep a fixed base off the ground plane the same way (:func:`mounted_elements`).
"""

from __future__ import annotations

import abc
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from jointlab.errors import ConfigurationError, SimulationError, quote
from jointlab.robots.description import BASE

if TYPE_CHECKING:
    from jointlab.robots.description import RobotDescription
    from jointlab.sim.engine import BatchStep, EngineBody, EngineLoop

__all__ = [
    "CONTACT_FRICTION",
    "DEFAULT_RGBA",
    "Attached",
    "Camera",
    "Contact",
    "Scene",
    "combined_friction",
    "link_friction",
    "link_torsional_friction",
    "mounted_elements",
    "vector",
]

#: Default RGBA colour of objects added without one.
DEFAULT_RGBA = (0.8, 0.5, 0.2, 1.0)

#: Default sliding friction coefficient of a body: robot links (``link.friction``), the base
#: (``base.friction``), objects (``add_box(..., friction=)``) and the ground, which keeps it.
#: Bullet's own defaults differ (a body 0.5: a pushed box slid 2.3 m on PyBullet where it slid
#: 0.5 m on MuJoCo), so both engines are given every body's coefficient explicitly.
CONTACT_FRICTION = 1.0


def combined_friction(first: float, second: float) -> float:
    """The sliding friction coefficient between two bodies: the product of theirs.

    The one combination rule of every engine (Bullet's own; the MuJoCo adapter realises it
    with contact priorities and, where both bodies have coefficients other than 1, explicit
    contact pairs). The ground's coefficient is :data:`CONTACT_FRICTION` (1), so a body on the
    ground slides with its own coefficient.
    """
    return float(first) * float(second)


def link_torsional_friction(description: RobotDescription) -> list[float]:
    """Declared torsional friction (m) of the base (0) and then each element's link."""
    return [0.0] + [
        spec.link.torsional_friction if spec.link is not None else 0.0
        for spec in description.actuators
    ]


def link_friction(description: RobotDescription) -> list[float]:
    """Declared sliding friction of the base and then each element's link, in file order."""
    return [description.base.friction] + [
        spec.link.friction if spec.link is not None else CONTACT_FRICTION
        for spec in description.actuators
    ]


@dataclass(frozen=True)
class Camera:
    """A look-at camera for ``World.render`` (PyBullet's yaw/pitch/distance form)."""

    #: Point looked at, world frame, metres.
    target: tuple[float, float, float] = (0.0, 0.0, 0.3)
    #: Distance from the target, metres.
    distance: float = 1.6
    #: Yaw about the world z axis, degrees.
    yaw: float = 45.0
    #: Pitch, degrees (negative looks down).
    pitch: float = -30.0
    #: Vertical field of view, degrees.
    fov: float = 60.0
    #: Near and far clipping planes, metres.
    near: float = 0.01
    far: float = 20.0


@dataclass(frozen=True)
class Contact:
    """One contact point of a body with another (``Scene.contacts``)."""

    #: The other body's id (the ground plane's ``ground_id``, an object or a robot).
    other: int
    #: Contact point, world frame, metres, shape ``(3,)``.
    position: np.ndarray
    #: Normal force, N (>= 0).
    normal_force: float


@dataclass(eq=False)
class Attached:
    """A robot in a world, as the world sees it: the engine's body and loop.

    ``closing`` is called when the world closes (the robot then refuses further use).
    """

    body: EngineBody
    loop: EngineLoop
    closing: Callable[[], None]


def vector(name: str, value: Sequence[float], size: int = 3) -> tuple[float, ...]:
    """``value`` as ``size`` finite floats, or a ConfigurationError naming ``name``."""
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    if array.shape != (size,) or not np.all(np.isfinite(array)):
        raise ConfigurationError(f"{name} must be {size} finite numbers, got {value!r}")
    return tuple(float(v) for v in array)


def _positive(name: str, value: object) -> float | None:
    """``value`` as a finite float > 0 (None stays None), or a ConfigurationError naming it."""
    if value is None:
        return None
    number = float("nan")
    if not isinstance(value, (str, bytes)):
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    if not (np.isfinite(number) and number > 0):
        raise ConfigurationError(
            f"set_object_dynamics {name} must be a finite number > 0, got {quote(value)}"
        )
    return number


def mounted_elements(description: RobotDescription) -> list[str]:
    """Elements of a fixed-base robot that do not collide with the ground plane.

    A fixed base is bolted to the world: where it meets the floor is a mounting, not a
    contact. The elements rigidly fixed to the base, and each moving element whose joint
    sits at the base origin (only zero-length fixed elements between them), turn about or
    slide along the mounting point itself, so their geometry around it always overlaps a
    floor the base stands on: a contact there is an artefact of the model (arm6's first link
    dips a capsule radius into the floor) that costs the solver constraints every step. Both
    engines filter the ground against the base and these elements and nothing else: the rest
    of the robot, and every object (boxes, spheres, URDFs), still collides as before.

    Returns:
        Element names in description order; empty for a floating base.
    """
    if not description.base.fixed:
        return []
    specs = {spec.name: spec for spec in description.actuators}
    mounted = []
    for spec in description.actuators:
        parent = spec.parent
        at_origin = True  # the element's frame is the base frame, rotated at most
        while parent != BASE and not specs[parent].is_joint:
            at_origin = at_origin and specs[parent].length == 0.0
            parent = specs[parent].parent
        if parent == BASE and (at_origin or not spec.is_joint):
            mounted.append(spec.name)
    return mounted


def check_dt(dt: float) -> float:
    """A physics step in seconds, or a ConfigurationError."""
    dt = float(dt)
    if not np.isfinite(dt) or dt <= 0:
        raise ConfigurationError(f"World dt must be a positive number of seconds, got {dt!r}")
    return dt


class Scene(abc.ABC):
    """One engine's world: gravity, an optional ground plane, objects, robots, a camera."""

    #: The physics engine of this world.
    engine: ClassVar[str]
    #: Physics step in seconds.
    dt: float
    #: True when the engine's GUI is open.
    gui: bool
    #: Physics steps taken since the world was created.
    steps: int
    #: Gravity in m/s², world frame, shape ``(3,)``.
    gravity: np.ndarray
    _robots: list[Attached]
    _closed: bool

    # ---------------------------------------------------------------- objects
    def _check_open(self) -> None:
        if self._closed:
            raise SimulationError("this World is closed")

    def add_box(
        self,
        half_extents: Sequence[float],
        position: Sequence[float],
        orientation: Sequence[float] = (0.0, 0.0, 0.0),
        mass: float = 0.0,
        rgba: Sequence[float] | None = None,
        friction: float = CONTACT_FRICTION,
    ) -> int:
        """Add a box; ``mass`` 0 makes it static. Returns its body id.

        Args:
            half_extents: Half sizes along x, y, z in metres, shape ``(3,)``.
            position: Centre position, world frame, metres.
            orientation: Roll, pitch, yaw in radians.
            mass: Mass in kg (0 for a static box).
            rgba: Colour, four numbers in [0, 1].
            friction: Sliding friction coefficient (> 0); against another body the product
                of both (:func:`combined_friction`).
        """
        self._check_open()
        half = vector("add_box half_extents", half_extents)
        if min(half) <= 0:
            raise ConfigurationError(f"add_box half_extents must be > 0, got {half_extents!r}")
        coefficient = _positive("friction", friction)
        body = self._add_box(
            half,
            vector("position", position),
            vector("orientation", orientation),
            self._mass(mass),
            self._rgba(rgba),
        )
        if coefficient != CONTACT_FRICTION:
            self._set_object_dynamics(body, None, coefficient)
        return body

    def add_sphere(
        self,
        radius: float,
        position: Sequence[float],
        mass: float = 0.0,
        rgba: Sequence[float] | None = None,
        friction: float = CONTACT_FRICTION,
    ) -> int:
        """Add a sphere of ``radius`` metres at ``position``; ``mass`` 0 makes it static.

        ``friction`` is its sliding friction coefficient, as for :meth:`add_box`.
        """
        self._check_open()
        if not np.isfinite(radius) or radius <= 0:
            raise ConfigurationError(f"add_sphere radius must be > 0 metres, got {radius!r}")
        coefficient = _positive("friction", friction)
        body = self._add_sphere(
            float(radius), vector("position", position), self._mass(mass), self._rgba(rgba)
        )
        if coefficient != CONTACT_FRICTION:
            self._set_object_dynamics(body, None, coefficient)
        return body

    def add_urdf(
        self,
        path: str | os.PathLike[str],
        position: Sequence[float],
        orientation: Sequence[float] = (0.0, 0.0, 0.0),
        fixed: bool = True,
    ) -> int:
        """Load a URDF file (absolute, relative, or relative to the engine's model folders).

        Both engines look in ``pybullet_data`` (``"table/table.urdf"``): see
        :meth:`_model_folders`. Returns its body id.
        """
        self._check_open()
        text = os.fspath(path)
        folders = self._model_folders()
        candidates = [text, *(os.path.join(folder, text) for folder in folders)]
        found = next((c for c in candidates if os.path.isfile(c)), None)
        if found is None:
            where = f" (also looked in {', '.join(folders)})" if folders else ""
            raise SimulationError(f"{text}: URDF file not found{where}")
        return self._add_urdf(
            found,
            vector("add_urdf position", position),
            vector("add_urdf orientation", orientation),
            bool(fixed),
        )

    def set_object_dynamics(
        self, body_id: int, *, mass: float | None = None, friction: float | None = None
    ) -> None:
        """Change the mass and sliding friction of an object added to this world.

        Against another body the object slides with the product of both coefficients
        (:func:`combined_friction`), on both engines: with the ground (1), with robot links
        (``link.friction``, 1 by default) and with other objects. Inertia scales with the mass
        (same shape, uniform density).

        Args:
            body_id: An object from ``add_box``/``add_sphere`` with a mass > 0.
            mass: New mass in kg (> 0), or None to keep it.
            friction: New sliding friction coefficient (> 0), or None to keep it.

        Raises:
            ConfigurationError: a mass or friction that is not a finite number > 0 (named).
            SimulationError: no such object, a static one, or a robot.
        """
        self._check_open()
        mass_kg, coefficient = _positive("mass", mass), _positive("friction", friction)
        if self._is_robot(body_id):
            raise SimulationError(f"body {body_id} is a SimRobot, not an object")
        self._set_object_dynamics(int(body_id), mass_kg, coefficient)

    @abc.abstractmethod
    def _set_object_dynamics(
        self, body_id: int, mass: float | None, friction: float | None
    ) -> None:
        """Engine part of :meth:`set_object_dynamics` (arguments checked)."""

    @staticmethod
    def _mass(mass: float) -> float:
        if not np.isfinite(mass) or mass < 0:
            raise ConfigurationError(f"object mass must be >= 0 kg, got {mass!r}")
        return float(mass)

    @staticmethod
    def _rgba(rgba: Sequence[float] | None) -> tuple[float, ...]:
        return DEFAULT_RGBA if rgba is None else vector("rgba", rgba, 4)

    @abc.abstractmethod
    def _add_box(
        self,
        half: tuple[float, ...],
        position: tuple[float, ...],
        orientation: tuple[float, ...],
        mass: float,
        rgba: tuple[float, ...],
    ) -> int:
        """Engine part of :meth:`add_box` (arguments checked)."""

    @abc.abstractmethod
    def _add_sphere(
        self, radius: float, position: tuple[float, ...], mass: float, rgba: tuple[float, ...]
    ) -> int:
        """Engine part of :meth:`add_sphere` (arguments checked)."""

    def _model_folders(self) -> tuple[str, ...]:
        """Folders a relative :meth:`add_urdf` path is also looked up in (the engine's models).

        Data-path lookups belong to the engine package; this engine-neutral base has none.
        """
        return ()

    @abc.abstractmethod
    def _add_urdf(
        self, path: str, position: tuple[float, ...], orientation: tuple[float, ...], fixed: bool
    ) -> int:
        """Engine part of :meth:`add_urdf` (an existing file, checked pose)."""

    def dynamics_evaluator(self) -> Callable[[RobotDescription, Any], Any] | None:
        """This engine's exact evaluator of a description's rigid-body model, or None.

        ``evaluator(description, gravity)`` gives an object with the dynamics methods of
        :class:`jointlab.robots.dynamics.DynamicsModel` (or None where it cannot); a
        :class:`~jointlab.sim.SimRobot` offers it through ``dynamics_model()``, checked
        against the numpy model. None here: the engine offers none.
        """
        return None

    @abc.abstractmethod
    def remove(self, body_id: int) -> None:
        """Remove a body added to this world."""

    @property
    @abc.abstractmethod
    def num_bodies(self) -> int:
        """Number of bodies in the world (ground, robots and objects)."""

    @abc.abstractmethod
    def body_pose(self, body_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Base position (m, shape ``(3,)``) and roll-pitch-yaw (rad, shape ``(3,)``) of a body."""

    @abc.abstractmethod
    def body_velocity(self, body_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Base linear (m/s) and angular (rad/s) velocity of a body, world frame, ``(3,)`` each."""

    @abc.abstractmethod
    def reset_body(
        self,
        body_id: int,
        position: Sequence[float],
        orientation: Sequence[float] = (0.0, 0.0, 0.0),
    ) -> None:
        """Move a body's base to ``position`` (m) and ``orientation`` (rpy, rad), at rest."""

    def contacts(self, body_id: int) -> list[Contact]:
        """The contact points of a body (robot or object) after the last physics step.

        Returns:
            One :class:`Contact` per point, in the engine's order.
        """
        self._check_open()
        return [
            Contact(int(other), np.asarray(point, dtype=np.float64), float(force))
            for other, point, force in self._contacts(int(body_id))
        ]

    @abc.abstractmethod
    def _contacts(self, body_id: int) -> list[tuple[int, Any, float]]:
        """Engine part of :meth:`contacts`: ``(other body, point, normal force)`` each."""

    # ---------------------------------------------------------------- robots
    @abc.abstractmethod
    def _attach_robot(
        self, description: RobotDescription, dt: float
    ) -> tuple[EngineBody, EngineLoop]:
        """Load ``description``; the engine's body and loop (see ``jointlab.sim.engine``)."""

    def attach_robot(
        self, description: RobotDescription, dt: float, closing: Callable[[], None]
    ) -> Attached:
        """Load ``description`` into this world and step its law with the world.

        Args:
            description: The robot.
            dt: Physics step, seconds (the world's).
            closing: Called when the world closes.

        Returns:
            The engine's body and loop of the robot (``SimRobot`` drives them).
        """
        self._check_open()
        body, loop = self._attach_robot(description, dt)
        attached = Attached(body, loop, closing)
        self._robots.append(attached)
        return attached

    def detach_robot(self, attached: Attached) -> None:
        """Remove a robot from the world (nothing happens when it is gone already)."""
        if attached in self._robots:
            self._robots.remove(attached)
            if not self._closed:
                attached.body.remove()

    @property
    def robot_count(self) -> int:
        """Number of robots in the world."""
        return len(self._robots)

    def _is_robot(self, body_id: int) -> bool:
        return any(a.body.body_id == body_id for a in self._robots)

    def batch(self, loops: Sequence[EngineLoop]) -> BatchStep | None:
        """A batched step of ``loops``, each alone in its own world of this engine.

        None when the engine has none, or cannot batch these loops (``BatchStepper`` then
        steps the robots one by one: the same result, without the saving).
        """
        return None

    # ---------------------------------------------------------------- stepping
    def step(self) -> None:
        """Advance one physics step of ``dt`` seconds, running every robot's torque loop."""
        self._check_open()
        robots = self._robots
        for robot in robots:
            robot.loop.before_physics()
        self._physics_step()
        self.steps += 1
        for robot in robots:
            robot.loop.after_physics()

    @abc.abstractmethod
    def _physics_step(self) -> None:
        """One physics step of the engine."""

    @property
    def time(self) -> float:
        """Simulated seconds since the world was created (``steps * dt``)."""
        return self.steps * self.dt

    # ---------------------------------------------------------------- rendering
    def render(
        self, width: int = 320, height: int = 240, camera: Camera | None = None
    ) -> np.ndarray:
        """Render an RGB image headless (PyBullet's TinyRenderer, MuJoCo's offscreen renderer).

        Returns:
            Pixels, shape ``(height, width, 3)``, dtype ``uint8``.
        """
        self._check_open()
        if int(width) <= 0 or int(height) <= 0:
            raise ConfigurationError(f"render size must be positive, got {width}x{height}")
        return self._render(int(width), int(height), camera or Camera())

    @abc.abstractmethod
    def _render(self, width: int, height: int, camera: Camera) -> np.ndarray:
        """Engine part of :meth:`render` (checked size)."""

    # ---------------------------------------------------------------- lifetime
    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    @abc.abstractmethod
    def close(self) -> None:
        """Release the engine and close every robot in the world; safe to call twice."""

    def _close_robots(self) -> bool:
        """Close every robot (the world is going); False when already closed."""
        if self._closed:
            return False
        for robot in list(self._robots):
            robot.closing()
        self._robots.clear()
        self._closed = True
        return True

    def __enter__(self) -> Scene:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
