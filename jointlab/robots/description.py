"""The robot description model.

Per-actuator geometry (Player actarray) plus limits, dynamics, inertials, motors, gains and
couplings (Intrinsic kinematics).

Values are frozen dataclasses holding plain floats and tuples, so two descriptions compare
equal exactly when their files would. Joint-space vectors (``description.upper`` ...) are
derived on demand as float64 arrays of length ``dof`` in actuator order.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from jointlab.errors import DescriptionError
from jointlab.robots.bus import BusSpec
from jointlab.robots.transmission import Transmission, TransmissionArray

Vector3 = tuple[float, float, float]
Matrix3 = tuple[Vector3, Vector3, Vector3]

BASE = "base"


class JointType(str, enum.Enum):
    """Element types of a robot file (Intrinsic REVOLUTE / PRISMATIC / FIXED)."""

    ROTARY = "rotary"
    LINEAR = "linear"
    FIXED = "fixed"

    @property
    def player_code(self) -> int:
        """Player actarray type code: LINEAR=1, ROTARY=2 (0 for fixed elements)."""
        return {"linear": 1, "rotary": 2, "fixed": 0}[self.value]


class MotorModel(str, enum.Enum):
    """Actuator models the simulator offers."""

    IDEAL = "ideal"
    DC_MOTOR = "dc_motor"


@dataclass(frozen=True)
class Base:
    """Pose of the base frame in the world, and whether it is fixed there."""

    #: Base position in the world frame, metres.
    position: Vector3 = (0.0, 0.0, 0.0)
    #: Base orientation as roll, pitch, yaw in radians (``Rz(y)·Ry(p)·Rx(r)``).
    orientation: Vector3 = (0.0, 0.0, 0.0)
    #: False for a floating base (a mobile robot); True bolts the base to the world.
    fixed: bool = True
    #: Mass of the base body in kg (matters only for a floating base).
    mass: float = 1.0
    #: Radius of the base body's cylinder in metres (its height is the radius).
    radius: float = 0.05
    #: Sliding friction coefficient of the base body's contacts (see ``LinkInertial.friction``).
    friction: float = 1.0


@dataclass(frozen=True)
class Limits:
    """System limits of one joint (symmetric; Intrinsic ``Limits``)."""

    #: Maximum speed in rad/s or m/s.
    velocity: float = 2.0
    #: Maximum acceleration in rad/s² or m/s².
    acceleration: float = 10.0
    #: Maximum jerk in rad/s³ or m/s³.
    jerk: float = 100.0
    #: Maximum effort in N·m (rotary) or N (linear).
    effort: float = 10.0


@dataclass(frozen=True)
class SoftLimits:
    """Soft limits inside the system limits; ``None`` means "the system limit"."""

    min: float | None = None
    max: float | None = None
    velocity: float | None = None
    acceleration: float | None = None
    jerk: float | None = None
    effort: float | None = None


@dataclass(frozen=True)
class Dynamics:
    """Joint friction (Intrinsic ``Joint.Parameters.Dynamics``) and reflected rotor inertia."""

    #: Coulomb (static) friction torque in N·m (N for linear joints).
    static_friction: float = 0.0
    #: Viscous damping in N·m·s/rad (N·s/m).
    damping: float = 0.0
    #: Reflected rotor inertia (armature): joint-side inertia added to this joint's own degree
    #: of freedom, kg·m² (rotary) or kg (linear). A robot file without it gets
    #: ``motor.rotor_inertia * motor.gear_ratio**2`` or the size-class default
    #: (:func:`jointlab.robots.defaults.default_armature`).
    armature: float = 0.0


@dataclass(frozen=True)
class LinkInertial:
    """Mass properties of the link an actuator moves, in its moving frame ``F_i·M_i(q_i)``."""

    #: Mass in kg.
    mass: float
    #: Capsule radius in metres (visual and collision shape).
    radius: float
    #: Centre of gravity in the moving frame, metres.
    center_of_gravity: Vector3
    #: Inertia tensor about the centre of gravity, moving-frame axes, kg·m².
    inertia: Matrix3
    #: Sliding friction coefficient of the link's contacts (dimensionless, > 0). Two bodies
    #: in contact slide against each other with the **product** of their coefficients, on
    #: every engine; the ground's is 1 (docs/simulation.md, "Contact friction").
    friction: float = 1.0
    #: Torsional friction of the link's contacts, metres (>= 0): the largest twisting torque
    #: about a contact's normal is this times the normal force, as a soft finger pad resists
    #: turning (Bullet's ``spinningFriction``, MuJoCo's ``condim`` 4). 0 (the default) for
    #: everything but gripper jaws, which hold a cube by one or two points per jaw.
    torsional_friction: float = 0.0


@dataclass(frozen=True)
class Motor:
    """Motor and gearbox of an actuator, used by the simulator's actuator models."""

    #: ``ideal`` (torque as commanded, clamped) or ``dc_motor`` (torque-speed curve).
    model: MotorModel = MotorModel.IDEAL
    #: Motor torque constant in N·m/A (motor side).
    torque_constant: float = 0.1
    #: Gear ratio (motor turns per joint turn), >= 1 typically.
    gear_ratio: float = 1.0
    #: Maximum motor current in A.
    max_current: float = 100.0
    #: Motor stall torque in N·m (motor side); ``dc_motor`` only. Default: unlimited.
    stall_torque: float | None = None
    #: Motor no-load speed in rad/s (motor side); ``dc_motor`` only. Default: unlimited.
    no_load_speed: float | None = None
    #: Command latency in physics steps.
    delay: int = 0
    #: Rotor inertia at the motor shaft in kg·m² (sets ``dynamics.armature`` when that is
    #: absent: ``rotor_inertia * gear_ratio**2``). ``None``: not given.
    rotor_inertia: float | None = None


