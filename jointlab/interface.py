"""The values every backend exchanges: actions (:class:`NJointAction`) and states.

The abstract ``Robot`` they pass through lives in :mod:`jointlab.contract`, one layer up
(it imports this module; this module imports nothing of it).

Time semantics (the same for every backend):

* ``apply(a)`` sets the action used from the next physics step (sim) or firmware tick
  (device) on, until the next ``apply``.
* ``step()`` advances one control period: ``control_dt / dt`` physics steps in sim; on a
  device it waits for the next DATA STATE frame, so the device paces the loop.
* ``read()`` after ``step()`` returns the state at the end of that period. Its ``torque`` is
  the torque applied during the period's last physics step, computed from the state at the
  start of that physics step, after the effort clamp.
* ``time`` is seconds since the robot was created or last reset (simulated time in sim,
  device time on hardware).

The backend computes, joint-wise and at its own rate::

    sent_torque = clip(torque + kp * (position - q) + kd * (velocity - qd), -effort, effort)

skipping the PD term where ``position`` is NaN, using the description's default gain where
a gain is NaN and treating a NaN ``velocity`` as 0.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from jointlab.errors import ActionError
from jointlab.joint_vectors import (
    as_vector,
    check_gains,
    check_targets,
    check_torque,
    constants,
    plain_targets,
)

_GAINS = ("position_kp", "position_kd")

__all__ = [
    "ARRAY_FIELDS",
    "ActuatorState",
    "ActuatorType",
    "ArrayState",
    "NJointAction",
    "ResolvedAction",
    "nan_vector",
]


class ActuatorState(enum.IntFlag):
    """Per-actuator state flags, numbered as Player's actarray ``ACTSTATE`` codes."""

    IDLE = 1
    MOVING = 2
    BRAKED = 4
    STALLED = 8


class ActuatorType(enum.IntEnum):
    """Actuator type codes, numbered as Player's actarray ``TYPE`` codes."""

    LINEAR = 1
    ROTARY = 2


def nan_vector(dof: int) -> np.ndarray:
    """Return a float64 vector of ``dof`` NaNs (the seed's ``None()`` helper)."""
    return np.full(int(dof), np.nan)


