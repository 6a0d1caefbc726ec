"""Fitting the servo model (:mod:`.model`) to recorded positions: output error, per joint.

The parameters of every joint are fitted at once by Levenberg-Marquardt on the difference
between the positions the model predicts from the recorded goals and the recorded positions
(output error: nothing is differentiated, so 30 fps and one-tick quantisation are fine). The
joints are independent given the recorded coupling, so one batched simulation gives every
joint's Jacobian column of a parameter, and each joint has its own damping factor.

What a recording cannot identify is held at its start value and said so (:class:`JointFit`
``reasons``): a joint that did not move (nothing); no reversal of its goal (backlash); a
torque limit the loop never asked for (torque limit); an interval wider than the value (the
data do not pin it down).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from jointlab.identify.errors import IdentificationError
from jointlab.identify.servo.model import PARAMETERS, JointInputs, simulate
from jointlab.identify.servo.traces import MOTION, moving_joints

__all__ = ["BOUNDS", "STEPS", "JointFit", "ServoFit", "fit_model", "reversals"]

#: Finite-difference step (and scale) of each parameter.
STEPS = np.array([0.02, 0.004, 0.02, 0.002, 0.002, 0.05])
#: Bounds of each parameter: (low, high).
BOUNDS = np.array(
    [[0.05, 10.0], [0.0, 2.0], [0.0, 10.0], [-0.02, 0.2], [-0.05, 0.25], [0.01, 100.0]]
)
#: Candidate delays of the first pass, s.
DELAY_GRID = np.arange(-0.02, 0.1201, 0.005)
#: Gravity droop (rad, at the recorded P gain) from which a joint counts as loaded: two
#: ticks of a 12-bit encoder.
LOAD_DROOP = 2 * 2 * np.pi / 4096
#: Relative cost decrease below which a joint's fit has converged.
CONVERGED = 1e-4
#: Fewest reversals of a joint's goal for its backlash to be identified.
MIN_REVERSALS = 2
#: A parameter whose 95 % half-interval exceeds this share of its value is not identified.
MAX_RELATIVE_INTERVAL = 0.5
#: Parameters judged by their interval relative to their value (backlash and delay may truly
#: be 0: they are judged by :data:`MAX_INTERVAL`).
_RELATIVE = (0, 1, 2, 5)
#: Largest torque limit identified, as a multiple of the file's (the servo's stall torque): a
#: servo does not give twice its stall torque; a fit beyond it found no cut in the data.
MAX_TORQUE_LIMIT = 2.0
#: Widest 95 % half-interval of backlash (0.5°) and delay (10 ms) that counts as identified.
MAX_INTERVAL = {3: np.radians(0.5), 4: 0.010}


@dataclass(frozen=True)
class JointFit:
    """The fit of one joint.

    Attributes:
        joint: Joint name.
        values: Fitted values in :data:`~.model.PARAMETERS` order (the start value where not
            identified).
        interval: 95 % half-widths (NaN where not identified), same order.
        identified: Which parameters the data identify.
        reasons: Parameter -> why it is not identified.
        notes: Parameter -> how it was identified when not from this joint alone.
        rms_start: RMS of recorded minus predicted positions with the start values, rad.
        rms: The same with the fitted values, rad.
    """

    joint: str
    values: np.ndarray
    interval: np.ndarray
    identified: np.ndarray
    reasons: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    rms_start: float = float("nan")
    rms: float = float("nan")

    def value(self, parameter: str) -> float:
        """The fitted value of ``parameter``."""
        return float(self.values[PARAMETERS.index(parameter)])


@dataclass(frozen=True)
class ServoFit:
    """The fit of every joint of a set of recordings."""

    joints: tuple[JointFit, ...]

    def __getitem__(self, joint: str) -> JointFit:
        for fit in self.joints:
            if fit.joint == joint:
                return fit
        raise KeyError(joint)

    def values(self) -> np.ndarray:
        """``(dof, 6)`` fitted values."""
        return np.stack([f.values for f in self.joints])


def reversals(goal: np.ndarray, threshold: float = MOTION) -> int:
    """How often a goal signal ``(n,)`` turns back after moving at least ``threshold``."""
    count, direction, extreme = 0, 0, goal[0]
    for g in goal[1:]:
        if direction == 0:
            if abs(g - goal[0]) >= threshold:
                direction, extreme = (1 if g > goal[0] else -1), g
        elif direction * (g - extreme) > 0:
            extreme = g
        elif abs(g - extreme) >= threshold:
            count += 1
            direction, extreme = -direction, g
    return count


class _Problem:
    """The residuals of every trace for batches of parameter sets."""

    def __init__(self, inputs: Sequence[JointInputs], kp: np.ndarray, kd: np.ndarray) -> None:
        self.inputs, self.kp, self.kd = list(inputs), kp, kd
        self.recorded = np.concatenate([i.trace.position[1:] for i in self.inputs])

    def residuals(self, params: np.ndarray, peak: np.ndarray | None = None) -> np.ndarray:
        """``(batch, frames, dof)`` predicted minus recorded positions."""
        parts = [simulate(i, params, self.kp, self.kd, peak)[:, 1:] for i in self.inputs]
        return np.concatenate(parts, axis=1) - self.recorded[None]


def fit_model(
    inputs: Sequence[JointInputs],
    start: np.ndarray,
    kp: np.ndarray,
    kd: np.ndarray,
    *,
    iterations: int = 25,
    models: Sequence[str] | None = None,
) -> ServoFit:
    """Fit the servo model of every joint to the recordings of ``inputs``.

    Args:
        inputs: One :func:`~.model.joint_inputs` per recording (same robot).
        start: ``(dof, 6)`` start values (the robot file's), also kept where not identified.
        kp: Joint stiffness of the P registers as recorded, N·m/rad, ``(dof,)``.
        kd: Joint damping of the D registers, N·m·s/rad, ``(dof,)``.
        iterations: Most Levenberg-Marquardt iterations.
        models: Each joint's servo model: a joint without gravity load takes the stiffness
            factor of the loaded joints of its model (see :func:`_share_stiffness`).

    Raises:
        IdentificationError: no recording moved any joint.
    """
    if not inputs:
        raise IdentificationError("no recording to identify from")
    traces = [i.trace for i in inputs]
    joints = traces[0].joints
    dof = len(joints)
    problem = _Problem(inputs, kp, kd)
    free = np.ones((dof, len(PARAMETERS)), dtype=bool)
    reasons: list[dict[str, str]] = [{} for _ in range(dof)]
    moved = np.any([moving_joints(t) for t in traces], axis=0)
    if not moved.any():
        raise IdentificationError(
            f"{traces[0].source}: no joint moved by {np.degrees(MOTION):.0f}° or more: too "
            "still to identify anything"
        )
    turns = np.sum([[reversals(t.goal[:, j]) for j in range(dof)] for t in traces], axis=0)
    for j in range(dof):
        if not moved[j]:
            free[j] = False
            reasons[j] = {
                p: f"joint {joints[j]!r} did not move (goal range < {np.degrees(MOTION):.0f}°)"
                for p in PARAMETERS
            }
        elif turns[j] < MIN_REVERSALS:
            free[j, 3] = False
            reasons[j]["backlash"] = (
                f"joint {joints[j]!r}: its goal reverses {turns[j]} "
                f"time(s); backlash needs {MIN_REVERSALS}"
            )
    free[:, 5] = False  # the torque limit: only if the loop reaches it (below)
    x = np.clip(start.astype(np.float64), BOUNDS[:, 0], BOUNDS[:, 1])
    cost_start = _cost(problem.residuals(x[None])[0])
    x = _delay_grid(problem, x, free)
    peak = np.zeros((1, dof))
    problem.residuals(x[None], peak)
    reached = peak[0] >= 0.95 * x[:, 5]
    free[:, 5] = reached & moved
    for j in np.flatnonzero(moved & ~reached):
        reasons[j]["torque_limit"] = (
            f"joint {joints[j]!r} never asked for it (at most "
            f"{peak[0, j]:.3g} N·m of {x[j, 5]:.3g} N·m)"
        )
    x, jacobian, residual = _fit_from_two_starts(problem, x, free, iterations)
    interval = _intervals(jacobian, residual, free)
    notes: list[dict[str, str]] = [{} for _ in range(dof)]
    shared_before = np.array([bool(n) for n in notes])
    unloaded = ~_loaded(inputs, kp) & moved
    if _share_stiffness(inputs, kp, models, x, interval, free, moved, reasons, notes, joints):
        # The joints given a stiffness start again from the file's values (their first fit
        # may have wandered along the stiffness-friction ridge); their Coulomb friction stays
        # at the file's value and the backlash stands for both (see below).
        again = np.array([bool(n) for n in notes]) & ~shared_before
        x[again, 1:] = np.clip(start[again, 1:], BOUNDS[1:, 0], BOUNDS[1:, 1])
        free[again, 1] = False
        x = np.where(again[:, None], _delay_grid(problem, x, free), x)
        x, jacobian, residual = _fit_from_two_starts(problem, x, free, iterations)
        shared = interval[:, 0].copy()
        interval = _intervals(jacobian, residual, free)
        interval[:, 0] = np.where(np.isnan(interval[:, 0]), shared, interval[:, 0])
    for j in range(dof):
        if free[j, 5] and x[j, 5] > MAX_TORQUE_LIMIT * start[j, 5]:
            free[j, 5] = False
            reasons[j]["torque_limit"] = (
                f"joint {joints[j]!r}: the fit puts it at {x[j, 5]:.3g} N·m, beyond "
                f"{MAX_TORQUE_LIMIT:g}× the file's {start[j, 5]:.3g} N·m: the loop's demand was "
                "never cut where the data show it"
            )
            x[j, 5] = start[j, 5]
        for p in _RELATIVE:
            if free[j, p] and interval[j, p] > MAX_RELATIVE_INTERVAL * max(abs(x[j, p]), 1e-9):
                free[j, p] = False
                reasons[j][PARAMETERS[p]] = (
                    f"joint {joints[j]!r}: the data do not pin it down ({x[j, p]:.3g} ± "
                    f"{interval[j, p]:.2g})"
                )
                x[j, p] = start[j, p]
        for p, widest in MAX_INTERVAL.items():
            if free[j, p] and interval[j, p] > widest:
                free[j, p] = False
                reasons[j][PARAMETERS[p]] = (
                    f"joint {joints[j]!r}: the data do not pin it down ({x[j, p]:.3g} ± "
                    f"{interval[j, p]:.2g})"
                )
                x[j, p] = start[j, p]
    for j in np.flatnonzero(unloaded):
        # Without gravity load the play and Coulomb friction both leave the joint within a
        # band of its goal, against the motion: a position record shows their sum only.
        band = np.degrees(x[j, 3] + 2 * x[j, 1] / max(x[j, 0] * kp[j], 1e-12))
        for p in (1, 3):
            free[j, p] = False
            reasons[j][PARAMETERS[p]] = (
                f"joint {joints[j]!r} carries no gravity load: backlash and Coulomb friction "
                f"both hold it in a band about its goal (lost motion {band:.2f}°), not apart"
            )
    cost = _cost(problem.residuals(x[None])[0])
    frames = residual.shape[0]
    fits = tuple(
        JointFit(
            joint=joints[j],
            values=x[j].copy(),
            interval=np.where(free[j] | _noted(notes[j]), interval[j], np.nan),
            identified=free[j] | _noted(notes[j]),
            reasons=reasons[j],
            notes=notes[j],
            rms_start=float(np.sqrt(cost_start[j] / frames)),
            rms=float(np.sqrt(cost[j] / frames)),
        )
        for j in range(dof)
    )
    return ServoFit(joints=fits)


def _fit_from_two_starts(
    problem: _Problem, x: np.ndarray, free: np.ndarray, iterations: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Levenberg-Marquardt from ``x`` and from ``x`` without play; each joint's better fit.

    The second start is made only where a free backlash starts above 0.

    Backlash and Coulomb friction (and on unloaded joints the delay) trade along a ridge: a
    fit started at a file's play may stop on it short of the truth. Joints are independent.
    """
    fitted = _levenberg_marquardt(problem, x, free, iterations)
    if not np.any(free[:, 3] & (x[:, 3] > 0)):
        return fitted
    other = x.copy()
    other[:, 3] = np.where(free[:, 3], 0.0, other[:, 3])
    other = _delay_grid(problem, other, free)
    second = _levenberg_marquardt(problem, other, free, iterations)
    better = _cost(second[2]) < _cost(fitted[2])
    return (
        np.where(better[:, None], second[0], fitted[0]),
        np.where(better[:, None, None], second[1], fitted[1]),
        np.where(better[None, :], second[2], fitted[2]),
    )


def _loaded(inputs: Sequence[JointInputs], kp: np.ndarray) -> np.ndarray:
    """Joints whose gravity droop reaches :data:`LOAD_DROOP` somewhere in the recordings."""
    load = np.max([np.max(np.abs(i.gravity), axis=0) for i in inputs], axis=0)
    return load / np.maximum(kp, 1e-12) >= LOAD_DROOP


def _noted(notes: dict[str, str]) -> np.ndarray:
    return np.array([name in notes for name in PARAMETERS])


def _share_stiffness(
    inputs: Sequence[JointInputs],
    kp: np.ndarray,
    models: Sequence[str] | None,
    x: np.ndarray,
    interval: np.ndarray,
    free: np.ndarray,
    moved: np.ndarray,
    reasons: list[dict[str, str]],
    notes: list[dict[str, str]],
    joints: Sequence[str],
) -> bool:
    """Give joints without gravity load the stiffness factor of their model's loaded joints.

    A position servo that no gravity loads is overdamped at its P gain: at a recording's rate
    its motion shows ``viscous / stiffness`` and ``coulomb / stiffness``, not the stiffness
    itself (the inertial pole is far above 15 Hz). What the P register achieves is the
    servo model's (its duty-to-torque map and supply), which the loaded joints of the same
    model show through their droop. Returns True when some joint changed (refit then).
    """
    dof = x.shape[0]
    loaded = _loaded(inputs, kp)
    changed = False
    for j in range(dof):
        if loaded[j] or not moved[j] or not free[j, 0]:
            continue
        peers = [
            k
            for k in range(dof)
            if loaded[k] and free[k, 0] and (models is None or models[k] == models[j])
        ]
        free[j, 0] = False
        changed = True
        if not peers:
            reasons[j]["stiffness"] = (
                f"joint {joints[j]!r} carries no gravity load and no loaded joint of its servo "
                "model shows the stiffness"
            )
            continue
        x[j, 0] = float(np.mean(x[peers, 0]))
        spread = float(np.std(x[peers, 0])) if len(peers) > 1 else 0.0
        interval[j, 0] = float(np.hypot(np.max(interval[peers, 0]), 1.96 * spread))
        notes[j]["stiffness"] = (
            f"joint {joints[j]!r} carries no gravity load: the stiffness "
            "of " + ", ".join(joints[k] for k in peers) + " (same model)"
        )
    return changed


def _cost(residual: np.ndarray) -> np.ndarray:
    """Sum of squares per joint of ``(frames, dof)`` residuals."""
    return np.sum(residual * residual, axis=0)


def _delay_grid(problem: _Problem, x: np.ndarray, free: np.ndarray) -> np.ndarray:
    """``x`` with each free delay set to the best of :data:`DELAY_GRID` (a global start)."""
    batch = np.repeat(x[None], len(DELAY_GRID), axis=0)
    batch[:, :, 4] = DELAY_GRID[:, None]
    cost = np.sum(problem.residuals(batch) ** 2, axis=1)  # (grid, dof)
    best = DELAY_GRID[np.argmin(cost, axis=0)]
    x = x.copy()
    x[:, 4] = np.where(free[:, 4], best, x[:, 4])
    return x


def _jacobian(problem: _Problem, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Residuals ``(frames, dof)`` at ``x`` and Jacobians ``(dof, frames, 6)`` (scaled)."""
    count = len(PARAMETERS)
    batch = np.repeat(x[None], count + 1, axis=0)
    steps = np.where(x + STEPS > BOUNDS[:, 1], -STEPS, STEPS)  # (dof, 6)
    for p in range(count):
        batch[1 + p, :, p] += steps[:, p]
    r = problem.residuals(batch)
    jac = (r[1:] - r[0][None]) / steps.T[:, None, :] * STEPS[:, None, None]  # (6, frames, dof)
    return r[0], np.moveaxis(jac, (0, 2), (2, 0))


def _levenberg_marquardt(
    problem: _Problem, x: np.ndarray, free: np.ndarray, iterations: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-joint Levenberg-Marquardt; each trial is evaluated with its Jacobian (one batch)."""
    dof = x.shape[0]
    damping = np.full(dof, 1e-2)
    residual, jacobian = _jacobian(problem, x)
    cost = _cost(residual)
    for _ in range(iterations):
        trial = x.copy()
        for j in range(dof):
            columns = np.flatnonzero(free[j])
            if not len(columns):
                continue
            jac = jacobian[j][:, columns]
            normal = jac.T @ jac
            gradient = jac.T @ residual[:, j]
            scaled = normal + damping[j] * np.diag(np.diag(normal) + 1e-9)
            step = -np.linalg.solve(scaled, gradient)
            trial[j, columns] = x[j, columns] + step * STEPS[columns]
        trial = np.clip(trial, BOUNDS[:, 0], BOUNDS[:, 1])
        trial_residual, trial_jacobian = _jacobian(problem, trial)
        trial_cost = _cost(trial_residual)
        better = trial_cost < cost
        gain = np.where(better, (cost - trial_cost) / np.maximum(cost, 1e-300), 0.0)
        x = np.where(better[:, None], trial, x)
        residual = np.where(better[None], trial_residual, residual)
        jacobian = np.where(better[:, None, None], trial_jacobian, jacobian)
        cost = np.where(better, trial_cost, cost)
        damping = np.where(better, damping / 3.0, damping * 4.0)
        if np.all(gain < CONVERGED):
            break
    return x, jacobian, residual


def _intervals(jacobian: np.ndarray, residual: np.ndarray, free: np.ndarray) -> np.ndarray:
    """95 % half-widths of every free parameter (independent residuals assumed)."""
    dof, frames, count = jacobian.shape
    out = np.full((dof, count), np.nan)
    for j in range(dof):
        columns = np.flatnonzero(free[j])
        if not len(columns):
            continue
        jac = jacobian[j][:, columns]
        sigma2 = float(residual[:, j] @ residual[:, j]) / max(frames - len(columns), 1)
        covariance = sigma2 * np.linalg.pinv(jac.T @ jac)
        out[j, columns] = 1.96 * np.sqrt(np.maximum(np.diag(covariance), 0)) * STEPS[columns]
    return out
