"""The hardware meaning of ``Robot.reset(q)``: a minimum-jerk move to ``q``, then a hold.

A device cannot be teleported like a simulated robot. :func:`minimum_jerk_move` drives it
with a stream of NJOINT position targets on the fifth-order minimum-jerk blend
``s(τ) = 10τ³ − 15τ⁴ + 6τ⁵`` (zero velocity and acceleration at both ends), timed so that
no joint exceeds its configured speed or acceleration or its jerk limit, then holds the
target until the joints come to rest. It lives here, not in ``jointlab.controllers``, because
hardware must not import controllers (docs/architecture.md, the import table).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from jointlab.errors import CommandRefused, ConfigurationError
from jointlab.faults import FaultRule
from jointlab.interface import NJointAction
from jointlab.robots.stops import onto_the_stops

__all__ = [
    "RESET_TOLERANCE",
    "SETTLE_SPEED",
    "SETTLE_TIME",
    "minimum_jerk_move",
    "move_duration",
    "reset_target",
]

#: No move when every joint is closer than this to the target, rad or m.
RESET_TOLERANCE = 1e-3
#: The hold ends when every joint is slower than this, rad/s or m/s ...
SETTLE_SPEED = 0.02
#: ... or after this many seconds of device time.
SETTLE_TIME = 1.0
# Peak |velocity|, |acceleration| and |jerk| of the minimum-jerk blend over distance D in time
# T are 1.875 D/T, (10/sqrt(3)) D/T² and 60 D/T³.
_PEAK_V, _PEAK_A, _PEAK_J = 1.875, 10.0 / math.sqrt(3.0), 60.0


def reset_target(
    description: Any, q: Any, qd: Any, *, moving: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The target of ``reset(q, qd)``: ``q`` (default home) and ``qd`` (default 0), checked.

    Args:
        description: The robot.
        q: Positions, rad or m, shape ``(dof,)``, or None for home.
        qd: Velocities, rad/s or m/s, shape ``(dof,)``, or None for rest.
        moving: Whether ``qd`` may be non-zero (a lockstep emulator can set it; a device
            can only be reset to rest).

    Raises:
        ConfigurationError: ``q`` is not ``dof`` finite values within the joint limits, or
            ``qd`` is not ``dof`` finite values (zero unless ``moving``).
    """
    d = description
    target = np.array(d.home if q is None else q, dtype=np.float64).reshape(-1)
    if target.shape != (d.dof,) or not np.all(np.isfinite(target)):
        raise ConfigurationError(f"reset: q must be {d.dof} finite numbers, got {q!r}")
    target = onto_the_stops(target, d.lower, d.upper)  # a state logged resting on a stop
    outside = (target < d.lower - 1e-9) | (target > d.upper + 1e-9)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise ConfigurationError(
            f"reset: q[{i}] = {target[i]} of joint {d.joint_names[i]!r} lies outside "
            f"[{d.lower[i]}, {d.upper[i]}]"
        )
    velocity = np.zeros(d.dof) if qd is None else np.array(qd, dtype=np.float64).reshape(-1)
    if velocity.shape != (d.dof,) or not np.all(np.isfinite(velocity)):
        raise ConfigurationError(f"reset: qd must be {d.dof} finite numbers, got {qd!r}")
    if not moving and np.any(velocity != 0):
        raise ConfigurationError("reset: a device can only be reset to rest; qd must be zero")
    return target, velocity


def move_duration(
    distance: np.ndarray, speed: np.ndarray, accel: np.ndarray, jerk: np.ndarray
) -> float:
    """Shortest minimum-jerk duration (s) that keeps every joint within its bounds.

    Args:
        distance: Joint distances, shape ``(dof,)``, rad or m.
        speed: Speed bounds, shape ``(dof,)``, rad/s or m/s.
        accel: Acceleration bounds, rad/s² or m/s².
        jerk: Jerk bounds, rad/s³ or m/s³.
    """
    d = np.abs(distance)
    times = np.concatenate(
        (_PEAK_V * d / speed, np.sqrt(_PEAK_A * d / accel), np.cbrt(_PEAK_J * d / jerk))
    )
    return float(times.max(initial=0.0))


def minimum_jerk_move(robot: Any, target: np.ndarray) -> bool:
    """Move ``robot`` (a ``SerialRobot``) to ``target``, shape ``(dof,)``, and hold it there.

    Returns:
        False when the robot was already within :data:`RESET_TOLERANCE` (a hold is applied
        if it is armed), True after a move.

    Raises:
        CommandRefused: the robot must move but is disarmed (reason ``"disarmed"``).
        DeviceFault: a device stopped itself; LinkError: the robot stopped answering. Either
            way after :func:`jointlab.faults.stop_after_fault` (held one period, disarmed).
    """
    description = robot.description
    start = robot.read().position
    delta = target - start
    hold = NJointAction.Position(target, velocity=np.zeros(description.dof))
    if np.max(np.abs(delta), initial=0.0) <= RESET_TOLERANCE:
        if robot.armed:
            robot.apply(hold)
            robot.step()
        return False
    if not robot.armed:
        worst = int(np.argmax(np.abs(delta)))
        raise CommandRefused(
            f"reset must move joint {description.joint_names[worst]!r} from {start[worst]:.4g} "
            f"to {target[worst]:.4g}, but robot {description.name!r} is disarmed; call arm() "
            "first",
            reason="disarmed",
        )
    dt = robot.control_dt
    duration = move_duration(delta, robot.config_speed, robot.config_accel, description.jerk_limit)
    steps = max(1, math.ceil(duration / dt))
    duration = steps * dt
    with FaultRule(robot):  # the robot faulted mid-move: hold, disarm, stop with the error
        for k in range(1, steps + 1):
            tau = k / steps
            blend = tau**3 * (10.0 + tau * (-15.0 + 6.0 * tau))
            rate = 30.0 * tau**2 * (1.0 - tau) ** 2 / duration
            robot.apply(NJointAction.Position(start + blend * delta, velocity=rate * delta))
            robot.step()
        robot.apply(hold)
        for _ in range(max(1, round(SETTLE_TIME / dt))):
            robot.step()
            if np.max(np.abs(robot.read().velocity), initial=0.0) < SETTLE_SPEED:
                break
    return True
