"""Transmissions (motor space <-> joint space) and the robot file's bus section."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from jointlab.errors import DescriptionError
from jointlab.robots import dump_yaml, load_robot, parse_yaml
from jointlab.robots.transmission import Transmission, TransmissionArray

transmissions = st.builds(
    Transmission,
    reduction=st.floats(0.1, 50.0),
    offset=st.floats(-5000.0, 5000.0),
    direction=st.sampled_from([1, -1]),
    ticks_per_rev=st.sampled_from([1024, 4096, 4095, 65536]),
)


@given(st.lists(transmissions, min_size=1, max_size=6), st.data())
def test_motor_and_joint_space_round_trip(chain, data) -> None:
    array = TransmissionArray.from_transmissions(chain)
    n = len(chain)
    q = np.array(data.draw(st.lists(st.floats(-10, 10), min_size=n, max_size=n)))
    np.testing.assert_allclose(array.to_joint(array.to_motor(q)), q, atol=1e-9)
    ticks = np.array(data.draw(st.lists(st.floats(-1e5, 1e5), min_size=n, max_size=n)))
    np.testing.assert_allclose(array.to_motor(array.to_joint(ticks)), ticks, rtol=1e-12, atol=1e-6)
    np.testing.assert_allclose(array.velocity_to_joint(array.velocity_to_motor(q)), q, atol=1e-9)
    np.testing.assert_allclose(array.torque_to_motor(array.torque_to_joint(q)), q, atol=1e-9)
    # Power is the same on both sides: torque * speed.
    np.testing.assert_allclose(
        array.torque_to_joint(q) * array.velocity_to_joint(q),
        q * q * array.torque_ratio / array.scale,
        rtol=1e-9,
    )


def test_the_definition() -> None:
    t = TransmissionArray.from_transmissions([Transmission(2.0, 2048, -1, 4096)])
    assert t.to_joint(np.array([2048 - 2048]))[0] == pytest.approx(np.pi / 2)
    assert t.to_motor(np.array([0.0]))[0] == 2048
    assert t.torque_to_joint(np.array([1.0]))[0] == -2.0


def test_builtin_servo_arms_round_trip_through_yaml() -> None:
    for name in ("so101", "koch"):
        robot = load_robot(name)
        again = parse_yaml(dump_yaml(robot))
        assert again == robot and again.bus == robot.bus
        assert robot.bus.ids == (1, 2, 3, 4, 5, 6)
        assert robot.actuator("shoulder_pan").transmission.ticks_per_rev == 4096
    assert "bus" not in dump_yaml(load_robot("arm6"))  # robots without a bus are unchanged


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["bus"].update(protocol="canopen"), "field 'bus.protocol': unknown protocol"),
        (
            lambda d: d["bus"]["servos"]["gripper"].update(id=1),
            "already the id of joint 'shoulder_pan'",
        ),
        (lambda d: d["bus"]["servos"].pop("gripper"), "joint 'gripper' has no servo"),
        (lambda d: d["bus"]["servos"]["gripper"].update(mode="torque"), "unknown mode 'torque'"),
        (
            lambda d: d["actuators"][0]["transmission"].update(direction=2),
            "'transmission.direction'",
        ),
        (lambda d: d["actuators"][0]["transmission"].update(gear=3), "unknown key 'gear'"),
    ],
)
def test_bad_bus_and_transmission_sections_name_the_field(change, message) -> None:
    data = yaml.safe_load(dump_yaml(load_robot("so101")))
    change(data)
    with pytest.raises(DescriptionError, match=message):
        parse_yaml(yaml.safe_dump(data), source="my_arm.yaml")
