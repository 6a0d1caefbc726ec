"""Motion profiles of the servos' firmware: position trapezoids, velocity ramps, velocity loop.

The ROBOTIS e-Manual ("What is the Profile", X series): a position move with Profile Velocity
``V`` and Profile Acceleration ``A`` follows a trapezoidal velocity profile (a triangle when
the move is too short to reach ``V``); ``A = 0`` gives a rectangular profile (``V`` at once),
``V = 0`` an unlimited velocity (only ``A`` shapes the move), and both 0 a step to the goal. In
velocity mode the velocity trajectory ramps to Goal Velocity at ``A``. With Drive Mode bit 2
(time-based profile) ``V`` is the move's total time and ``A`` its acceleration time, in ms
(``A`` at most half of ``V``), for the distance of the move when the goal was set. The
Feetech STS follows the same shape with Goal Speed (46) as ``V`` and Acceleration (41) as ``A``
(0: no limit). All functions work on whole arrays, one entry per servo; units are ticks,
ticks/s and ticks/s².
"""

from __future__ import annotations

import numpy as np

__all__ = ["ramp_velocity", "time_based_limits", "trapezoid_step", "velocity_loop"]

#: Velocity loop divisors (e-Manual, "Velocity PI Gain": ``KvP = P / 128``, ``KvI = I / 65536``
#: on the velocity error in the Goal Velocity unit, PWM out). Feetech publishes no scaling; the
#: emulated STS uses the same divisors on its own velocity unit (steps/s).
VELOCITY_P_DIV = 128.0
VELOCITY_I_DIV = 65536.0


def trapezoid_step(
    setpoint: np.ndarray,
    velocity: np.ndarray,
    goal: np.ndarray,
    v_max: np.ndarray,
    a_max: np.ndarray,
    dt: float,
) -> tuple[np.ndarray, np.ndarray]:
    """One firmware tick of the position trajectory towards ``goal``.

    Args:
        setpoint: Position trajectory, ticks, shape ``(n,)``.
        velocity: Velocity trajectory, ticks/s.
        goal: Goal positions, ticks.
        v_max: Profile velocity, ticks/s (``inf``: unlimited).
        a_max: Profile acceleration, ticks/s² (``inf``: unlimited).
        dt: Tick, s.

    Returns:
        The new setpoint and velocity trajectory. The setpoint lands on the goal (velocity 0)
        once the goal is within this tick's travel.
    """
    distance = goal - setpoint
    direction = np.sign(distance)
    # the fastest speed from which ticks of braking at a_max still stop at the goal: the
    # root of v²/2a + v·dt/2 = |distance| (inf where a_max is; nan where no distance is left)
    with np.errstate(invalid="ignore"):
        half = 0.5 * a_max * dt
        stopping = np.where(
            np.isfinite(a_max), np.sqrt(half * half + 2.0 * a_max * np.abs(distance)) - half, np.inf
        )
        wanted = direction * np.minimum(v_max, stopping)
    wanted = np.where(distance == 0, 0.0, wanted)
    change = np.clip(wanted - velocity, -a_max * dt, a_max * dt)
    change = np.where(np.isfinite(change), change, wanted - velocity)
    new_velocity = velocity + change
    step = new_velocity * dt
    unlimited = ~np.isfinite(new_velocity)
    arrived = unlimited | (np.abs(step) >= np.abs(distance)) | (distance == 0)
    new_setpoint = np.where(arrived, goal, setpoint + np.where(unlimited, 0.0, step))
    return new_setpoint, np.where(arrived, 0.0, new_velocity)


def time_based_limits(
    distance: np.ndarray, total_ms: np.ndarray, accel_ms: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Velocity (ticks/s) and acceleration (ticks/s²) limits of a time-based profile.

    Args:
        distance: Length of each move, ticks (from the setpoint when its goal was set).
        total_ms: Profile Velocity register: the move's total time, ms (0: no profile).
        accel_ms: Profile Acceleration register: the ramp time, ms (clamped to half the
            total; 0: a rectangular profile).
    """
    total = np.asarray(total_ms, dtype=np.float64) * 1e-3
    ramp = np.minimum(np.asarray(accel_ms, dtype=np.float64) * 1e-3, total / 2.0)
    timed = total > 0
    cruise = np.where(timed, total - ramp, 1.0)
    v_max = np.where(timed, np.abs(distance) / cruise, np.inf)
    a_max = np.where(timed & (ramp > 0), v_max / np.where(ramp > 0, ramp, 1.0), np.inf)
    return v_max, a_max


def ramp_velocity(
    velocity: np.ndarray, goal: np.ndarray, a_max: np.ndarray, dt: float
) -> np.ndarray:
    """The velocity trajectory one tick on, ramping to ``goal`` at ``a_max`` (ticks/s²)."""
    change = np.clip(goal - velocity, -a_max * dt, a_max * dt)
    return velocity + np.where(np.isfinite(change), change, goal - velocity)


def velocity_loop(
    error: np.ndarray,
    integral: np.ndarray,
    p_gain: np.ndarray,
    i_gain: np.ndarray,
    pwm_limit: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The velocity PI loop: PWM counts from one tick's velocity error.

    Args:
        error: Velocity error in the Goal Velocity register's unit.
        integral: Sum of the errors of the earlier ticks (same unit), shape ``(n,)``.
        p_gain: Velocity P Gain register values.
        i_gain: Velocity I Gain register values.
        pwm_limit: Largest PWM the loop may output (counts); the integral is held so that its
            term alone never exceeds it (anti-windup).

    Returns:
        PWM (counts, within ``±pwm_limit``) and the new integral.
    """
    ki = i_gain / VELOCITY_I_DIV
    integral = integral + error
    bound = np.where(ki > 0, pwm_limit / np.where(ki > 0, ki, 1.0), 0.0)
    integral = np.clip(integral, -bound, bound)
    pwm = p_gain / VELOCITY_P_DIV * error + ki * integral
    return np.clip(pwm, -pwm_limit, pwm_limit), integral