@dataclass(frozen=True)
class ResolvedAction:
    """What a backend needs to run the PD law of one action, derived once per action.

    Where the PD is disabled (NaN position) ``kp`` and ``kd`` are 0 and the targets are 0,
    so the law is one vector expression: ``torque + kp*(position - q) + kd*(velocity - qd)``.
    All arrays have shape ``(dof,)``.
    """

    #: Feed-forward torque in N·m (N for linear actuators).
    torque: np.ndarray
    #: Target position in rad or m, 0 where the PD is disabled.
    position: np.ndarray
    #: Proportional gain in N·m/rad (N/m), 0 where the PD is disabled.
    kp: np.ndarray
    #: Derivative gain in N·m·s/rad (N·s/m), 0 where the PD is disabled.
    kd: np.ndarray
    #: Target velocity in rad/s or m/s, 0 where NaN or the PD is disabled.
    velocity: np.ndarray
    #: True where the PD runs.
    pd_mask: np.ndarray

    def torque_at(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Return the unclamped command torque at joint state ``q``, ``qd`` (shape ``(dof,)``)."""
        return self.torque + self.kp * (self.position - q) + self.kd * (self.velocity - qd)


@dataclass(frozen=True, eq=False, init=False)
class NJointAction:
    """Action of an n-joint robot: a torque plus an optional joint-wise PD on position.

    Immutable and validated once when built (bounds: :mod:`jointlab.joint_vectors`); real
    numbers only (strings, complex numbers and empty vectors are refused). Use the
    factories :meth:`Torque`, :meth:`Position`, :meth:`TorqueAndPosition`, :meth:`Zero`
    rather than the constructor.
    """

    #: Feed-forward torque in N·m (N for linear joints). Shape ``(dof,)``; must be finite.
    torque: np.ndarray
    #: Target position in rad or m; NaN disables the PD for that joint. Shape ``(dof,)``.
    position: np.ndarray
    #: P gain in N·m/rad (N/m); NaN means the description's default. Shape ``(dof,)``.
    position_kp: np.ndarray
    #: D gain in N·m·s/rad (N·s/m); NaN means the description's default. Shape ``(dof,)``.
    position_kd: np.ndarray
    #: Target velocity in rad/s or m/s for the D term; NaN means 0. Shape ``(dof,)``.
    velocity: np.ndarray = field(default=None)  # type: ignore[assignment]

    #: True when the action is a plain ``Position(q)``: a target on every joint, zero
    #: torque, default gains, no velocity target (backends take a shorter path for it).
    _plain = False

    def __init__(
        self,
        torque: Any,
        position: Any = None,
        position_kp: Any = None,
        position_kd: Any = None,
        velocity: Any = None,
    ) -> None:
        torque_array = as_vector("torque", torque, None)
        dof = torque_array.shape[0]
        check_torque(torque_array)
        nans = constants(dof)[1]
        fields = self.__dict__
        fields["torque"] = torque_array
        for name, value in (
            ("position", position),
            ("position_kp", position_kp),
            ("position_kd", position_kd),
            ("velocity", velocity),
        ):
            if value is None or value is nans:
                fields[name] = nans
                continue
            array = as_vector(name, value, dof)
            if name in _GAINS:
                check_gains(name, array)
            else:
                check_targets(name, array)
            fields[name] = array

    @classmethod
    def _plain_position(cls, position: np.ndarray, fully_given: bool) -> NJointAction:
        """``Position(position)`` from a checked read-only vector (no copy)."""
        zeros, nans, all_true, _ = constants(position.shape[0])
        action = object.__new__(cls)
        fields = action.__dict__
        fields["torque"] = zeros
        fields["position"] = position
        fields["position_kp"] = fields["position_kd"] = fields["velocity"] = nans
        if fully_given:
            fields["pd_mask"] = all_true
            fields["is_zero"] = False
            fields["_plain"] = True
        return action

    # ----------------------------------------------------------------- factories
    @classmethod
    def Torque(cls, torque: Any) -> NJointAction:
        """Pure torque action (PD disabled). ``torque`` in N·m, shape ``(dof,)``."""
        action = cls(torque)
        action.__dict__["pd_mask"] = constants(action.dof)[3]
        return action

    @classmethod
    def Position(
        cls, position: Any, kp: Any = None, kd: Any = None, velocity: Any = None
    ) -> NJointAction:
        """Pure position action: zero feed-forward torque, PD to ``position`` (rad or m).

        ``Position(q)`` alone is the fast path of a controller that builds a new action
        every period (one copy and one vectorised bounds check, a few microseconds).
        """
        if kp is None and kd is None and velocity is None and cls is NJointAction:
            checked = plain_targets(position)  # the common case in one call
            if checked is not None:
                return cls._plain_position(checked, True)
            position_array = as_vector("position", position, None)
            fully_given = check_targets("position", position_array)
            return cls._plain_position(position_array, fully_given)
        position_array = as_vector("position", position, None)
        return cls(constants(position_array.shape[0])[0], position_array, kp, kd, velocity)

    @classmethod
    def TorqueAndPosition(
        cls,
        torque: Any,
        position: Any,
        position_kp: Any = None,
        position_kd: Any = None,
        velocity: Any = None,
    ) -> NJointAction:
        """Feed-forward torque plus a PD to ``position``."""
        return cls(torque, position, position_kp, position_kd, velocity)

    @classmethod
    def Zero(cls, dof: int) -> NJointAction:
        """Zero torque with the PD disabled on every joint."""
        dof = int(dof)
        if dof < 1:
            raise ActionError(f"NJointAction.Zero needs dof >= 1, got {dof}")
        action = object.__new__(cls)
        zeros, nans, _, all_false = constants(dof)
        action.__dict__.update(
            torque=zeros,
            position=nans,
            position_kp=nans,
            position_kd=nans,
            velocity=nans,
            pd_mask=all_false,
            is_zero=True,
        )
        return action

    @classmethod
    def from_validated(
        cls,
        torque: np.ndarray,
        position: np.ndarray,
        position_kp: np.ndarray,
        position_kd: np.ndarray,
        velocity: np.ndarray,
        pd_mask: np.ndarray | None = None,
    ) -> NJointAction:
        """Build an action from arrays the caller has already validated (a hot-path escape).

        For adapters that check shape, finiteness, bounds and gain signs themselves (e.g. an
        env's action space mapping). The arrays must be float64 of shape ``(dof,)`` within
        the bounds of :mod:`jointlab.joint_vectors` (finite torque, gains in ``[0, MAX_GAIN]``
        or NaN, targets within ``MAX_TARGET`` or NaN); they are made read-only, not copied.
        ``pd_mask``, when the caller knows it, must be ``~np.isnan(position)`` (a bool array,
        also made read-only): :attr:`pd_mask` then costs nothing. Anything else must use the
        validating constructor or :meth:`Position`.
        """
        action = object.__new__(cls)
        fields = action.__dict__
        for name, value in (
            ("torque", torque),
            ("position", position),
            ("position_kp", position_kp),
            ("position_kd", position_kd),
            ("velocity", velocity),
        ):
            value.setflags(write=False)
            fields[name] = value
        if pd_mask is not None:  # the cached_property's own slot
            pd_mask.setflags(write=False)
            fields["pd_mask"] = pd_mask
        return action

    @classmethod
    def position_from_validated(cls, position: np.ndarray) -> NJointAction:
        """``Position(position)`` from a vector the caller has already validated (hot path).

        For adapters that map a bounded action space to targets (an env's ``position``
        action mode): ``position`` must be a float64 array of shape ``(dof,)``, finite and
        within :data:`~jointlab.joint_vectors.MAX_TARGET`. It is made read-only, not copied;
        the result equals ``NJointAction.Position(position)`` (a plain position action).
        """
        position.setflags(write=False)
        return cls._plain_position(position, True)

    @staticmethod
    def None_(dof: int) -> np.ndarray:
        """Return a NaN vector of length ``dof`` (the seed's ``None()``)."""
        return nan_vector(dof)

    # ----------------------------------------------------------------- derived
    @property
    def dof(self) -> int:
        """Number of joints."""
        return int(self.torque.shape[0])

    @cached_property
    def pd_mask(self) -> np.ndarray:
        """Boolean mask, shape ``(dof,)``: True where the PD runs (position not NaN)."""
        mask = ~np.isnan(self.position)
        mask.setflags(write=False)
        return mask

    @cached_property
    def is_zero(self) -> bool:
        """True for a zero-torque action with the PD disabled everywhere."""
        return bool(not self.pd_mask.any() and not self.torque.any())

    def resolve(self, default_kp: np.ndarray, default_kd: np.ndarray) -> ResolvedAction:
        """Fill NaN gains with the defaults and zero the PD where it is disabled.

        Args:
            default_kp: Default P gains, shape ``(dof,)``.
            default_kd: Default D gains, shape ``(dof,)``.
        """
        mask = self.pd_mask
        kp = np.where(np.isnan(self.position_kp), default_kp, self.position_kp)
        kd = np.where(np.isnan(self.position_kd), default_kd, self.position_kd)
        kp = np.where(mask, kp, 0.0)
        kd = np.where(mask, kd, 0.0)
        position = np.where(mask, self.position, 0.0)
        velocity = np.where(mask & ~np.isnan(self.velocity), self.velocity, 0.0)
        return ResolvedAction(
            torque=np.array(self.torque),
            position=position,
            kp=kp,
            kd=kd,
            velocity=velocity,
            pd_mask=np.array(mask),
        )

    # ----------------------------------------------------------------- Loggable
    def get_name(self) -> list[str]:
        """Field names, in the order of :meth:`get_data` (the seed's Loggable)."""
        return ["torque", "position", "position_kp", "position_kd", "velocity"]

    def get_data(self) -> list[list[float]]:
        """Field values as lists of floats (NaN kept)."""
        return [getattr(self, name).tolist() for name in self.get_name()]

    def to_dict(self) -> dict[str, np.ndarray]:
        """Return the five fields as a dict of arrays."""
        return {name: getattr(self, name) for name in self.get_name()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NJointAction):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, n), getattr(other, n), equal_nan=True)
            for n in self.get_name()
        )

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n).tobytes() for n in self.get_name()))

    def __repr__(self) -> str:
        parts = ", ".join(f"{n}={getattr(self, n).tolist()}" for n in self.get_name())
        return f"NJointAction({parts})"