@dataclass(frozen=True)
class Gains:
    """Default PD gains, used where an action's gain is NaN."""

    #: P gain in N·m/rad (N/m).
    kp: float
    #: D gain in N·m·s/rad (N·s/m).
    kd: float


@dataclass(frozen=True)
class Coupling:
    """Intrinsic ``LinearDependency``: ``q = alpha_self*q_self + sum(alpha*q_leading)``.

    A dependent joint has no motor input of its own: its own input ``q_self`` stays at the
    joint's ``home`` value, so ``q = alpha_self*home + sum(alpha_leading[j]*q_j)``.
    """

    alpha_self: float = 1.0
    #: Leading actuator name -> alpha. Leading joints must not be dependent themselves.
    alpha_leading: tuple[tuple[str, float], ...] = ()

    @property
    def leading(self) -> dict[str, float]:
        """``alpha_leading`` as a dict."""
        return dict(self.alpha_leading)


@dataclass(frozen=True)
class ActuatorSpec:
    """One element of the array: a rotary or linear actuator, or a fixed element.

    The geometry (docs/robot-files.md): ``F_end = F_i · M_i(q) · RPY(orientation) · T(length·x̂)``.
    """

    name: str
    type: JointType
    #: Joint axis in the actuator frame ``F_i`` (unit vector).
    axis: Vector3 = (0.0, 0.0, 1.0)
    #: Link length to the next actuator in metres (for linear actuators: at position 0).
    length: float = 0.0
    #: Rest orientation of the link (roll, pitch, yaw in radians).
    orientation: Vector3 = (0.0, 0.0, 0.0)
    min: float = 0.0
    centre: float = 0.0
    max: float = 0.0
    home: float = 0.0
    #: Configured speed in rad/s or m/s (Player REQ SPEED default).
    config_speed: float = 0.0
    has_brakes: bool = False
    #: Parent actuator name, or ``"base"`` for the first actuator of a chain.
    parent: str = BASE
    limits: Limits = field(default_factory=Limits)
    soft_limits: SoftLimits = field(default_factory=SoftLimits)
    dynamics: Dynamics = field(default_factory=Dynamics)
    link: LinkInertial | None = None
    motor: Motor = field(default_factory=Motor)
    gains: Gains | None = None
    coupling: Coupling | None = None
    #: Motor space ↔ joint space of a servo-driven joint; None where none is given.
    transmission: Transmission | None = None

    @property
    def is_joint(self) -> bool:
        """True for rotary and linear actuators (elements with a joint value)."""
        return self.type is not JointType.FIXED


@dataclass(frozen=True)
class ActuatorGeometry:
    """Player ``player_actarray_actuatorgeom_t`` for one actuator."""

    type: int
    length: float
    orientation: Vector3
    axis: Vector3
    min: float
    centre: float
    max: float
    home: float
    config_speed: float
    has_brakes: bool


