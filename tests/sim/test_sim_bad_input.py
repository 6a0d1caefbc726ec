"""Bad input to the simulator: clear errors naming the field, the value and what was expected."""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import one_joint

from jointlab.errors import ActionError, ConfigurationError, DescriptionError
from jointlab.interface import NJointAction
from jointlab.sim import Randomization, SensorModel, SimRobot


@pytest.fixture
def robot(zero_g):
    return SimRobot(one_joint(), world=zero_g)


def test_wrong_action_length_names_the_field_and_the_expected_length(robot):
    with pytest.raises(ActionError, match=r"NJointAction.torque has length 2, expected 1"):
        robot.apply(NJointAction.Torque([0.0, 0.0]))
    with pytest.raises(ActionError, match="NJointAction"):
        robot.apply(np.zeros(1))  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_torque_is_an_action_error_naming_the_field(bad):
    with pytest.raises(ActionError, match="torque"):
        NJointAction.Torque([bad])


def test_control_dt_not_a_multiple_of_dt_quotes_both(zero_g):
    with pytest.raises(ConfigurationError, match=r"control_dt = 0\.0025 s and dt = 0\.001 s"):
        SimRobot(one_joint(), world=zero_g, control_dt=0.0025)
    with pytest.raises(ConfigurationError, match="whole multiple"):
        SimRobot(one_joint(), world=zero_g, control_dt=0.0005)
    with pytest.raises(ConfigurationError, match="differs from the world"):
        SimRobot(one_joint(), world=zero_g, dt=0.002)


def test_reset_values_are_checked(robot):
    with pytest.raises(ConfigurationError, match="q must be 1 finite numbers"):
        robot.reset(q=[0.0, 1.0])
    with pytest.raises(ConfigurationError, match=r"q\[0\] = 200.0 of joint 'j' lies outside"):
        robot.reset(q=[200.0])
    with pytest.raises(ConfigurationError, match="qd"):
        robot.reset(qd=[np.nan])


def test_unknown_robot_file_is_a_description_error(tmp_path):
    with pytest.raises(DescriptionError, match=r"nope\.yaml"):
        SimRobot(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"mass_scale": (1.2, 0.8)}, ["mass_scale", "low <= high"]),
        ({"friction_scale": (0.0, 1.0)}, ["friction_scale", "> 0"]),
        ({"latency": (0, 1.5)}, ["latency", "whole numbers"]),
        ({"kp_scale": 3.0}, ["kp_scale", "(low, high)"]),
    ],
)
def test_randomization_ranges_are_validated(kwargs, words):
    with pytest.raises(ConfigurationError) as info:
        Randomization(**kwargs)
    for word in words:
        assert word in str(info.value)


def test_sensor_models_are_validated(zero_g):
    with pytest.raises(ConfigurationError, match="position_noise"):
        SensorModel(position_noise=-1.0)
    with pytest.raises(ConfigurationError, match="velocity_noise must be one number or 1"):
        SimRobot(one_joint(), world=zero_g, sensors=SensorModel(velocity_noise=(0.1, 0.2)))


def test_external_force_and_options_are_validated(robot, zero_g):
    with pytest.raises(ConfigurationError, match="force must be 3 finite numbers"):
        robot.apply_external_force("j", [1.0, 2.0])
    with pytest.raises(Exception, match="no link 'k'"):
        robot.apply_external_force("k", [1.0, 2.0, 3.0])
    with pytest.raises(ConfigurationError, match="stall_time"):
        SimRobot(one_joint(), world=zero_g, stall_time=0.0)


@pytest.mark.parametrize("gain", ["kp", "kd"])
def test_gains_that_would_overflow_the_law_are_refused_before_the_robot(robot, gain):
    with pytest.raises(ActionError, match=f"position_{gain}.*overflow"):
        robot.apply(NJointAction.Position([0.1], **{gain: [1e300]}))
    assert np.all(np.isfinite(robot.read().position))


def test_reset_restores_a_finite_state_after_the_physics_diverged(engine):
    """A body poisoned by NaN (here through the unchecked escape hatch) comes back whole."""
    with SimRobot("arm6", engine=engine) as robot, SimRobot("arm6", engine=engine) as fresh:
        dof = robot.dof
        huge = np.full(dof, 1e308)
        poison = NJointAction.from_validated(
            np.zeros(dof), np.full(dof, 2.0), huge, huge.copy(), np.full(dof, np.nan)
        )
        with np.errstate(all="ignore"):
            robot.apply(poison)
            for _ in range(5):
                robot.step()
        robot.reset()
        hold = NJointAction.Position(robot.description.home)
        for each in (robot, fresh):
            each.apply(hold)
            for _ in range(50):
                each.step()
        state = robot.read()
        for name in ("position", "velocity", "torque", "acceleration"):
            assert np.all(np.isfinite(getattr(state, name))), name
        np.testing.assert_allclose(state.position, fresh.read().position, atol=1e-9)
