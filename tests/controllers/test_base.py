"""Controller composition, PD/impedance controllers and the safe-controller wrapper."""

import numpy as np
import pytest

from jointlab.controllers import (
    Controller,
    FunctionController,
    GravityCompensation,
    JointImpedance,
    JointPD,
    SafeController,
    SafetyLayer,
    Sum,
    add_actions,
    with_feedforward,
)
from jointlab.errors import ActionError
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots import load_robot

PLANAR = load_robot("planar2")


def state(q=(0.0, 0.5), qd=(0.0, 0.0)):
    zeros = np.zeros(2)
    return ArrayState(
        0.0,
        np.array(q, float),
        np.array(qd, float),
        zeros,
        zeros,
        zeros,
        np.ones(2, np.uint8),
        True,
        True,
    )


def test_controllers_satisfy_the_protocol():
    for controller in (
        JointPD([0, 0]),
        JointImpedance(),
        GravityCompensation(PLANAR),
        FunctionController(lambda s: np.zeros(2)),
    ):
        assert isinstance(controller, Controller)


def test_add_actions_sums_torques_and_takes_each_pd_from_one_side():
    pd = NJointAction.Position([1.0, np.nan], kp=[10.0, np.nan])
    torque = NJointAction.Torque([0.5, 0.25])
    total = add_actions(pd, torque)
    assert total.torque.tolist() == [0.5, 0.25]
    assert total.position[0] == 1.0 and np.isnan(total.position[1])
    assert total.position_kp[0] == 10.0
    other = NJointAction.Position([np.nan, 2.0])
    both = add_actions(pd, other)
    assert both.position.tolist() == [1.0, 2.0]
    with pytest.raises(ActionError, match=r"joints \[0\]"):
        add_actions(pd, NJointAction.Position([0.0, np.nan]))


def test_gravity_compensation_adds_to_any_controller():
    description = load_robot("arm6")
    control = with_feedforward(JointPD(description.home), GravityCompensation(description))
    zeros = np.zeros(6)
    s = ArrayState(
        0.0, description.home, zeros, zeros, zeros, zeros, np.ones(6, np.uint8), True, True
    )
    control.reset(s)
    action = control.compute(s)
    np.testing.assert_allclose(action.position, description.home)
    np.testing.assert_allclose(action.torque, GravityCompensation(description).compute(s).torque)


def test_sum_accepts_functions():
    control = Sum(JointPD([0.0, 0.0], kp=5.0), lambda s: -0.1 * s.velocity)
    action = control.compute(state(qd=(1.0, -2.0)))
    np.testing.assert_allclose(action.torque, [-0.1, 0.2])
    assert action.position_kp.tolist() == [5.0, 5.0]


def test_impedance_is_a_control_rate_torque():
    control = JointImpedance(stiffness=[10.0, 20.0], damping=1.0)
    s = state(q=(0.1, 0.5), qd=(0.0, 1.0))
    control.reset(state())  # target = the position at reset
    action = control.compute(s)
    assert not action.pd_mask.any()
    np.testing.assert_allclose(action.torque, [10.0 * -0.1, -1.0])


def test_pd_target_update():
    control = JointPD([0.0, 0.0])
    control.set_target([1.0, 2.0], velocity=[0.5, 0.0])
    action = control.compute(state())
    assert action.position.tolist() == [1.0, 2.0] and action.velocity.tolist() == [0.5, 0.0]


def test_safe_controller_keeps_desired_and_reports_events():
    seen = []
    safe = SafeController(
        JointPD([5.0, 0.5]), SafetyLayer.for_description(PLANAR, 0.001), on_event=seen.append
    )
    safe.reset(state())
    applied = safe.compute(state())
    assert safe.last_desired.position[0] == 5.0
    assert applied.position[0] <= PLANAR.soft_upper[0]
    assert {e.quantity for e in seen} >= {"position"}
    assert list(safe.drain()) == seen and not safe.events
