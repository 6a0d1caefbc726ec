"""The teleoperation loop: leader reading -> follower targets, one follower period at a time.

Each period (:meth:`Teleop.step`): read the follower's state, read the leader once (a leader
arm: one bus cycle), map the reading to follower targets (:class:`JointMap`), limit each
joint's step from its present position to ``max_step`` (LeRobot's ``max_relative_target``),
apply the targets as a position action and step the follower.

Stopping is always the same (:meth:`Teleop.stop`): the follower holds its present position for
one period, then disarms. :meth:`Teleop.run` stops so on Ctrl-C and at its end; on a fault
(a servo's protection, a lost link of either arm, even while stopping) it follows the rule
of every loop, :func:`jointlab.faults.stop_after_fault`. The follower is armed only through
``robot.arm()``, which holds the present pose before torque is enabled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError, JointLabError, LinkError
from jointlab.faults import FAULTS, stop_after_fault
from jointlab.interface import ArrayState, NJointAction
from jointlab.teleop.mapping import JointMap
from jointlab.teleop.teleoperator import Teleoperator

__all__ = ["Teleop", "TeleopSample", "TeleopSummary"]


@dataclass(frozen=True)
class TeleopSample:
    """One teleoperation period.

    Attributes:
        state: The follower's state at the start of the period.
        reading: The leader's reading, ``(n_leader,)``, rad.
        target: The follower targets applied (after the step limit), ``(dof,)``, rad.
        limited: Joints whose step was cut by ``max_step``, ``(dof,)`` bool.
    """

    state: ArrayState
    reading: np.ndarray
    target: np.ndarray
    limited: np.ndarray


@dataclass(frozen=True)
class TeleopSummary:
    """How a :meth:`Teleop.run` went.

    Attributes:
        periods: Follower periods run.
        stopped_by: ``"periods"``, ``"until"``, ``"interrupted"`` (Ctrl-C), ``"link"`` or
            ``"fault"`` (a servo stopped itself: its ``DeviceFault``).
        error: The link error's or the fault's message.
        max_tracking_error: Largest |target - position| over the run, rad (0 before a period).
        limited_periods: Periods in which ``max_step`` cut at least one joint.
    """

    periods: int
    stopped_by: str
    error: str
    max_tracking_error: float
    limited_periods: int


class Teleop:
    """Drive ``follower`` from ``leader`` (see the module docstring).

    Args:
        leader: The teleoperator.
        follower: Any backend.
        joint_map: The pairing (default: :meth:`JointMap.build` with ``mapping``).
        mapping: ``"direct"`` or ``"range"`` (when ``joint_map`` is None).
        max_step: Largest target step from the present position per period, rad (a number
            or ``(dof,)``); None: no limit.

    Raises:
        ConfigurationError: the arms do not pair (counts or ranges), or ``max_step`` is not
            positive.
    """

    def __init__(
        self,
        leader: Teleoperator,
        follower: Robot,
        joint_map: JointMap | None = None,
        mapping: str = "direct",
        max_step: float | np.ndarray | None = None,
    ) -> None:
        self.leader = leader
        self.follower = follower
        self.joint_map = joint_map or JointMap.build(
            leader.joint_names, leader.lower, leader.upper, follower.description, mapping
        )
        if max_step is not None:
            step = np.broadcast_to(np.asarray(max_step, dtype=np.float64), (follower.dof,))
            if not np.all(np.isfinite(step) & (step > 0)):
                raise ConfigurationError(f"max_step must be positive radians, got {max_step!r}")
            max_step = step.copy()
        self.max_step = max_step
        self.periods = 0

    def start(self) -> ArrayState:
        """Arm the follower (holding its pose) if it is not; its state."""
        if not self.follower.read().armed:
            self.follower.arm()
        return self.follower.read()

    def step(self) -> TeleopSample:
        """One period: read, map, limit, apply, step (see the module docstring)."""
        state = self.follower.read()
        reading = self.leader.read()
        target = self.joint_map.targets(reading, state.position)
        limited = np.zeros(self.follower.dof, dtype=bool)
        if self.max_step is not None:
            low, high = state.position - self.max_step, state.position + self.max_step
            limited = (target < low) | (target > high)
            target = np.clip(target, low, high)
        self.follower.apply(NJointAction.Position(target))
        self.follower.step()
        self.periods += 1
        return TeleopSample(state, reading, target, limited)

    def stop(self) -> BaseException | None:
        """Hold the present position for one period, then disarm (best effort on a dead link).

        Returns:
            The fault the follower raised while holding (:data:`jointlab.faults.FAULTS`),
            after :func:`jointlab.faults.stop_after_fault` (held, disarmed); else None. The
            caller decides whether it ends its loop with it (:meth:`run` and
            :func:`jointlab.interop.record.record_teleop` do).
        """
        try:
            present = self.follower.read()
            if present.armed:
                self.follower.apply(NJointAction.Position(present.position))
                self.follower.step()
        except FAULTS as exc:  # a fault while stopping is still a fault: the one rule
            stop_after_fault(self.follower, exc)
            return exc
        except JointLabError:
            pass
        try:
            self.follower.disarm()
        except JointLabError:
            pass
        return None

    def run(
        self,
        periods: int | None = None,
        on_sample: Callable[[TeleopSample], None] | None = None,
        until: Callable[[TeleopSample], bool] | None = None,
    ) -> TeleopSummary:
        """Teleoperate until ``periods`` ran, ``until(sample)`` is true, Ctrl-C or a lost link.

        The follower is armed first and always stopped at the end: by :meth:`stop`, or after a
        fault (a follower's :class:`~jointlab.errors.DeviceFault` or a lost link of either
        arm) by :func:`jointlab.faults.stop_after_fault` (held one period, disarmed), which
        the summary reports (``stopped_by`` ``"fault"`` or ``"link"``, the error's message).
        """
        stopped_by, error, worst, limited = "periods", "", 0.0, 0
        ran = 0
        fault: BaseException | None = None
        try:
            self.start()
            while periods is None or ran < periods:
                sample = self.step()
                ran += 1
                limited += int(sample.limited.any())
                following = self.follower.read()
                worst = max(worst, float(np.max(np.abs(sample.target - following.position))))
                if on_sample is not None:
                    on_sample(sample)
                if until is not None and until(sample):
                    stopped_by = "until"
                    break
        except KeyboardInterrupt:
            stopped_by = "interrupted"
        except FAULTS as exc:  # a servo stopped itself, a silent servo, a lost link
            fault = exc
            stop_after_fault(self.follower, exc)
        finally:
            if fault is None:
                fault = self.stop()
        if fault is not None:
            # a lost link or a silent servo (DeviceLost) is "link", a servo's protection "fault"
            stopped_by = "link" if isinstance(fault, LinkError) else "fault"
            error = str(fault)
        return TeleopSummary(ran, stopped_by, error, worst, limited)
