"""The ``jointlab`` LeRobot robot plugin follows the one fault rule (jointlab.faults).

LeRobot's loops (``record_loop``, ``teleop_loop``) call ``robot.send_action`` once a frame;
a fault of the JointLab robot underneath (here a simulated SO-101 that faults at a drawn
period, tests/faulting_robot.py, named by its URL as a user names a robot) reaches them as
the error, after the robot held one period and disarmed; LeRobot's ``disconnect`` then moves
nothing. The property over every drawn tick and kind: tests/test_fault_rule_every_loop.py.
"""

from __future__ import annotations

import pytest
from faulting_robot import assert_the_rule, url_for

from jointlab.errors import DeviceFault, LinkError


@pytest.mark.parametrize("fault", [(40, "overload", 5), (70, "lost", 2), (5, "link", 0)])
def test_the_plugins_send_action_raises_the_fault_after_hold_and_disarm(fault) -> None:
    from lerobot_robot_jointlab import JointLab, JointLabConfig

    robot = JointLab(JointLabConfig(url=url_for(fault)))
    robot.connect()
    inner = robot.bridge.robot
    try:
        action = {key: value + 5.0 for key, value in robot.get_observation().items()}
        with pytest.raises((DeviceFault, LinkError)) as info:
            for _ in range(5):
                robot.send_action(action)
        assert_the_rule(inner, info.value)
    finally:
        robot.disconnect()
    assert_the_rule(inner)  # LeRobot's disconnect moved nothing more
