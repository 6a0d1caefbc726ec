"""A robot that faults on cue, and the one fault rule as an assertion (jointlab.faults).

:class:`FaultingRobot` is a simulated SO-101 whose ``step`` raises a drawn fault at a drawn
step, as a servo bus robot raises it (a servo's overload, a lost servo, a dead link); it
records what the loop does to it afterwards, and :func:`assert_the_rule` checks that against
:func:`jointlab.faults.stop_after_fault`. The URL ``faulty://so101?at=K&fault=KIND&joint=J``
(:func:`jointlab.connection.register_scheme`) builds one, for loops that connect their own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from jointlab.connection import RobotURL, register_scheme
from jointlab.errors import DeviceFault, DeviceLost, LinkError
from jointlab.holding import hold_action
from jointlab.interface import NJointAction
from jointlab.robots import load_robot
from jointlab.sim import SimRobot

ROBOT = "so101"
DESCRIPTION = load_robot(ROBOT)
KINDS = ("overload", "lost", "link")


def make_fault(kind: str, joint: int) -> DeviceFault | LinkError:
    """A fault as a servo bus robot raises it: an overload, a lost servo, or a dead link."""
    name = DESCRIPTION.joint_names[joint]
    servo = f"servo id {joint + 1}"
    if kind == "overload":
        return DeviceFault(
            f"{servo} ({name}, sts3215) reported overload error (status 0x20) and cut its "
            "torque. Fix: lower the load, then arm again",
            joint=name,
            device=servo,
            reasons=("overload error",),
            bits=0x20,
        )
    if kind == "lost":
        return DeviceLost(
            f"{servo} ({name}) stopped answering for 3 bus cycles. Fix: check its cable",
            joint=name,
            device=servo,
            reasons=("no reply",),
        )
    return LinkError("no reply from the bus for 0.5 s: the link is dead")


class FaultingRobot(SimRobot):
    """A simulated robot whose ``step`` raises ``fault`` at step ``at`` (1: the first).

    After the fault it records what is done to it (``trail``): ``("apply", action)``,
    ``("step",)``, ``("disarm",)``, ``("arm",)``. With ``dead``, every later step raises the
    fault again (a link that stays dead); reading and disarming still work, as the host's
    own state does.
    """

    def __init__(self, at: int, fault: BaseException, dead: bool = False, **options: Any):
        super().__init__(DESCRIPTION, **options)
        self.at, self.fault, self.dead = at, fault, dead
        self.steps = 0
        self.trail: list[tuple[Any, ...]] = []
        self.position_at_fault: np.ndarray | None = None

    @property
    def armed(self) -> bool:
        """As a device robot says it (what a device's reset move asks)."""
        return self.read().armed

    @property
    def faulted(self) -> bool:
        return self.position_at_fault is not None

    def _step(self) -> None:
        if self.faulted:
            self.trail.append(("step",))
            if self.dead:
                raise self.fault
        else:
            self.steps += 1
            if self.steps == self.at:
                self.position_at_fault = self._read().position.copy()
                raise self.fault
        super()._step()

    def _apply(self, action: NJointAction) -> None:
        if self.faulted:
            self.trail.append(("apply", action))
        super()._apply(action)

    def _disarm(self) -> None:
        if self.faulted:
            self.trail.append(("disarm",))
        super()._disarm()

    def _arm(self) -> None:
        if self.faulted:
            self.trail.append(("arm",))
        super()._arm()


#: The robots :func:`_connect_faulty` built, newest last (the test inspects them).
BUILT: list[FaultingRobot] = []


def _connect_faulty(url: RobotURL, options: dict[str, Any]) -> FaultingRobot:
    """``faulty://so101?at=K&fault=overload|lost|link&joint=J``: a :class:`FaultingRobot`."""
    at = url.take("at", int, 1)
    kind = url.take("fault", str, "overload")
    joint = url.take("joint", int, 0)
    url.check_all_taken()
    robot = FaultingRobot(at, make_fault(kind, joint), dead=kind == "link", **options)
    BUILT.append(robot)
    return robot


register_scheme("faulty", _connect_faulty, replace=True)


@st.composite
def faults(draw: st.DrawFn, ticks: int) -> tuple[int, str, int]:
    """A fault: the tick it happens at (1..ticks), its kind and the joint it names."""
    return (
        draw(st.integers(1, ticks)),
        draw(st.sampled_from(KINDS)),
        draw(st.integers(0, DESCRIPTION.dof - 1)),
    )


def robot_for(fault: tuple[int, str, int]) -> FaultingRobot:
    at, kind, joint = fault
    return FaultingRobot(at, make_fault(kind, joint), dead=kind == "link")


def url_for(fault: tuple[int, str, int]) -> str:
    at, kind, joint = fault
    return f"faulty://{ROBOT}?at={at}&fault={kind}&joint={joint}"


def target_of(robot: SimRobot) -> np.ndarray:
    """A target away from the present pose (so the loop is moving when the fault comes)."""
    q = robot.read().position
    return np.clip(q + 0.3, DESCRIPTION.soft_lower, DESCRIPTION.soft_upper)


def assert_the_rule(robot: FaultingRobot, raised: BaseException | None = None) -> None:
    """The robot faulted; held at the fault's position for one period; then disarmed.

    Args:
        robot: The robot, after the loop ended.
        raised: What the loop raised, if it raises (it must be the robot's fault).
    """
    assert robot.faulted, "the drawn fault never happened: the loop ended first"
    if raised is not None:
        assert isinstance(raised, type(robot.fault)), raised
        assert str(robot.fault) in str(raised)  # a program names its step before the message
    hold = hold_action(DESCRIPTION, robot.position_at_fault)
    trail = robot.trail
    kinds = [entry[0] for entry in trail]
    assert kinds[:3] == ["apply", "step", "disarm"], kinds
    held = trail[0][1]
    np.testing.assert_allclose(held.position, hold.position, atol=1e-12)
    np.testing.assert_allclose(held.torque, hold.torque, atol=1e-9)
    assert "arm" not in kinds  # nothing re-armed it
    for entry in trail[3:]:  # afterwards only zero actions (a disarmed robot refuses others)
        assert entry[0] != "apply" or entry[1].is_zero, trail
    if not robot.closed:
        assert not robot.read().armed
