"""Replaying a log's commands in simulation, and the latency search built on it.

:func:`replay` starts a :class:`~jointlab.sim.SimRobot` of a description at the log's first
state and applies each logged desired action for the control periods it was in force (the
PD, the latency, the saturation and the friction run inside the simulated actuators, as on
the device); it returns the simulated positions row by row. Comparing them with the recorded
ones says how well a description predicts the robot: that is the tracking difference of the
validation report and the score of :func:`search_delay`.

It does what :func:`jointlab.recording.replay.replay` does for any robot, in a loop of its
own: a fit replays a log several times, and building the actions from arrays checked once
(``NJointAction.from_validated``) and keeping only the positions halves the cost per period
(``benchmarks/identification.py``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from jointlab.identify.data import IdentificationData
from jointlab.identify.errors import IdentificationError
from jointlab.identify.writeback import write_parameters
from jointlab.interface import NJointAction
from jointlab.robots import RobotDescription
from jointlab.robots.gains import UnstableGainsWarning

__all__ = ["DelaySearch", "replay", "search_delay", "tracking_rms"]


def replay(data: IdentificationData, description: RobotDescription) -> np.ndarray:
    """Simulated joint positions at every row of the log, rad or m, shape ``(T, dof)``.

    Args:
        data: The aligned log (needs its desired channel).
        description: The robot to simulate (same joints as the log).
    """
    from jointlab.sim import SimRobot

    commands = data.commands
    if commands is None:
        raise IdentificationError(
            f"{data.source}: the log has no desired channel (the commands), so it cannot be "
            "replayed; record with run(..., recorder=...) or `jointlab identify excite`"
        )
    out = np.empty((data.rows, data.dof))
    zero = NJointAction.Zero(data.dof)
    finite = np.all(np.isfinite(commands.torque), axis=1)
    with warnings.catch_warnings():
        # A candidate's default gains may fail the explicit-PD check (an armature estimated
        # low, say): the replay applies the logged gains, and its score judges the candidate.
        warnings.simplefilter("ignore", UnstableGainsWarning)
        robot = SimRobot(
            description, dt=data.physics_dt, control_dt=data.dt, stall_time=None, gain_check="warn"
        )
    with robot:
        robot.reset(data.position[0], data.velocity[0])
        read, apply, step = robot.read, robot.apply, robot.step
        for k, periods in enumerate(data.periods.tolist()):
            out[k] = read().position
            if finite[k]:
                apply(
                    NJointAction.from_validated(
                        commands.torque[k].copy(),
                        commands.position[k].copy(),
                        commands.kp[k].copy(),
                        commands.kd[k].copy(),
                        commands.velocity[k].copy(),
                    )
                )
            else:  # a row without a command: the robot was driven by nothing
                apply(zero)
            for _ in range(periods):  # a row followed by missed periods spans several
                step()
    return out


def tracking_rms(data: IdentificationData, simulated: np.ndarray) -> np.ndarray:
    """RMS of ``simulated − recorded`` position per joint over usable rows, shape ``(dof,)``."""
    keep = data.usable & np.all(np.isfinite(simulated), axis=1)
    error = simulated[keep] - data.position[keep]
    return np.sqrt(np.mean(error**2, axis=0))


@dataclass(frozen=True, eq=False)
class DelaySearch:
    """Outcome of :func:`search_delay`."""

    #: Chosen delay per joint index, physics steps.
    delay: dict[int, int]
    #: Candidate delays tried per joint index (physics steps) ...
    candidates: dict[int, np.ndarray]
    #: ... and the replay's tracking RMS of that joint for each, rad or m.
    scores: dict[int, np.ndarray]

    def interval(self, joint: int, tolerance: float = 0.1) -> tuple[int, int]:
        """Smallest and largest candidate scoring within ``tolerance`` of the best."""
        scores = self.scores[joint]
        close = self.candidates[joint][scores <= scores.min() * (1.0 + tolerance)]
        return int(close.min()), int(close.max())


def search_delay(
    data: IdentificationData,
    description: RobotDescription,
    joints: list[int],
    guesses: dict[int, int],
    max_delay: int,
    spread: int = 1,
) -> DelaySearch:
    """Choose ``motor.delay`` per joint by replaying the log with candidate delays.

    With first guesses (see :func:`jointlab.identify.actuator.guess_delay`) one replay has
    every joint at its guess, and each other replay shifts one joint's guess by ``s`` in
    ``-spread..spread`` with the rest at their guesses (``1 + 2·spread·n`` replays): a
    joint pushed past the latency it tolerates shakes the others, so shifting every guess
    at once scored a joint's right delay in a replay where its neighbours oscillated (and
    chose its wrong guess when two candidates' torque matches were within 1 %). Without
    guesses every joint tries ``0..max_delay`` together. Each joint keeps the candidate
    whose replay tracks its recorded positions best.

    Args:
        data: The aligned log.
        description: The robot to simulate (identified friction and inertia already in).
        joints: Joint indices whose delay is searched (the others keep theirs).
        guesses: First guesses per joint index, physics steps (may be empty).
        max_delay: Largest delay tried, physics steps.
        spread: Steps tried either side of the guesses.
    """
    names = description.joint_names
    if guesses and all(j in guesses for j in joints):
        base = {j: guesses[j] for j in joints}
        plans = [base] + [
            {**base, j: min(max(guesses[j] + s, 0), max_delay)}
            for j in joints
            for s in range(-spread, spread + 1)
            if s
        ]
    else:
        plans = [dict.fromkeys(joints, d) for d in range(max_delay + 1)]
    unique: list[dict[int, int]] = []
    for plan in plans:
        if plan not in unique:
            unique.append(plan)
    tried: dict[int, list[int]] = {j: [] for j in joints}
    scored: dict[int, list[float]] = {j: [] for j in joints}
    for plan in unique:
        candidate = write_parameters(description, {"delay": {names[j]: d for j, d in plan.items()}})
        rms = tracking_rms(data, replay(data, candidate))
        for j, d in plan.items():
            if d not in tried[j]:
                tried[j].append(d)
                scored[j].append(float(rms[j]))
    candidates = {j: np.array(tried[j]) for j in joints}
    scores = {j: np.array(scored[j]) for j in joints}
    delay = {j: int(candidates[j][int(np.argmin(scores[j]))]) for j in joints}
    return DelaySearch(delay=delay, candidates=candidates, scores=scores)
