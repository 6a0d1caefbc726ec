"""The actuator between command and joint: current-to-torque scale, latency, saturation.

Three estimates from a log's commands, applied torques and currents, joint by joint:

* **torque constant** (``motor.torque_constant``, N·m/A at the motor): the joint torque is
  ``current · torque_constant · gear_ratio``, so it is the least-squares slope of the
  applied torque over ``current · gear_ratio`` through the origin, on rows whose current is
  above a tenth of the joint's peak current and below its current limit;
* **latency, first guess** (``motor.delay``, physics steps): every backend evaluates
  ``torque + kp·(position − q) + kd·(velocity − qd)`` from the state and the desired action
  of each row (:meth:`~jointlab.identify.data.Commands.command_torque`) and applies it
  ``delay`` steps later, saturated; the delay whose shifted command best matches the
  applied torque (median absolute difference over unsaturated rows) is the guess that
  :mod:`jointlab.identify.replay` then confirms by simulation;
* **saturation** (``limits.effort``): rows where the (delayed) command exceeds the applied
  torque of the same sign are clamped; the largest clamped torque is the saturation.

Intervals: 95 % from the residual variance (slope), the spread of the clamped torques
(saturation). Problems (no current column, too little current, no saturated row) are
returned as sentences naming the parameter, the joint and what would identify it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from jointlab.identify.data import IdentificationData
from jointlab.identify.regression import CONFIDENCE, autocorrelation_inflation

__all__ = ["ActuatorEstimate", "command_torque", "fit_effort", "fit_torque_constant", "guess_delay"]

#: Rows with a usable current the slope needs.
MIN_CURRENT_ROWS = 50
#: Rows within this share of the current limit are left out of the slope (clipped).
CURRENT_CLIP_SHARE = 0.98
#: Rows below this share of the joint's peak current (99th percentile) are left out of the
#: slope (noise, offsets).
CURRENT_FLOOR_SHARE = 0.1
#: Relative excess of the command over the applied torque that counts as saturated.
CLAMP_MARGIN = 0.02
#: Fewest clamped rows a saturation estimate needs.
MIN_CLAMPED_ROWS = 3


@dataclass(frozen=True)
class ActuatorEstimate:
    """One estimate of one joint: value and 95 % interval."""

    value: float
    low: float
    high: float
    #: Rows it rests on.
    rows: int


def fit_torque_constant(
    data: IdentificationData, joints: list[int]
) -> tuple[dict[int, ActuatorEstimate], list[str]]:
    """``motor.torque_constant`` per joint (module docstring) and the problems met."""
    description = data.description
    if data.smooth_current is None:
        names = [description.joint_names[j] for j in joints]
        return {}, [
            f"torque_constant (motor.torque_constant) of joints {names} cannot be identified: "
            "the log has no state.current column; record the state of a backend that reports "
            "motor currents"
        ]
    results: dict[int, ActuatorEstimate] = {}
    problems: list[str] = []
    for j in joints:
        motor = description.joints[j].motor
        current = data.smooth_current[:, j]
        torque = data.smooth_torque[:, j]
        magnitude = np.where(np.isfinite(current), np.abs(current), 0.0)
        peak = float(np.percentile(magnitude[data.regular], 99)) if data.regular.any() else 0.0
        keep = (
            data.regular
            & (magnitude > max(CURRENT_FLOOR_SHARE * peak, 1e-9))
            & (magnitude < CURRENT_CLIP_SHARE * motor.max_current)
        )
        name = description.joint_names[j]
        if int(keep.sum()) < MIN_CURRENT_ROWS:
            problems.append(
                f"torque_constant (motor.torque_constant) of joint {name!r} cannot be "
                f"identified: only {int(keep.sum())} rows carry a current clear of zero (peak "
                f"{peak:.3g} A) and below {100 * CURRENT_CLIP_SHARE:.0f} % of its max_current "
                f"{motor.max_current:g} A ({MIN_CURRENT_ROWS} needed); drive it with more "
                "torque, e.g. a faster excitation"
            )
            continue
        x = current[keep] * motor.gear_ratio
        y = torque[keep]
        slope = float(x @ y / (x @ x))
        residual = y - slope * x
        count = x.shape[0]
        inflation = autocorrelation_inflation(residual)
        variance = float(residual @ residual) / max(count - 1, 1) * inflation / float(x @ x)
        half = student_t.ppf(0.5 + CONFIDENCE / 2, max(count / inflation - 1, 1.0)) * np.sqrt(
            variance
        )
        results[j] = ActuatorEstimate(slope, slope - half, slope + half, count)
    return results, problems


def command_torque(data: IdentificationData) -> np.ndarray:
    """The torque each row's desired action commands at its state, shape ``(T, dof)``.

    NaN gains take the description's default gains (what the device uses when it runs the
    same robot file).
    """
    if data.commands is None:
        raise ValueError("the log has no desired channel")
    description = data.description
    return data.commands.command_torque(
        data.position, data.velocity, description.default_kp, description.default_kd
    )


def guess_delay(
    data: IdentificationData, joints: list[int], max_delay: int
) -> tuple[dict[int, int], dict[int, np.ndarray]]:
    """First guess of ``motor.delay`` per joint, and its score per candidate delay.

    Works on logs with one physics step per row; the score of delay ``d`` is the median
    ``|applied(k) − command(k − d)|`` over rows where neither is saturated, N·m.
    Returns empty dicts when the log cannot tell (no desired channel, longer rows).
    """
    steps_per_row = data.dt / data.physics_dt
    if data.commands is None or abs(steps_per_row - 1.0) > 1e-6:
        return {}, {}
    command = command_torque(data)
    effort = data.description.effort_limit
    guesses: dict[int, int] = {}
    scores: dict[int, np.ndarray] = {}
    rows = data.rows
    for j in joints:
        applied = data.torque[:, j]
        score = np.full(max_delay + 1, np.inf)
        for d in range(max_delay + 1):
            shifted = command[: rows - d, j]
            target = applied[d:]
            keep = (
                data.regular[d:]
                & data.regular[: rows - d]
                & (np.abs(shifted) < 0.9 * effort[j])
                & (np.abs(target) < 0.9 * effort[j])
            )
            if keep.sum() >= 10:
                score[d] = float(np.median(np.abs(target[keep] - shifted[keep])))
        if np.isfinite(score).any():
            guesses[j] = int(np.argmin(score))
            scores[j] = score
    return guesses, scores


def fit_effort(
    data: IdentificationData, joints: list[int], delay: dict[int, int]
) -> tuple[dict[int, ActuatorEstimate], list[str]]:
    """``limits.effort`` per joint from saturated rows, and the problems met.

    Args:
        data: The aligned log (needs its desired channel).
        joints: Joint indices.
        delay: Latency per joint in rows (physics steps at one step per row).
    """
    description = data.description
    if data.commands is None:
        return {}, [
            "effort (limits.effort) cannot be identified: the log has no desired channel "
            "(the commands), so saturation cannot be seen"
        ]
    command = command_torque(data)
    results: dict[int, ActuatorEstimate] = {}
    problems: list[str] = []
    rows = data.rows
    for j in joints:
        d = delay.get(j, 0)
        shifted = command[: rows - d, j]
        applied = data.torque[d:, j]
        usable = data.regular[d:] & data.regular[: rows - d]
        clamped = (
            usable
            & (np.sign(shifted) == np.sign(applied))
            & (np.abs(shifted) > (1.0 + CLAMP_MARGIN) * np.abs(applied) + 1e-9)
        )
        name = description.joint_names[j]
        if int(clamped.sum()) < MIN_CLAMPED_ROWS:
            peak = float(np.max(np.abs(applied[usable]), initial=0.0))
            problems.append(
                f"effort (limits.effort) of joint {name!r} cannot be identified: its actuator "
                f"never saturated (largest applied torque {peak:.4g}, nominal limit "
                f"{description.effort_limit[j]:.4g}); it takes a log in which the command "
                "exceeds what the actuator delivers, e.g. fast position steps with stiff "
                "gains, which a safe excitation avoids"
            )
            continue
        levels = np.abs(applied[clamped])
        results[j] = ActuatorEstimate(
            float(levels.max()),
            float(np.percentile(levels, 5)),
            float(levels.max()),
            int(clamped.sum()),
        )
    return results, problems
