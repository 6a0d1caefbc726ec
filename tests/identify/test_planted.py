"""Planted devices: plant(), the nominal view, and the emulated device glue."""

from __future__ import annotations

import numpy as np
import pytest

import jointlab
from jointlab.errors import ConfigurationError
from jointlab.identify import (
    NominalView,
    connect_planted,
    excitation,
    fit,
    physics_dt,
    plant,
    record_excitation,
)
from jointlab.interface import NJointAction
from jointlab.robots import description_digest


def test_plant_changes_the_named_fields_by_the_given_amounts(arm6):
    planted = plant(
        arm6,
        static_friction=[1.0, 2.0, 1.0, 1.0, 1.0, 1.0],
        damping=0.5,
        delay=2,
        torque_constant=1.1,
        effort=0.9,
    )
    assert planted.static_friction[1] == pytest.approx(2 * arm6.static_friction[1])
    assert planted.static_friction[0] == arm6.static_friction[0]
    np.testing.assert_allclose(planted.damping, 0.5 * arm6.damping)
    np.testing.assert_allclose(planted.effort_limit, 0.9 * arm6.effort_limit)
    assert [j.motor.delay for j in planted.joints] == [2] * 6
    assert planted.joints[2].motor.torque_constant == pytest.approx(0.055)
    assert planted.joints[2].link == arm6.joints[2].link
    assert planted.name == arm6.name and description_digest(planted) != description_digest(arm6)


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


#: Largest relative error of a planted armature found alone (no other gap planted).
ARMATURE_TOLERANCE = 0.02


def test_a_planted_armature_is_identified(arm6, tmp_path):
    """Reflected inertia planted through ``plant(armature=...)`` on a joint with an ancestor.

    Only this joint moves and only its armature is planted: the simulator realises a
    joint's armature in the link it moves (which other moving joints would feel too, see
    docs/identification.md), so the fit must find exactly the planted total.
    """
    planted = plant(arm6, armature=[0.0, 0.05, 0.0, 0.0, 0.0, 0.0])
    program = excitation(arm6, ["shoulder_lift"], duration=4.0, band=(0.5, 1.5), ramp=0.5)
    with connect_planted(planted, arm6) as device:
        log = record_excitation(device, program, tmp_path / "lift.npz")
    result = fit(
        log, arm6, joints=["shoulder_lift"], parameters=["static_friction", "damping", "armature"]
    )
    armature = result.estimate("armature", "shoulder_lift")
    assert armature.nominal == arm6.armature[1]
    assert armature.value == pytest.approx(planted.armature[1], rel=ARMATURE_TOLERANCE)
    assert armature.low <= planted.armature[1] * (1 + ARMATURE_TOLERANCE)
    assert result.to_description().armature[1] == pytest.approx(armature.value, rel=1e-5)


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
        # the device runs the planted file
        assert robot.device.digest.hex() == description_digest(planted)
        assert physics_dt(robot) == pytest.approx(0.001)
        robot.arm()
        for _ in range(5):
            robot.step()
        assert robot.read().armed
