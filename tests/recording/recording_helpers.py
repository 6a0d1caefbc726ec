"""Builders for the recording tests: a deterministic run of states and actions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.interface import ActuatorState, ArrayState, NJointAction
from jointlab.recording import LogMetadata

DOF = 3
DT = 0.01


@dataclass
class Run:
    times: list[float]
    desired: list[NJointAction]
    applied: list[NJointAction]
    states: list[ArrayState]
    metadata: LogMetadata

    def stacked(self, channel: str, field: str) -> np.ndarray:
        items = {"desired": self.desired, "applied": self.applied, "state": self.states}[channel]
        return np.array([np.asarray(getattr(x, field), dtype=np.float64) for x in items])


def flags_at(k: int, n: int) -> np.ndarray:
    """Actuator flags: IDLE, then MOVING, then BRAKED|IDLE; joint 2 stalls in the middle."""
    if k < n // 4:
        flags = [ActuatorState.IDLE] * DOF
    elif k < 3 * n // 4:
        flags = [ActuatorState.MOVING] * DOF
    else:
        flags = [ActuatorState.BRAKED | ActuatorState.IDLE] * DOF
    if n // 2 <= k < n // 2 + 5:
        flags[2] = ActuatorState.STALLED
    return np.array([int(f) for f in flags], dtype=np.uint8)


def make_run(n: int = 40, seed: int = 0) -> Run:
    """A run of ``n`` ticks with NaN targets (PD off) on joint 0 early, and -0.0 values."""
    rng = np.random.default_rng(seed)
    times, desired, applied, states = [], [], [], []
    for k in range(n):
        t = k * DT
        target = np.array([0.5 * np.sin(t), -0.3 * t, 0.1 + 1e-17 * k])
        if k < n // 4:
            target[0] = np.nan
        torque = rng.normal(size=DOF)
        desired.append(NJointAction.TorqueAndPosition(torque, target, [np.nan, 20.0, 30.0]))
        applied.append(NJointAction.TorqueAndPosition(np.clip(torque, -1, 1), target))
        position = target + rng.normal(scale=1e-3, size=DOF)
        position[0] = np.nan_to_num(position[0], nan=rng.normal())
        states.append(
            ArrayState(
                time=t,
                position=position,
                velocity=np.array([-0.0, rng.normal(), 1e-310]),
                acceleration=rng.normal(size=DOF),
                torque=np.clip(torque, -1, 1),
                current=rng.normal(size=DOF) * 0.2,
                actuator_state=flags_at(k, n),
                motor_power=True,
                armed=k % 2 == 0,
            )
        )
        times.append(t)
    metadata = LogMetadata(
        robot="testbot",
        joint_names=("shoulder", "elbow", "wrist"),
        dt=DT,
        effort_limit=(1.0, 2.0, 1.5),
        position_lower=(-1.0, -2.0, -0.5),
        position_upper=(1.0, 2.0, 0.5),
        velocity_limit=(3.0, 3.0, 3.0),
        current_limit=(5.0, 5.0, 5.0),
        extra={"seed": seed, "backend": "none"},
    )
    return Run(times, desired, applied, states, metadata)
