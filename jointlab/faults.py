"""What every loop does when its robot faults: one rule for ``run``, teleop, recording, envs.

A robot faults when a device stops itself (:class:`~jointlab.errors.DeviceFault`: a servo's
overload, heat or voltage protection, a host stall guard) or stops answering
(:class:`~jointlab.errors.LinkError`, of which :class:`~jointlab.errors.DeviceLost` is the
servo kind). Every loop then follows :func:`stop_after_fault`:

1. the fault goes into the log as a ``fault`` event (its message, joint, device, reasons);
2. the other joints hold where they are for one period (:func:`jointlab.holding.hold_action`),
   then the robot disarms: best effort, on a link that may be dead;
3. the loop stops with the error (the command line prints its message and exits non-zero).

A loop wraps its steps in ``with FaultRule(robot, recorder):`` (:class:`FaultRule`), or
calls :func:`stop_after_fault` itself where the event's time is its own (``run()``'s last
state) or per-step cost counts (an env's ``step``).

A servo bus robot does step 2 itself the moment it sees the fault, before it raises; this
rule is then only the log and a disarm that is already done.
"""

from __future__ import annotations

from typing import Any

from jointlab.contract import Robot
from jointlab.errors import DeviceFault, JointLabError, LinkError
from jointlab.holding import hold_action

__all__ = ["FAULTS", "FaultRule", "fault_fields", "hold_then_disarm", "stop_after_fault"]

#: The errors that are a robot's fault, not the caller's: every loop stops safely on them.
FAULTS: tuple[type[BaseException], ...] = (DeviceFault, LinkError)


def fault_fields(error: BaseException) -> dict[str, Any]:
    """The ``fault`` event's fields: the message, and the joint, device and reasons if known."""
    fields: dict[str, Any] = {
        "message": " ".join(str(error).split()),
        "error": type(error).__name__,
    }
    if isinstance(error, DeviceFault):
        fields.update(
            joint=error.joint, device=error.device, reasons=list(error.reasons), bits=error.bits
        )
    return fields


def stop_after_fault(
    robot: Robot, error: BaseException, recorder: Any = None, time: float | None = None
) -> None:
    """Log ``error`` as a ``fault`` event, hold the joints one period, disarm (never raises).

    Args:
        robot: The robot that faulted.
        error: What it raised.
        recorder: A :class:`~jointlab.recording.Recorder` (or anything with
            ``event(time, kind, **fields)``), or None.
        time: The event's time, s (default: the robot's ``time``, 0 if it cannot say).
    """
    if recorder is not None and not getattr(recorder, "closed", False):
        if time is None:
            try:
                time = float(robot.time)
            except Exception:
                time = 0.0
        try:
            recorder.event(time, "fault", **fault_fields(error))
        except JointLabError:
            pass
    hold_then_disarm(robot)


class FaultRule:
    """``with FaultRule(robot, recorder):``: a fault raised in the block follows the rule.

    A :data:`FAULTS` error leaving the block gets :func:`stop_after_fault` (logged at the
    robot's time, held one period, disarmed), then goes on to the caller; any other error
    passes untouched. It costs under a microsecond per block: per-step code on the hottest
    path (an env's ``step``) keeps a plain ``try``/``except FAULTS``.
    """

    __slots__ = ("recorder", "robot")

    def __init__(self, robot: Robot, recorder: Any = None) -> None:
        self.robot = robot
        self.recorder = recorder

    def __enter__(self) -> FaultRule:
        return self

    def __exit__(self, kind: Any, error: BaseException | None, traceback: Any) -> bool:
        if isinstance(error, FAULTS):
            stop_after_fault(self.robot, error, self.recorder)
        return False  # the error, if any, goes on


def hold_then_disarm(robot: Robot) -> None:
    """Hold an armed robot's present pose for one period, then disarm it (never raises).

    The rule's step 2 (module docstring), also how a procedure that ends on its own stops
    safely (``jointlab acceptance``): best effort on a link that may be dead.
    """
    try:
        state = robot.read()
    except Exception:
        return
    if not state.armed:
        return
    try:
        robot.apply(hold_action(robot.description, state.position))
        robot.step()
    except Exception:
        pass  # a dead link: go straight to disarming
    try:
        robot.disarm()
    except Exception:
        pass
