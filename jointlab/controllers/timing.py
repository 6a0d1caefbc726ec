"""Automatic timing of waypoints: fast jerk-limited motion through every waypoint.

Open-source ruckig plans from one state to one target state; passing through intermediate
waypoints is a feature of its commercial edition. JointLab times a waypoint sequence with the
open-source calculator, one segment at a time, and keeps the motion fluid by choosing a
non-zero velocity at each intermediate waypoint:

1. **Stop-and-go start.** Every waypoint whose velocity is not given gets velocity 0 and each
   segment is planned with ruckig from rest to rest (time-synchronised over the joints). This
   is always feasible and gives a duration ``T_k`` for every segment.
2. **Estimate pass-through velocities** from those durations, joint by joint, with the
   Fritsch–Butland rule of monotone cubic interpolation: at waypoint ``i`` the incoming and
   outgoing average speeds ``d_in = Δ_in / T_in`` and ``d_out = Δ_out / T_out`` give
   ``v_i = (w1 + w2) / (w1 / d_in + w2 / d_out)`` (a weighted harmonic mean) when both have
   the same sign, and ``v_i = 0`` where the joint reverses or rests. A harmonic mean never
   exceeds twice the smaller speed, so the motion does not overshoot a waypoint; the result
   is clipped to the velocity limit.
3. **Re-plan** every segment with ruckig between the full states ``(p_i, v_i, a_i = 0)``:
   consecutive segments share the waypoint state, so velocity and acceleration are continuous
   through every waypoint and each segment is time-optimal for its boundary states. A segment
   that ruckig cannot plan, or whose overshoot leaves the position limits, gets velocity 0 at
   its two ends and is planned again.
4. **Iterate** steps 2–3 with the new durations while the total duration decreases (at most
   ``iterations`` times) and keep the fastest timing found.

The result respects the velocity, acceleration and jerk limits on every segment (ruckig
guarantees it) and the position limits (checked exactly on the final polynomial).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jointlab.controllers.motion import MotionLimits, ruckig_segment
from jointlab.controllers.polynomial import PiecewisePolynomial
from jointlab.errors import CommandRefused

__all__ = ["estimate_velocities", "time_waypoints"]


def estimate_velocities(
    positions: np.ndarray, durations: np.ndarray, free: np.ndarray
) -> np.ndarray:
    """Fritsch–Butland velocities at the interior points where ``free`` is True.

    Args:
        positions: Points, shape ``(P, n)``.
        durations: Segment durations in seconds, shape ``(P - 1,)``.
        free: Mask of points whose velocity is to be estimated, shape ``(P, n)``; the first
            and last rows are never estimated.

    Returns:
        Velocities, shape ``(P, n)``: the estimate where ``free`` (interior), 0 elsewhere.
    """
    velocities = np.zeros_like(positions)
    if positions.shape[0] < 3:
        return velocities
    h = np.maximum(durations, 1e-12)[:, None]
    slopes = np.diff(positions, axis=0) / h
    d_in, d_out = slopes[:-1], slopes[1:]
    h_in, h_out = h[:-1], h[1:]
    w1 = 2 * h_out + h_in
    w2 = h_out + 2 * h_in
    product = d_in * d_out
    same = product > 0
    # (w1 + w2) / (w1 / d_in + w2 / d_out), written without dividing by a tiny slope
    denominator = np.where(same, w1 * d_out + w2 * d_in, 1.0)
    estimate = np.where(same, (w1 + w2) * product / denominator, 0.0)
    interior = np.zeros_like(free)
    interior[1:-1] = True
    velocities[1:-1] = np.nan_to_num(estimate)
    return np.where(free & interior, velocities, 0.0)


def _plan_segments(
    limits: MotionLimits,
    positions: np.ndarray,
    velocities: np.ndarray,
    accelerations: np.ndarray,
    free: np.ndarray,
) -> tuple[list[PiecewisePolynomial], np.ndarray]:
    """Plan all segments; zero the free velocities around any infeasible segment and retry."""
    velocities = velocities.copy()
    count = positions.shape[0] - 1
    for _ in range(count + 1):
        segments: list[PiecewisePolynomial | None] = []
        failed = []
        for k in range(count):
            try:
                segment = ruckig_segment(
                    limits,
                    (positions[k], velocities[k], accelerations[k]),
                    (positions[k + 1], velocities[k + 1], accelerations[k + 1]),
                )
                low, high, _ = segment.extrema()
                if np.any(low < limits.lower - 1e-9) or np.any(high > limits.upper + 1e-9):
                    segment = None
            except CommandRefused:
                segment = None
            if segment is None:
                failed.append(k)
            segments.append(segment)
        if not failed:
            return segments, velocities  # type: ignore[return-value]
        changed = False
        for k in failed:
            for i in (k, k + 1):
                if free[i].any() and np.any(velocities[i][free[i]] != 0):
                    velocities[i] = np.where(free[i], 0.0, velocities[i])
                    changed = True
        if not changed:
            k = failed[0]
            raise CommandRefused(
                f"bad trajectory: no motion within the limits of joints {list(limits.names)} "
                f"from waypoint state {k} to {k + 1} (position limits "
                f"{limits.lower.tolist()}..{limits.upper.tolist()})",
                reason="bad_trajectory",
            )
    raise CommandRefused("bad trajectory: timing did not converge", reason="bad_trajectory")


def time_waypoints(
    limits: MotionLimits,
    positions: Any,
    velocities: Any = None,
    accelerations: Any = None,
    *,
    iterations: int = 3,
) -> tuple[PiecewisePolynomial, np.ndarray]:
    """Time a sequence of joint-space points (see the module docstring for the method).

    Args:
        limits: Velocity, acceleration, jerk and position limits of the ``n`` joints.
        positions: Points, shape ``(P, n)``, rad or m. The first is where the motion starts.
        velocities: Velocities, shape ``(P, n)``; NaN (or ``None`` for all) means "choose":
            rest at the first and last point, a pass-through velocity in between.
        accelerations: Accelerations, shape ``(P, n)``; NaN or ``None`` means 0.
        iterations: Maximum number of velocity re-estimations.

    Returns:
        The motion (starting at 0 s) and the time of every point, shape ``(P,)``.
    """
    positions = np.atleast_2d(np.asarray(positions, dtype=np.float64))
    shape = positions.shape
    given_v = np.full(shape, np.nan) if velocities is None else np.asarray(velocities, float)
    given_a = np.full(shape, np.nan) if accelerations is None else np.asarray(accelerations, float)
    free = np.isnan(given_v)
    base_v = np.where(free, 0.0, given_v)
    acc = np.nan_to_num(given_a)
    if shape[0] == 1:
        return PiecewisePolynomial.constant(positions[0], 1e-9), np.zeros(1)
    best, best_v = _plan_segments(limits, positions, base_v, acc, free)
    best_total = sum(s.duration for s in best)
    for _ in range(iterations):
        durations = np.array([s.duration for s in best])
        estimate = estimate_velocities(positions, durations, free)
        estimate = np.clip(estimate, -limits.velocity, limits.velocity)
        trial_v = np.where(free, estimate, base_v)
        if np.allclose(trial_v, best_v, rtol=1e-6, atol=1e-9):
            break
        segments, used_v = _plan_segments(limits, positions, trial_v, acc, free)
        total = sum(s.duration for s in segments)
        if total >= best_total - 1e-9:
            break
        best, best_v, best_total = segments, used_v, total
    motion = best[0]
    times = [0.0, best[0].duration]
    for segment in best[1:]:
        motion = motion.then(segment)
        times.append(times[-1] + segment.duration)
    return motion, np.array(times)
