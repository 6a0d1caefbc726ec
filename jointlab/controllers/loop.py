"""The one control loop, for simulation and hardware alike.

Each tick of :func:`run`::

    state  = robot.read()            # the state at the start of the period
    action = controller.compute(state)
    robot.apply(action)              # used from the next physics step / firmware tick on
    robot.step()                     # advance one control period
    recorder.log(state.time, desired=..., applied=Torque(torque applied), state=state)

In simulation ``step()`` advances simulated time as fast as the machine allows. When the
robot is real-time (``robot.realtime``, hardware) or a ``rate`` is given, the loop also paces
itself to wall-clock time with :func:`time.perf_counter`: a tick that ends later than its
deadline by more than ``overrun_tolerance`` periods is an *overrun*, and the schedule restarts
from that moment instead of trying to catch up.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError
from jointlab.faults import FAULTS, FaultRule, stop_after_fault
from jointlab.interface import ArrayState, NJointAction

__all__ = ["RunSummary", "drive_until_done", "run", "tick"]

_SPIN = 2e-4  # seconds of busy-waiting before a deadline (sleep is coarser than that)


@dataclass(frozen=True)
class RunSummary:
    """What :func:`run` did."""

    #: Control ticks executed.
    ticks: int
    #: Robot time elapsed, seconds (simulated time in sim).
    duration: float
    #: Wall-clock time elapsed, seconds.
    wall_time: float
    #: ``ticks / wall_time``, Hz.
    achieved_rate: float
    #: The paced rate in Hz, or ``None`` when the loop ran unpaced (simulation).
    target_rate: float | None
    #: Ticks that ended late by more than the tolerance (only counted when paced).
    overruns: int
    #: Largest ``|position target − q|`` over ticks and PD joints, rad or m (NaN if none).
    #: The target is what was commanded: a Commander's ``last_commanded`` (before a servo's
    #: gravity offset, as the log's ``commanded`` channel and the plots), else the action's.
    max_tracking_error: float
    #: Root mean square of the same errors, rad or m (NaN if none).
    rms_tracking_error: float
    #: Median time of ``controller.compute``, seconds.
    compute_time_median: float
    #: 99th percentile of the compute time, seconds.
    compute_time_p99: float
    #: Longest compute time, seconds.
    compute_time_max: float
    #: ``"duration"``, ``"until"`` or ``"idle"`` (a Commander with nothing left to do).
    stopped_by: str


def tick(robot: Robot, controller: Any) -> NJointAction:
    """One tick without stepping: read ``robot``, compute ``controller``'s action, apply it.

    Returns:
        The action applied (the controller's, after its own safety layer).
    """
    action = controller.compute(robot.read())
    robot.apply(action)
    return action


def drive_until_done(
    robot: Robot, commander: Any, handle: Any = None, timeout: float | None = None
) -> bool:
    """Tick and step ``robot`` under ``commander`` until ``handle`` (or every command) is done.

    Args:
        robot: The robot the commander commands.
        commander: A :class:`~jointlab.controllers.commander.Commander` (``idle`` and a
            controller's ``compute``).
        handle: The :class:`~jointlab.controllers.events.CommandHandle` to wait for;
            ``None`` waits until the commander is idle.
        timeout: Robot-time limit in seconds (simulated time in sim); required for
            open-ended commands.

    Returns:
        True when the command finished, False on timeout.

    Raises:
        DeviceFault: a device stopped itself; LinkError: the robot stopped answering. Either
            way the robot first follows :func:`jointlab.faults.stop_after_fault` (held one
            period, disarmed).
    """
    if timeout is None and handle is not None and handle.open_ended:
        raise ConfigurationError(
            f"{handle.verb} command {handle.command_id!r} only ends when replaced; "
            "give wait() a timeout"
        )
    deadline = math.inf if timeout is None else robot.time + float(timeout)
    step = robot.control_dt
    with FaultRule(robot):
        while True:
            tick(robot, commander)
            if handle.done if handle is not None else commander.idle:
                return True
            if robot.time + 0.5 * step >= deadline:
                return False
            robot.step()


def _forward_events(controller: Any, recorder: Any) -> Callable[[], None] | None:
    """Forward a Commander's events to ``recorder.event`` for the length of the run."""
    subscribe = getattr(controller, "subscribe", None)
    record = getattr(recorder, "event", None)
    if subscribe is None or record is None:
        return None

    def forward(event: Any) -> None:
        record(event.time, event.kind.value, **event.fields())

    return subscribe(forward)


def run(
    robot: Robot,
    controller: Any,
    duration: float | None = None,
    until: Callable[[ArrayState], bool] | None = None,
    rate: float | None = None,
    recorder: Any = None,
    *,
    reset: bool = True,
    overrun_tolerance: float = 0.1,
) -> RunSummary:
    """Run ``controller`` on ``robot`` for ``duration`` seconds or until ``until(state)``.

    Args:
        robot: Any :class:`~jointlab.contract.Robot` (``SimRobot``, ``SerialRobot``).
        controller: An object with ``reset(state)`` and ``compute(state) -> NJointAction``
            (a :class:`~jointlab.controllers.commander.Commander` is one).
        duration: Robot time to run, seconds (rounded to whole control periods).
        until: Predicate on the state read at the start of each tick; the run stops when it
            returns True.
        rate: Pace the loop to this many ticks per wall-clock second. ``None``: pace at
            ``1 / robot.control_dt`` when ``robot.realtime`` is True, else do not pace.
        recorder: Anything with ``log(time, **loggables)`` (a
            :class:`jointlab.recording.Recorder`); logs ``desired`` (the controller's
            ``last_desired`` when it has one, else its action), ``applied`` (the torque the
            robot applied during the period, as ``NJointAction.Torque``) and ``state`` (the
            state the action was computed from); for a controller with ``last_commanded``
            (the Commander) also ``commanded`` (the commands' own targets and torque),
            ``feedforward`` (its model torque, N·m) and ``sent`` (the action handed to the
            robot). When both have it, the controller's events are forwarded to
            ``recorder.event``.
        reset: Call ``controller.reset(state)`` before the first tick.
        overrun_tolerance: Lateness, in periods, beyond which a paced tick is an overrun.

    Without ``duration`` and ``until`` the controller must have an ``idle`` property (the
    Commander): the run ends once it is True.

    Returns:
        A :class:`RunSummary`.

    When the robot faults (:data:`jointlab.faults.FAULTS`: a device's protection, a lost
    link) the run follows :func:`jointlab.faults.stop_after_fault` (a ``fault`` event in the
    recorder, the joints held one period, the robot disarmed) and raises the error.

    Raises:
        ConfigurationError: no stopping condition, or a non-positive ``rate``/``duration``.
        DeviceFault: a device stopped itself (the robot is disarmed, the fault logged).
        LinkError: the robot stopped answering (likewise).
    """
    idle_mode = duration is None and until is None
    if idle_mode and not hasattr(controller, "idle"):
        raise ConfigurationError(
            "run() needs duration= or until= (only a controller with an 'idle' property, "
            "such as a Commander, can run until it has nothing left to do)"
        )
    if duration is not None and not (math.isfinite(duration) and duration >= 0):
        raise ConfigurationError(f"duration must be finite and >= 0 seconds, got {duration}")
    if rate is not None and not (math.isfinite(rate) and rate > 0):
        raise ConfigurationError(f"rate must be a positive number of Hz, got {rate}")
    dt = robot.control_dt
    max_ticks = None if duration is None else round(duration / dt)
    # A Commander also says what was commanded and its feed-forward: logged as their own
    # channels, so a plot's tracking error is against the commanded target on every backend.
    commanded = hasattr(controller, "last_commanded")
    paced = rate is not None or bool(getattr(robot, "realtime", False))
    period = 1.0 / rate if rate is not None else dt

    state = robot.read()
    start_time = state.time
    if reset:
        controller.reset(state)
    unsubscribe = _forward_events(controller, recorder) if recorder is not None else None
    compute_times: list[float] = []
    ticks = overruns = 0
    max_error = 0.0
    sum_sq = 0.0
    count = 0
    stopped_by = "duration"
    perf = time.perf_counter
    start_wall = deadline = perf()
    try:
        while True:
            if max_ticks is not None and ticks >= max_ticks:
                stopped_by = "duration"
                break
            if until is not None and until(state):
                stopped_by = "until"
                break
            if idle_mode and controller.idle:
                stopped_by = "idle"
                break
            t0 = perf()
            action = controller.compute(state)
            compute_times.append(perf() - t0)
            robot.apply(action)
            robot.step()
            next_state = robot.read()
            # Against what was commanded: a Commander's own targets, not the sent ones (a
            # position-only servo's carry the gravity offset g(q)/kp).
            reference = controller.last_commanded if commanded else action
            mask = reference.pd_mask
            if mask.any():
                error = np.abs(reference.position[mask] - state.position[mask])
                max_error = max(max_error, float(error.max()))
                sum_sq += float(error @ error)
                count += error.shape[0]
            if recorder is not None:
                desired = getattr(controller, "last_desired", None) or action
                applied = NJointAction.Torque(next_state.torque)
                if commanded:
                    recorder.log(
                        state.time,
                        commanded=controller.last_commanded,
                        feedforward={"torque": controller.last_feedforward},
                        desired=desired,
                        sent=action,
                        applied=applied,
                        state=state,
                    )
                else:
                    recorder.log(state.time, desired=desired, applied=applied, state=state)
            state = next_state
            ticks += 1
            if paced:
                deadline += period
                now = perf()
                if now > deadline + overrun_tolerance * period:
                    overruns += 1
                    deadline = now
                else:
                    if deadline - now > _SPIN:
                        time.sleep(deadline - now - _SPIN)
                    while perf() < deadline:
                        pass
    except FAULTS as exc:  # the robot faulted: log it, hold, disarm, stop with the error
        stop_after_fault(robot, exc, recorder, state.time)
        raise
    finally:
        if unsubscribe is not None:
            unsubscribe()
    wall = perf() - start_wall
    times = np.array(compute_times) if compute_times else np.array([math.nan])
    return RunSummary(
        ticks=ticks,
        duration=state.time - start_time,
        wall_time=wall,
        achieved_rate=ticks / wall if wall > 0 else math.inf,
        target_rate=(1.0 / period) if paced else None,
        overruns=overruns,
        max_tracking_error=max_error if count else math.nan,
        rms_tracking_error=math.sqrt(sum_sq / count) if count else math.nan,
        compute_time_median=float(np.median(times)),
        compute_time_p99=float(np.percentile(times, 99)),
        compute_time_max=float(np.max(times)),
        stopped_by=stopped_by,
    )
