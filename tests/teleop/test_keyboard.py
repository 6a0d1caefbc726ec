"""The keyboard teleoperator: keys typed on a real pseudo-terminal move the follower."""

from __future__ import annotations

import os

import numpy as np
import pytest

import jointlab
from jointlab.errors import ConfigurationError
from jointlab.teleop import KeyboardTeleoperator, Teleop


@pytest.fixture
def terminal():
    master, slave = os.openpty()
    yield master, slave
    os.close(master)
    os.close(slave)


def test_keys_nudge_joints_within_their_limits_and_space_goes_back(terminal):
    master, slave = terminal
    description = jointlab.load_robot("so101")
    keys = KeyboardTeleoperator(description, fd=slave, step=0.1)
    try:
        start = keys.read()
        np.testing.assert_allclose(
            start, np.clip(description.home, description.lower, description.upper)
        )
        os.write(master, b"qqwa?x")  # joint 0 up twice, 1 up, 0 down; unknown keys ignored
        moved = keys.read()
        expected = start.copy()
        expected[0] += 0.1
        expected[1] += 0.1
        np.testing.assert_allclose(moved, np.clip(expected, description.lower, description.upper))
        os.write(master, b"e" * 200)  # far past joint 2's upper limit
        assert keys.read()[2] == pytest.approx(description.upper[2])
        os.write(master, b" ")
        np.testing.assert_allclose(keys.read(), start)
    finally:
        keys.close()
        keys.close()


def test_the_keyboard_drives_a_simulated_follower(terminal):
    master, slave = terminal
    with jointlab.connect("sim://so101") as follower:
        keys = KeyboardTeleoperator(
            follower.description, start=follower.read().position, fd=slave, step=np.radians(5.0)
        )
        teleop = Teleop(keys, follower)
        os.write(master, b"q" * 6)  # shoulder_pan +30 degrees
        summary = teleop.run(800)
        assert summary.periods == 800
        target = keys.start[0] + np.radians(30)
        assert keys.read()[0] == pytest.approx(target)
        # the follower got there (within the 3.5 degrees the LeRobot follower tests allow)
        assert follower.read().position[0] == pytest.approx(target, abs=np.radians(3.5))


def test_too_many_joints_for_the_keys_are_refused():
    from dataclasses import replace

    description = jointlab.load_robot("arm6")
    many = replace(description, actuators=description.actuators * 2)
    with pytest.raises(ConfigurationError, match="at most 7"):
        KeyboardTeleoperator(many, fd=os.open(os.devnull, os.O_RDONLY))
