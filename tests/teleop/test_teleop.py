"""Teleoperation: an emulated leader SO-101 drives sim://so101 at the bus rate.

The leader is an emulated bus in lockstep (virtual time), its limp arm moved and held through
the emulator as a person would (a limp arm left alone falls under gravity); each follower
period reads it once (one Sync Read). Bad input:
arms with different joint counts or ranges. Stops: the follower holds, then disarms, also
when the leader's link is lost.
"""

from __future__ import annotations

import numpy as np
import pytest

import jointlab
from jointlab.errors import ConfigurationError, LinkError
from jointlab.teleop import JointMap, LeaderArm, ScriptedTeleoperator, Teleop


@pytest.fixture
def leader():
    robot = jointlab.connect("emulated://so101?lockstep=1")
    robot.emulator.move(robot.description.home)
    yield robot
    robot.close()


def test_an_emulated_leader_drives_the_sim_follower_at_the_bus_rate(leader) -> None:
    with jointlab.connect(f"sim://so101?control_dt={leader.bus_dt}") as follower:
        arm = LeaderArm(leader, own=False)
        assert arm.period == leader.bus_dt == follower.control_dt == 0.005  # 200 Hz
        home = np.array(follower.description.home)
        goal = home + np.array([0.4, -0.3, 0.25, -0.4, 0.5, 0.3])
        reached = []

        def person(sample) -> None:  # holds the leader at the goal
            leader.emulator.move(goal)
            reached.append(follower.read().position)

        leader.emulator.move(goal)
        summary = Teleop(arm, follower).run(periods=400, on_sample=person)
        assert summary.stopped_by == "periods" and summary.periods == 400
        assert not follower.read().armed  # held, then disarmed
        leader.emulator.move(goal)
        np.testing.assert_allclose(arm.read(), goal, atol=0.003)  # the leader reads ~1 tick
        # After 2 s the follower (PD on the simulator, gravity-loaded) stands near the goal.
        error = np.abs(reached[-1] - goal)
        assert error[[0, 4, 5]].max() < 0.01, error
        assert error.max() < 0.15, error


def test_max_step_limits_each_period(leader) -> None:
    with jointlab.connect(f"sim://so101?control_dt={leader.bus_dt}") as follower:
        teleop = Teleop(LeaderArm(leader, own=False), follower, max_step=0.01)
        teleop.start()
        samples = []
        for _ in range(10):
            leader.emulator.move(np.array(follower.description.home) + 0.25)
            samples.append(teleop.step())
        teleop.stop()
    steps = np.array([np.abs(s.target - s.state.position).max() for s in samples])
    assert np.all(steps <= 0.01 + 1e-12) and steps.max() > 0.0099
    assert all(s.limited.any() for s in samples)


def test_the_emulator_refuses_to_move_the_arm_past_a_limit(leader) -> None:
    beyond = np.array(leader.description.home)
    beyond[2] = leader.description.upper[2] + 0.01  # just past elbow_flex's end
    with pytest.raises(ConfigurationError, match="elbow_flex"):
        leader.emulator.move(beyond)


def test_a_lost_leader_link_stops_the_follower_cleanly() -> None:
    leader = jointlab.connect("emulated://so101?lockstep=1&retries=0&timeout_ms=50")
    leader.emulator.move(leader.description.home)
    try:
        with jointlab.connect(f"sim://so101?control_dt={leader.bus_dt}") as follower:
            teleop = Teleop(LeaderArm(leader, own=False), follower)

            def unplug(sample) -> None:
                if teleop.periods == 20:
                    leader.emulator.close()  # the leader's bus goes away mid-run

            summary = teleop.run(periods=100, on_sample=unplug)
            assert summary.stopped_by == "link" and summary.periods == 20, summary
            assert summary.error
            state = follower.read()
            assert not state.armed
    finally:
        leader.close()


def _scripted(description, script=lambda k: None) -> ScriptedTeleoperator:
    d = jointlab.load_robot(description)
    return ScriptedTeleoperator(
        d.joint_names, d.lower, d.upper, script if script else (lambda k: np.array(d.home))
    )


def test_joint_counts_that_differ_are_refused() -> None:
    planar = _scripted("planar2")
    with pytest.raises(ConfigurationError, match=r"leader has 2 joints .* follower 'so101' has 6"):
        JointMap.build(planar.joint_names, planar.lower, planar.upper, jointlab.load_robot("so101"))


def test_ranges_that_differ_are_refused_unless_scaled() -> None:
    koch, so101 = jointlab.load_robot("koch"), jointlab.load_robot("so101")
    with pytest.raises(
        ConfigurationError,
        match=r"leader joint 'shoulder_pan' ranges over "
        r"\[-2.900, 2.900\] .* --mapping range",
    ):
        JointMap.build(koch.joint_names, koch.lower, koch.upper, so101)
    scaled = JointMap.build(koch.joint_names, koch.lower, koch.upper, so101, mapping="range")
    here = np.zeros(6)
    np.testing.assert_allclose(scaled.targets(np.array(koch.lower), here), so101.lower)
    np.testing.assert_allclose(scaled.targets(np.array(koch.upper), here), so101.upper)


def test_pairs_map_some_joints_and_the_others_hold() -> None:
    so101 = jointlab.load_robot("so101")
    mapping = JointMap.build(
        ["a", "b"], [-1, -1], [1, 1], so101, mapping="range", pairs={"b": "elbow_flex"}
    )
    present = np.arange(6, dtype=float) * 0.1
    target = mapping.targets(np.array([0.7, 1.0]), present)
    assert target[2] == pytest.approx(so101.upper[2])
    np.testing.assert_array_equal(np.delete(target, 2), np.delete(present, 2))
    with pytest.raises(ConfigurationError, match="unknown joints"):
        JointMap.build(["a"], [-1], [1], so101, pairs={"a": "elbo"})


def test_a_leader_that_raises_link_error_mid_reading_is_a_link_stop() -> None:
    def script(k: int) -> np.ndarray:
        if k == 5:
            raise LinkError("leader bus: no status packet from servo 3")
        return np.zeros(6)

    leader = _scripted("so101", script)
    with jointlab.connect("sim://so101?control_dt=0.01") as follower:
        summary = Teleop(leader, follower).run(periods=50)
        assert summary.stopped_by == "link" and "servo 3" in summary.error
        assert summary.periods == 5 and not follower.read().armed


def test_teleop_imports_no_backend() -> None:
    import subprocess
    import sys

    code = (
        "import sys, jointlab.teleop; print(sorted(m for m in sys.modules if "
        "m.startswith(('jointlab.sim', 'jointlab.hardware', 'pybullet', 'mujoco'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout
