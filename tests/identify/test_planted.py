"""Planted devices: plant(), the nominal view, and the emulated device glue."""

from __future__ import annotations

import numpy as np
import pytest

import jointlab
from jointlab.errors import ConfigurationError
from jointlab.identify import NominalView, connect_planted, physics_dt, plant
from jointlab.identify.planted import supports_armature
from jointlab.interface import NJointAction


def test_plant_changes_the_named_fields_by_the_given_amounts(arm6):
    planted = plant(arm6, static_friction=[1.0, 2.0, 1.0, 1.0, 1.0, 1.0], damping=0.5,
                    delay=2, torque_constant=1.1, effort=0.9)  # fmt: skip
    assert planted.static_friction[1] == pytest.approx(2 * arm6.static_friction[1])
    assert planted.static_friction[0] == arm6.static_friction[0]
    np.testing.assert_allclose(planted.damping, 0.5 * arm6.damping)
    np.testing.assert_allclose(planted.effort_limit, 0.9 * arm6.effort_limit)
    assert [j.motor.delay for j in planted.joints] == [2] * 6
    assert planted.joints[2].motor.torque_constant == pytest.approx(0.055)
    assert planted.joints[2].link == arm6.joints[2].link
    assert planted.name == arm6.name and planted.digest != arm6.digest


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"damping": 0.0}, "damping factors must be > 0"),
        ({"delay": 1.5}, "whole physics steps"),
        ({"delay": -1}, "whole physics steps"),
        ({"torque_constant": float("nan")}, "finite"),
        ({"armature": -0.1}, "armature must be >= 0"),
    ],
)
def test_bad_plants_are_refused(arm6, kwargs, message):
    with pytest.raises(ConfigurationError, match=message):
        plant(arm6, **kwargs)


@pytest.mark.skipif(supports_armature(), reason="robot files have dynamics.armature")
def test_armature_cannot_be_planted_without_the_field(arm6):
    with pytest.raises(ConfigurationError, match=r"no dynamics\.armature field"):
        plant(arm6, armature=0.01)


def test_the_nominal_view_shows_the_nominal_file_and_runs_the_planted_physics(arm6):
    planted = plant(arm6, damping=3.0)
    with connect_planted(planted, arm6) as robot, jointlab.connect("sim://arm6") as twin:
        assert isinstance(robot, NominalView)
        assert robot.description == arm6 and robot.robot.description == planted
        assert physics_dt(robot) == 0.001 and robot.dt == 0.001
        position = np.where(np.arange(6) == 0, np.nan, arm6.home)  # the base joint free
        push = NJointAction.TorqueAndPosition(np.eye(6)[0] * 2.0, position)
        for device in (robot, twin):
            device.apply(push)
            for _ in range(300):
                device.step()
        # three times the damping: the planted base joint turns slower
        assert 0.0 < robot.read().velocity[0] < 0.9 * twin.read().velocity[0]
        assert robot.geometry().actuators[0].length == arm6.joints[0].length
        robot.configure_speed(0, 0.5)
        assert robot.config_speed[0] == 0.5


def test_a_view_needs_the_same_joints(arm6):
    with jointlab.connect("sim://planar2") as robot:
        with pytest.raises(ConfigurationError, match="has joints"):
            NominalView(robot, arm6)
    with pytest.raises(ConfigurationError, match="backend must be"):
        connect_planted(arm6, arm6, backend="mujoco")


def test_the_emulated_device_runs_the_planted_file_behind_the_nominal_one(arm6):
    planted = plant(arm6, static_friction=1.5)
    robot = connect_planted(planted, arm6, backend="emulated")
    with robot:
        assert robot.description == arm6
        assert robot.device.digest.hex() == planted.digest  # the device runs the planted file
        assert physics_dt(robot) == pytest.approx(0.001)
        robot.arm()
        for _ in range(5):
            robot.step()
        assert robot.read().armed