#: The float ``ArrayState`` fields, in the row order of :meth:`ArrayState.arrays`.
ARRAY_FIELDS: tuple[str, ...] = ("position", "velocity", "acceleration", "torque", "current")


@dataclass(frozen=True, eq=False)
class ArrayState:
    """The state of an actuator array at one instant (Player's DATA STATE, extended).

    Joint-space arrays have shape ``(dof,)`` in the description's actuator order.
    """

    #: Seconds since the robot was created or reset.
    time: float
    #: Joint positions in rad (rotary) or m (linear).
    position: np.ndarray
    #: Joint velocities in rad/s or m/s.
    velocity: np.ndarray
    #: Joint accelerations in rad/s² or m/s² (finite difference over one physics step).
    acceleration: np.ndarray
    #: Applied torque in N·m (force in N for linear joints), after the effort clamp.
    torque: np.ndarray
    #: Motor current in A, from the actuator model.
    current: np.ndarray
    #: Per-actuator :class:`ActuatorState` flags as uint8.
    actuator_state: np.ndarray
    #: True when the motors are powered (Player's ``motor_state``).
    motor_power: bool
    #: True when the robot accepts motion commands.
    armed: bool
    #: True when the brakes are engaged (on actuators that have them).
    brakes: bool = False
    #: True when a device watchdog has taken over (hold or brake) for lack of commands.
    watchdog: bool = False
    #: Further per-joint readings a backend has (a servo bus: ``temperature`` in °C,
    #: ``voltage`` in V, ``hardware_error`` bits), arrays of shape ``(dof,)``; None elsewhere.
    #: Not part of equality or of the Loggable fields.
    extras: dict[str, np.ndarray] | None = None

    @property
    def dof(self) -> int:
        """Number of joints."""
        return int(self.position.shape[0])

    def arrays(self) -> np.ndarray:
        """The five float fields as one read-only snapshot, shape ``(5, dof)``, float64.

        Rows, in :data:`ARRAY_FIELDS` order: position (rad or m), velocity (rad/s or m/s),
        acceleration (rad/s² or m/s²), torque (N·m or N), current (A). Built once per state
        (later calls return the same block); it copies the fields, so a backend that reuses
        its arrays cannot change it.
        """
        block = self.__dict__.get("_arrays")
        if block is None:
            block = np.array([getattr(self, name) for name in ARRAY_FIELDS], dtype=np.float64)
            block.setflags(write=False)
            self.__dict__["_arrays"] = block
        return block

    def stalled(self) -> np.ndarray | None:
        """The joints whose flags include ``STALLED``: a boolean mask ``(dof,)``, or None.

        None when no joint is stalled (the common case; on a simulated robot's state decided
        without building the flags), so a controller can check every tick cheaply.
        """
        mask = (self.actuator_state & np.uint8(ActuatorState.STALLED)) != 0
        return mask if True in mask.tolist() else None

    def frozen(self) -> ArrayState:
        """This state with every array read-only: ``self`` when they already are, else a copy.

        A simulated robot's states are read-only already (they cost nothing here); a device's
        decoded arrays are copied once, so nothing the backend or a caller writes later can
        change the returned value.
        """
        arrays = [getattr(self, name) for name in (*ARRAY_FIELDS, "actuator_state")]
        extras = self.extras or {}
        if not any(a.flags.writeable for a in (*arrays, *extras.values())):
            return self
        copies = {
            name: _read_only_copy(a)
            for name, a in zip((*ARRAY_FIELDS, "actuator_state"), arrays, strict=True)
        }
        if self.extras is not None:
            copies["extras"] = {key: _read_only_copy(a) for key, a in extras.items()}
        return replace(self, **copies)

    def get_name(self) -> list[str]:
        """Field names, in the order of :meth:`get_data` (Loggable)."""
        return [
            "time",
            "position",
            "velocity",
            "acceleration",
            "torque",
            "current",
            "actuator_state",
            "motor_power",
            "armed",
            "brakes",
            "watchdog",
        ]

    def get_data(self) -> list[list[float]]:
        """Field values as lists of floats (scalars become one-element lists)."""
        data = []
        for name in self.get_name():
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                data.append(value.astype(np.float64).tolist())
            else:
                data.append([float(value)])
        return data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayState):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, n), getattr(other, n), equal_nan=True)
            for n in self.get_name()
        )

    __hash__ = None  # type: ignore[assignment]


def _read_only_copy(array: np.ndarray) -> np.ndarray:
    """A read-only copy of ``array``."""
    copy = np.array(array)
    copy.setflags(write=False)
    return copy
