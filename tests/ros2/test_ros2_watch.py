"""What the bridge reports from states: each soft-limit entry, stall and fault once."""

from __future__ import annotations

import numpy as np

import jointlab
from jointlab.interface import ActuatorState, ArrayState
from jointlab.interop.ros2.watch import StateWatch

ARM6 = jointlab.load_robot("arm6")


def _state(
    t: float,
    q: np.ndarray,
    *,
    armed: bool = True,
    stalled: int | None = None,
    errors: np.ndarray | None = None,
    watchdog: bool = False,
) -> ArrayState:
    zeros = np.zeros(6)
    flags = np.full(6, ActuatorState.IDLE, dtype=np.uint8)
    if stalled is not None:
        flags[stalled] |= ActuatorState.STALLED
    return ArrayState(
        time=t,
        position=q,
        velocity=zeros,
        acceleration=zeros,
        torque=zeros,
        current=zeros,
        actuator_state=flags,
        motor_power=True,
        armed=armed,
        watchdog=watchdog,
        extras=None if errors is None else {"hardware_error": errors},
    )


def test_each_thing_is_reported_when_it_begins() -> None:
    watch = StateWatch(ARM6)
    home = ARM6.home.copy()
    assert watch.check(_state(0.0, home)) == []
    beyond = home.copy()
    beyond[1] = ARM6.soft_upper[1] + 0.01
    events = watch.check(_state(0.1, beyond))
    assert [e.kind for e in events] == ["soft_limit"] and events[0].joints == ("shoulder_lift",)
    assert "soft max 1.9" in events[0].message
    assert watch.check(_state(0.2, beyond)) == []  # still there: no new event
    assert watch.check(_state(0.3, home)) == []
    assert [e.kind for e in watch.check(_state(0.4, beyond))] == ["soft_limit"]  # again

    assert [e.kind for e in watch.check(_state(0.5, home, stalled=2))] == ["stalled"]
    assert watch.check(_state(0.6, home, stalled=2)) == []
    errors = np.zeros(6)
    errors[4] = 0x20
    fault = watch.check(_state(0.7, home, errors=errors))
    assert [e.kind for e in fault] == ["fault"] and fault[0].is_fault
    assert fault[0].joints == ("wrist_pitch",) and "0x20" in fault[0].message
    assert watch.check(_state(0.8, home, errors=errors)) == []
    assert [e.kind for e in watch.check(_state(0.9, home, watchdog=True))] == ["fault"]
    assert [e.kind for e in watch.check(_state(1.0, home, armed=False))] == ["disarmed"]


def test_a_requested_disarm_is_not_reported() -> None:
    watch = StateWatch(ARM6)
    watch.check(_state(0.0, ARM6.home))
    watch.disarm_requested = True
    assert watch.check(_state(0.1, ARM6.home, armed=False)) == []
