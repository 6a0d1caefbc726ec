"""Jerk-limited point-to-point motion with ruckig, sampled per control tick.

Every move is planned once, offline, with ``ruckig.Ruckig.calculate`` (time-optimal under
velocity, acceleration and jerk limits, from any initial state to any target state) and
converted to a :class:`~jointlab.controllers.polynomial.PiecewisePolynomial`, so a control tick
only evaluates a polynomial. The limits of a move are the tightest of

* the description's (soft) velocity, acceleration and jerk limits,
* each actuator's configured speed (Player REQ SPEED, ``robot.config_speed``) and configured
  acceleration (Player REQ ACCEL, ``robot.config_accel``),
* an optional per-command velocity (``set_position(..., velocity=v)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import ruckig

from jointlab.controllers.polynomial import PiecewisePolynomial
from jointlab.errors import CommandRefused, ConfigurationError

if TYPE_CHECKING:
    from jointlab.contract import Robot
    from jointlab.robots.description import RobotDescription

__all__ = [
    "MotionLimits",
    "plan_move",
    "plan_stop",
    "plan_velocity",
    "ruckig_segment",
    "stopping_distance",
]

_OK = (ruckig.Result.Working, ruckig.Result.Finished)


def _vector(value: Any, n: int, what: str) -> np.ndarray:
    array = np.array(value, dtype=np.float64).reshape(-1)
    if array.shape[0] == 1 and n != 1:
        array = np.full(n, array[0])
    if array.shape[0] != n:
        raise ConfigurationError(f"{what} has {array.shape[0]} values, expected {n}")
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class MotionLimits:
    """Per-joint limits a planned motion respects. Every array has shape ``(n,)``."""

    #: Lower position limits, rad or m.
    lower: np.ndarray
    #: Upper position limits, rad or m.
    upper: np.ndarray
    #: Maximum speed, rad/s or m/s (> 0).
    velocity: np.ndarray
    #: Maximum acceleration, rad/s² or m/s² (> 0).
    acceleration: np.ndarray
    #: Maximum jerk, rad/s³ or m/s³ (> 0).
    jerk: np.ndarray
    #: Joint names, for messages.
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        n = len(self.names)
        for name in ("lower", "upper", "velocity", "acceleration", "jerk"):
            array = _vector(getattr(self, name), n, f"MotionLimits.{name}")
            object.__setattr__(self, name, array)
            if name in ("velocity", "acceleration", "jerk"):
                bad = ~(np.isfinite(array) & (array > 0))
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise ConfigurationError(
                        f"{name} limit {array[i]} of joint {i} ({self.names[i]}) must be a "
                        "positive finite number"
                    )

    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.names)

    @classmethod
    def from_description(
        cls,
        description: RobotDescription,
        config_speed: Any = None,
        config_accel: Any = None,
    ) -> MotionLimits:
        """Soft limits of ``description``, tightened by configured speeds and accelerations.

        Args:
            description: The robot.
            config_speed: Configured speeds (REQ SPEED), shape ``(dof,)``; entries <= 0 or NaN
                are ignored. ``None``: no configured speed.
            config_accel: Configured accelerations (REQ ACCEL), shape ``(dof,)``; likewise.
        """
        limits = cls(
            lower=description.soft_lower,
            upper=description.soft_upper,
            velocity=description.soft_velocity_limit,
            acceleration=description.soft_acceleration_limit,
            jerk=description.soft_jerk_limit,
            names=description.joint_names,
        )
        return limits.with_config(config_speed, config_accel)

    @classmethod
    def from_robot(cls, robot: Robot) -> MotionLimits:
        """Limits of a live robot: its description plus its current configured speed/accel."""
        speed = getattr(robot, "config_speed", None)
        if speed is None:
            speed = [g.config_speed for g in robot.geometry().actuators]
        return cls.from_description(robot.description, speed, robot.config_accel)

    def with_config(self, config_speed: Any = None, config_accel: Any = None) -> MotionLimits:
        """Return limits with velocity/acceleration capped by positive configured values."""
        velocity, acceleration = self.velocity, self.acceleration
        if config_speed is not None:
            speed = _vector(config_speed, self.n, "config_speed")
            use = np.isfinite(speed) & (speed > 0)
            velocity = np.where(use, np.minimum(velocity, speed), velocity)
        if config_accel is not None:
            accel = _vector(config_accel, self.n, "config_accel")
            use = np.isfinite(accel) & (accel > 0)
            acceleration = np.where(use, np.minimum(acceleration, accel), acceleration)
        return replace(self, velocity=velocity, acceleration=acceleration)

    def with_velocity(self, velocity: Any) -> MotionLimits:
        """Return limits whose speed is also capped by ``velocity`` (``|v|`` per joint)."""
        cap = np.abs(_vector(velocity, self.n, "velocity"))
        return replace(self, velocity=np.minimum(self.velocity, cap))

    def select(self, joints: Sequence[int]) -> MotionLimits:
        """Limits of the joints at indices ``joints``, in that order."""
        index = np.asarray(joints, dtype=int)
        return MotionLimits(
            lower=self.lower[index],
            upper=self.upper[index],
            velocity=self.velocity[index],
            acceleration=self.acceleration[index],
            jerk=self.jerk[index],
            names=tuple(self.names[i] for i in index),
        )


def _pieces(profile: Any) -> list[tuple[float, float, float, float, float]]:
    """Constant-jerk pieces ``(t_start, p, v, a, jerk)`` of one ruckig DoF profile.

    A profile is an optional two-phase brake pre-profile (when the start state exceeds the
    limits), seven phases of constant jerk, then constant acceleration (zero for our targets).
    """
    if profile.accel.duration > 0:  # only for target accelerations beyond the limits
        raise CommandRefused(
            "ruckig planned a post-profile: a target acceleration exceeds its limit",
            reason="bad_trajectory",
        )
    pieces = []
    t = 0.0
    brake = profile.brake
    if brake.duration > 0:
        for k in range(2):
            if brake.t[k] > 0:
                pieces.append((t, brake.p[k], brake.v[k], brake.a[k], brake.j[k]))
                t += brake.t[k]
    for k in range(7):
        if profile.t[k] > 0:
            pieces.append((t, profile.p[k], profile.v[k], profile.a[k], profile.j[k]))
            t += profile.t[k]
    pieces.append((t, profile.p[7], profile.v[7], profile.a[7], 0.0))
    return pieces


def ruckig_segment(
    limits: MotionLimits,
    start: tuple[Any, Any, Any],
    target: tuple[Any, Any, Any],
    *,
    interface: str = "position",
    synchronize: bool = True,
    minimum_duration: float | None = None,
) -> PiecewisePolynomial:
    """Plan one time-optimal jerk-limited segment with ruckig.

    Args:
        limits: Limits of the ``n`` joints.
        start: Start position, velocity, acceleration, each shape ``(n,)``.
        target: Target position, velocity, acceleration, each shape ``(n,)`` (the position is
            ignored for ``interface="velocity"``).
        interface: ``"position"`` (reach the target state) or ``"velocity"`` (reach the target
            velocity and acceleration, any position).
        synchronize: End all joints together (ruckig ``Synchronization.Time``) or each as soon
            as possible (``Synchronization.No``).
        minimum_duration: Optional lower bound of the duration, seconds.

    Returns:
        The motion on ``[0, duration]``; after its end the target is held.

    Raises:
        CommandRefused: ruckig found no trajectory (reason ``"bad_trajectory"``).
    """
    n = limits.n
    otg = ruckig.Ruckig(n)
    inp = ruckig.InputParameter(n)
    inp.current_position, inp.current_velocity, inp.current_acceleration = (
        _vector(x, n, "start state").tolist() for x in start
    )
    inp.target_position, inp.target_velocity, inp.target_acceleration = (
        _vector(x, n, "target state").tolist() for x in target
    )
    inp.max_velocity = limits.velocity.tolist()
    inp.max_acceleration = limits.acceleration.tolist()
    inp.max_jerk = limits.jerk.tolist()
    if interface == "velocity":
        inp.control_interface = ruckig.ControlInterface.Velocity
    elif interface != "position":
        raise ConfigurationError(f"interface must be 'position' or 'velocity', got {interface!r}")
    inp.synchronization = ruckig.Synchronization.Time if synchronize else ruckig.Synchronization.No
    if minimum_duration is not None:
        inp.minimum_duration = float(minimum_duration)
    trajectory = ruckig.Trajectory(n)
    result = otg.calculate(inp, trajectory)
    if result not in _OK:
        raise CommandRefused(
            f"ruckig could not plan a motion of joints {list(limits.names)} from "
            f"{inp.current_position} to {inp.target_position}: {result}",
            reason="bad_trajectory",
        )
    duration = float(trajectory.duration)
    pieces = [_pieces(profile) for profile in trajectory.profiles[0]]
    return PiecewisePolynomial.from_pieces(pieces, duration)


def _zeros_if_none(value: Any, n: int) -> np.ndarray:
    return np.zeros(n) if value is None else _vector(value, n, "state")


def plan_move(
    limits: MotionLimits,
    start_position: Any,
    target_position: Any,
    *,
    start_velocity: Any = None,
    start_acceleration: Any = None,
    target_velocity: Any = None,
    synchronize: bool = True,
    minimum_duration: float | None = None,
) -> PiecewisePolynomial:
    """Time-optimal jerk-limited move to ``target_position`` (shape ``(n,)``, rad or m).

    The start velocity/acceleration default to rest; so does the target velocity. With
    ``synchronize`` every joint arrives at the same time (Player MULTI_POS). With
    ``minimum_duration`` (seconds) the move takes at least that long (ruckig slows it down).
    """
    n = limits.n
    start = (
        start_position,
        _zeros_if_none(start_velocity, n),
        _zeros_if_none(start_acceleration, n),
    )
    target = (target_position, _zeros_if_none(target_velocity, n), np.zeros(n))
    return ruckig_segment(
        limits, start, target, synchronize=synchronize, minimum_duration=minimum_duration
    )


def plan_velocity(
    limits: MotionLimits,
    start_position: Any,
    start_velocity: Any,
    start_acceleration: Any,
    target_velocity: Any,
    *,
    synchronize: bool = False,
) -> PiecewisePolynomial:
    """Jerk-limited change of velocity to ``target_velocity`` (shape ``(n,)``, rad/s or m/s).

    The motion ends when every joint runs at its target velocity with zero acceleration.
    """
    n = limits.n
    target = (np.zeros(n), target_velocity, np.zeros(n))
    start = (start_position, start_velocity, _zeros_if_none(start_acceleration, n))
    return ruckig_segment(limits, start, target, interface="velocity", synchronize=synchronize)


def plan_stop(
    limits: MotionLimits, position: Any, velocity: Any, acceleration: Any = None
) -> PiecewisePolynomial:
    """Stop every joint as fast as acceleration and jerk limits permit (``stop("decelerate")``)."""
    n = limits.n
    return plan_velocity(limits, position, velocity, acceleration, np.zeros(n))


def stopping_distance(limits: MotionLimits, velocity: Any, acceleration: Any = None) -> np.ndarray:
    """Signed distance each joint travels while stopping from ``velocity``, shape ``(n,)``."""
    n = limits.n
    stop = plan_stop(limits, np.zeros(n), velocity, acceleration)
    return stop.end_state[0]
