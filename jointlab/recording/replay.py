"""Replay a recorded run on any robot: the same actions, tick by tick, open loop.

A log written by :func:`jointlab.controllers.run`, ``jointlab run``/``demo`` or
``jointlab record`` holds, per control period, the state at its start and the
:class:`~jointlab.interface.NJointAction` applied during it (the ``desired`` channel).
:func:`replay` starts the robot from the first logged state and applies those actions
again, one per period, recording what the robot does; comparing the two logs
(:func:`jointlab.recording.plots.plot_comparison`) shows how two backends differ for the
same inputs, e.g. a run recorded on a device replayed in simulation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError
from jointlab.faults import FAULTS, stop_after_fault
from jointlab.interface import NJointAction
from jointlab.recording.formats import load_log
from jointlab.recording.log import DESIRED, STATE, Log

__all__ = ["logged_actions", "replay"]

_FIELDS = ("torque", "position", "position_kp", "position_kd", "velocity")


def logged_actions(log: Log, channel: str = DESIRED) -> list[NJointAction]:
    """The actions of ``channel`` in ``log``, one per row (a NaN torque row is 0 torque).

    Raises:
        ConfigurationError: the log has no such channel (names the channels it has).
    """
    missing = [f"{channel}.{name}" for name in _FIELDS if f"{channel}.{name}" not in log]
    if missing:
        raise ConfigurationError(
            f"{log.source or 'the log'}: no actions to replay: fields {missing} are missing "
            f"(channels: {list(log.channels)})"
        )
    values = {name: np.asarray(log[f"{channel}.{name}"]).reshape(len(log), -1) for name in _FIELDS}
    values["torque"] = np.nan_to_num(values["torque"], nan=0.0)
    return [NJointAction(*(values[name][row] for name in _FIELDS)) for row in range(len(log))]


def replay(robot: Robot, source: Log | str, *, recorder: Any = None, channel: str = DESIRED) -> Log:
    """Apply the logged actions of ``source`` to ``robot``, each for as long as it was logged.

    Each row's action is applied for one control period, or for as many as the log's time
    says it stayed in force (a late host on a device). The robot is first reset to the first
    logged state's position and velocity (a move on a device; a joint logged resting a hair
    beyond a stop starts on it) and armed if it is not. Each
    period is logged to ``recorder`` as :func:`jointlab.controllers.run` does: the state at
    its start, the action (``desired``) and the torque applied during it (``applied``).

    Args:
        robot: Any backend; its control period must equal the log's ``metadata.dt``.
        source: A :class:`Log` or a log path.
        recorder: Optional :class:`jointlab.recording.Recorder` for the replay.
        channel: The channel holding the actions.

    Returns:
        The log that was replayed.

    Raises:
        ConfigurationError: no actions in the log, another joint count, or another period.
        DeviceFault: a device stopped itself; LinkError: the robot stopped answering. Either
            way after :func:`jointlab.faults.stop_after_fault` (a ``fault`` event in
            ``recorder``, held one period, disarmed).
    """
    log = load_log(source)
    actions = logged_actions(log, channel)
    dof = actions[0].torque.shape[0] if actions else 0
    if dof != robot.dof:
        raise ConfigurationError(
            f"{log.source or 'the log'} holds {dof}-joint actions; "
            f"{robot.description.name} has {robot.dof} joints"
        )
    period = log.metadata.dt
    if period is not None and abs(period - robot.control_dt) > 1e-9:
        raise ConfigurationError(
            f"{log.source or 'the log'} was recorded every {period} s; the robot steps every "
            f"{robot.control_dt} s: connect it with that control period"
        )
    if not robot.read().armed:
        robot.arm()
    start = f"{STATE}.position"
    state = robot.read()
    try:
        if start in log and np.isfinite(log[start][0]).all():
            velocity = log[f"{STATE}.velocity"][0] if f"{STATE}.velocity" in log else None
            robot.reset(
                np.asarray(log[start][0], dtype=np.float64),
                None if velocity is None else np.asarray(velocity),
            )
            state = robot.read()
        for action, repeat in zip(actions, _periods(log.time, robot.control_dt), strict=True):
            robot.apply(action)
            for _ in range(repeat):
                robot.step()
                following = robot.read()
                if recorder is not None:
                    applied = NJointAction.Torque(following.torque)
                    recorder.log(state.time, desired=action, applied=applied, state=state)
                state = following
    except FAULTS as exc:  # the robot faulted: log it, hold, disarm, stop with the error
        stop_after_fault(robot, exc, recorder, state.time)
        raise
    return log


def _periods(time: np.ndarray, period: float) -> np.ndarray:
    """Control periods each row's action was in force (>= 1; the last row: 1).

    A row followed by a gap of several periods (a host that was late on a device, which
    then kept the command in force) is replayed for as many periods.
    """
    gaps = np.diff(np.asarray(time, dtype=np.float64)) / period
    return np.append(np.maximum(np.rint(gaps), 1), 1).astype(int) if len(time) else np.zeros(0, int)