@dataclass(frozen=True)
class ArrayGeometry:
    """Player ``player_actarray_geom_t``: per-actuator geometry and the base pose."""

    actuators: tuple[ActuatorGeometry, ...]
    base_pos: Vector3
    base_orientation: Vector3


@dataclass(frozen=True)
class JointLimits:
    """Intrinsic ``JointLimits``: one value per joint, arrays of shape ``(dof,)``."""

    min_position: np.ndarray
    max_position: np.ndarray
    max_velocity: np.ndarray
    max_acceleration: np.ndarray
    max_jerk: np.ndarray
    max_effort: np.ndarray


@dataclass(frozen=True)
class JointLimitsUpdate:
    """Intrinsic ``JointLimitsUpdate``: a partial override of a robot's limits.

    A field that is ``None`` or empty leaves the limit unchanged; a given field has exactly
    ``dof`` values, each inside the robot's current (system) limits.
    """

    min_position: Sequence[float] | None = None
    max_position: Sequence[float] | None = None
    max_velocity: Sequence[float] | None = None
    max_acceleration: Sequence[float] | None = None
    max_jerk: Sequence[float] | None = None
    max_effort: Sequence[float] | None = None


@dataclass(frozen=True, eq=False)
class RobotDescription:
    """A robot: a base and a tree of actuators. Build with :func:`jointlab.load_robot`."""

    name: str
    base: Base
    #: Every element (actuators and fixed elements) in file order.
    actuators: tuple[ActuatorSpec, ...]
    #: Where the description was read from (not part of equality).
    source: str | None = None
    #: The servo bus the joints are wired to (a ``bus`` section), or None.
    bus: BusSpec | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RobotDescription):
            return NotImplemented
        return (self.name, self.base, self.actuators, self.bus) == (
            other.name,
            other.base,
            other.actuators,
            other.bus,
        )

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        # Frozen, so computed once: forward_kinematics keys its cached plan on it per call.
        return hash((self.name, self.base, self.actuators, self.bus))

    # ------------------------------------------------------------ structure
    @cached_property
    def joints(self) -> tuple[ActuatorSpec, ...]:
        """Movable actuators in joint-space order (length ``dof``)."""
        return tuple(a for a in self.actuators if a.is_joint)

    @property
    def dof(self) -> int:
        """Number of joints (rotary plus linear actuators, dependent ones included)."""
        return len(self.joints)

    @cached_property
    def joint_names(self) -> tuple[str, ...]:
        """Joint names in joint-space order."""
        return tuple(a.name for a in self.joints)

    @cached_property
    def element_names(self) -> tuple[str, ...]:
        """Every element's name in file order."""
        return tuple(a.name for a in self.actuators)

    def actuator(self, name: str) -> ActuatorSpec:
        """Return the element called ``name``."""
        for spec in self.actuators:
            if spec.name == name:
                return spec
        raise DescriptionError(
            f"robot {self.name!r} has no actuator {name!r}; known: {list(self.element_names)}"
        )

    def joint_index(self, joint: int | str) -> int:
        """Joint-space index of ``joint`` given by index or name."""
        if isinstance(joint, (int, np.integer)) and not isinstance(joint, bool):
            if not 0 <= int(joint) < self.dof:
                raise DescriptionError(
                    f"joint index {joint} out of range for robot {self.name!r} "
                    f"with {self.dof} joints"
                )
            return int(joint)
        if isinstance(joint, str) and joint in self.joint_names:
            return self.joint_names.index(joint)
        raise DescriptionError(
            f"robot {self.name!r} has no joint {joint!r}; joints: {list(self.joint_names)}"
        )

    @cached_property
    def children(self) -> dict[str, tuple[str, ...]]:
        """Parent name (or ``"base"``) -> names of its child elements."""
        result: dict[str, list[str]] = {BASE: []}
        for spec in self.actuators:
            result.setdefault(spec.name, [])
            result.setdefault(spec.parent, []).append(spec.name)
        return {k: tuple(v) for k, v in result.items()}

    @cached_property
    def tool_names(self) -> tuple[str, ...]:
        """Names of the chains' tool frames: ``<last actuator>_tool`` for each leaf."""
        return tuple(f"{a.name}_tool" for a in self.actuators if not self.children[a.name])

    # ------------------------------------------------------------ vectors
    def _vector(self, getter: Any) -> np.ndarray:
        array = np.array([getter(a) for a in self.joints], dtype=np.float64)
        array.setflags(write=False)
        return array

    @cached_property
    def lower(self) -> np.ndarray:
        """System lower position limits, rad or m, shape ``(dof,)``."""
        return self._vector(lambda a: a.min)

    @cached_property
    def upper(self) -> np.ndarray:
        """System upper position limits, rad or m, shape ``(dof,)``."""
        return self._vector(lambda a: a.max)

    @cached_property
    def centre(self) -> np.ndarray:
        """Centre positions, shape ``(dof,)``."""
        return self._vector(lambda a: a.centre)

    @cached_property
    def home(self) -> np.ndarray:
        """Home positions, shape ``(dof,)``."""
        return self._vector(lambda a: a.home)

    @cached_property
    def velocity_limit(self) -> np.ndarray:
        """Velocity limits, rad/s or m/s, shape ``(dof,)``."""
        return self._vector(lambda a: a.limits.velocity)

    @cached_property
    def acceleration_limit(self) -> np.ndarray:
        """Acceleration limits, rad/s² or m/s², shape ``(dof,)``."""
        return self._vector(lambda a: a.limits.acceleration)

    @cached_property
    def jerk_limit(self) -> np.ndarray:
        """Jerk limits, rad/s³ or m/s³, shape ``(dof,)``."""
        return self._vector(lambda a: a.limits.jerk)

    @cached_property
    def effort_limit(self) -> np.ndarray:
        """Effort limits, N·m or N, shape ``(dof,)``."""
        return self._vector(lambda a: a.limits.effort)

    @cached_property
    def soft_lower(self) -> np.ndarray:
        """Soft lower position limits (system limit where unset), shape ``(dof,)``."""
        return self._vector(lambda a: a.min if a.soft_limits.min is None else a.soft_limits.min)

    @cached_property
    def soft_upper(self) -> np.ndarray:
        """Soft upper position limits (system limit where unset), shape ``(dof,)``."""
        return self._vector(lambda a: a.max if a.soft_limits.max is None else a.soft_limits.max)

    def _soft(self, key: str) -> np.ndarray:
        return self._vector(
            lambda a: (
                getattr(a.limits, key)
                if getattr(a.soft_limits, key) is None
                else getattr(a.soft_limits, key)
            )
        )

    @cached_property
    def soft_velocity_limit(self) -> np.ndarray:
        """Soft velocity limits, shape ``(dof,)``."""
        return self._soft("velocity")

    @cached_property
    def soft_acceleration_limit(self) -> np.ndarray:
        """Soft acceleration limits, shape ``(dof,)``."""
        return self._soft("acceleration")

    @cached_property
    def soft_jerk_limit(self) -> np.ndarray:
        """Soft jerk limits, shape ``(dof,)``."""
        return self._soft("jerk")

    @cached_property
    def soft_effort_limit(self) -> np.ndarray:
        """Soft effort limits, shape ``(dof,)``."""
        return self._soft("effort")

    @cached_property
    def config_speed(self) -> np.ndarray:
        """Configured speeds (Player REQ SPEED defaults), shape ``(dof,)``."""
        return self._vector(lambda a: a.config_speed)

    @cached_property
    def default_kp(self) -> np.ndarray:
        """Default P gains, shape ``(dof,)``."""
        return self._vector(lambda a: a.gains.kp if a.gains else 0.0)

    @cached_property
    def default_kd(self) -> np.ndarray:
        """Default D gains, shape ``(dof,)``."""
        return self._vector(lambda a: a.gains.kd if a.gains else 0.0)

    @cached_property
    def damping(self) -> np.ndarray:
        """Viscous damping, N·m·s/rad or N·s/m, shape ``(dof,)``."""
        return self._vector(lambda a: a.dynamics.damping)

    @cached_property
    def armature(self) -> np.ndarray:
        """Reflected rotor inertia, kg·m² (rotary) or kg (linear), shape ``(dof,)``."""
        return self._vector(lambda a: a.dynamics.armature)

    @cached_property
    def static_friction(self) -> np.ndarray:
        """Coulomb friction, N·m or N, shape ``(dof,)``."""
        return self._vector(lambda a: a.dynamics.static_friction)

    @cached_property
    def transmissions(self) -> TransmissionArray:
        """Motor space ↔ joint space of every joint (the identity-like default where absent).

        A joint without a ``transmission`` gets ``Transmission()``: reduction 1, offset 0,
        direction +1, 4096 ticks per revolution.
        """
        return TransmissionArray.from_transmissions(
            [a.transmission or Transmission() for a in self.joints]
        )

    @cached_property
    def position_resolution(self) -> np.ndarray:
        """Position step each joint's sensor reports, shape ``(dof,)``, rad or m.

        One encoder tick through the transmission for a robot with a ``bus`` section (its
        servos report whole ticks: 1.5 mrad on a 4096-tick servo); 0 (exact) otherwise.
        """
        if self.bus is None:
            resolution = np.zeros(self.dof)
        else:
            resolution = 1.0 / np.abs(self.transmissions.scale)
        resolution.setflags(write=False)
        return resolution

    @cached_property
    def has_brakes(self) -> np.ndarray:
        """Boolean mask of joints with brakes, shape ``(dof,)``."""
        mask = np.array([a.has_brakes for a in self.joints], dtype=bool)
        mask.setflags(write=False)
        return mask

    @cached_property
    def is_linear(self) -> np.ndarray:
        """Boolean mask of linear joints, shape ``(dof,)``."""
        mask = np.array([a.type is JointType.LINEAR for a in self.joints], dtype=bool)
        mask.setflags(write=False)
        return mask

    @cached_property
    def dependent(self) -> np.ndarray:
        """Boolean mask of dependent (coupled) joints, shape ``(dof,)``."""
        mask = np.array([a.coupling is not None for a in self.joints], dtype=bool)
        mask.setflags(write=False)
        return mask

    @cached_property
    def coupling_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """``(A, b)`` with ``q_dependent = A @ q + b`` for the dependent rows (others zero).

        ``A`` has shape ``(dof, dof)`` and ``b`` shape ``(dof,)``; rows of independent joints
        are zero.
        """
        matrix = np.zeros((self.dof, self.dof))
        offset = np.zeros(self.dof)
        for i, spec in enumerate(self.joints):
            if spec.coupling is None:
                continue
            offset[i] = spec.coupling.alpha_self * spec.home
            for lead, alpha in spec.coupling.alpha_leading:
                matrix[i, self.joint_names.index(lead)] = alpha
        matrix.setflags(write=False)
        offset.setflags(write=False)
        return matrix, offset

    def apply_coupling(self, q: np.ndarray) -> np.ndarray:
        """Return ``q`` (shape ``(..., dof)``) with dependent joints set from their leaders."""
        matrix, offset = self.coupling_matrix
        q = np.array(q, dtype=np.float64)
        if not self.dependent.any():
            return q
        coupled = q @ matrix.T + offset
        return np.where(self.dependent, coupled, q)

    @property
    def limits(self) -> JointLimits:
        """System limits as an Intrinsic ``JointLimits`` (arrays of shape ``(dof,)``)."""
        return JointLimits(
            min_position=self.lower,
            max_position=self.upper,
            max_velocity=self.velocity_limit,
            max_acceleration=self.acceleration_limit,
            max_jerk=self.jerk_limit,
            max_effort=self.effort_limit,
        )

    # ------------------------------------------------------------ views
    def geometry(self, config_speed: np.ndarray | None = None) -> ArrayGeometry:
        """Player GET_GEOM reply for the movable actuators (optionally with live speeds)."""
        speeds = self.config_speed if config_speed is None else np.asarray(config_speed)
        return ArrayGeometry(
            actuators=tuple(
                ActuatorGeometry(
                    type=a.type.player_code,
                    length=a.length,
                    orientation=a.orientation,
                    axis=a.axis,
                    min=a.min,
                    centre=a.centre,
                    max=a.max,
                    home=a.home,
                    config_speed=float(speeds[i]),
                    has_brakes=a.has_brakes,
                )
                for i, a in enumerate(self.joints)
            ),
            base_pos=self.base.position,
            base_orientation=self.base.orientation,
        )
