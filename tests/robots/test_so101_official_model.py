"""The built-in so101 against the official SO-101 URDF (SO-ARM100, copied in tests/data/so101).

The URDF imports although its meshes are absent, tracks a trajectory in simulation, and the
built-in model's joint axes, ranges and masses agree with it under the zero-pose mapping
that docs/hardware.md states (JointLab's zero: the arm straight up; the URDF's: its "new
calibration" pose).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import jointlab
from jointlab.controllers import Commander
from jointlab.robots.kinematics import forward_kinematics
from jointlab.sim import SimRobot

OFFICIAL = Path(__file__).resolve().parents[1] / "data" / "so101" / "so101_new_calib.urdf"
#: JointLab's angle at the URDF's zero, per joint of the arm's plane (docs/hardware.md).
ZERO_SHIFT = {"shoulder_lift": 0.2438, "elbow_flex": 1.2885, "wrist_flex": 0.0385}
#: Where the URDF's pan axis stands on its base_link (JointLab's stands at the base origin), m.
PAN_AXIS = np.array([0.0388353, 0.0, 0.0])
PLANE = ("shoulder_lift", "elbow_flex", "wrist_flex")
#: Tracking bound of the imported arm at the importer's default gains, rad (RMS; measured
#: 0.19 mrad at seed 0).
TRACKING_RMS = 0.002


@pytest.fixture(scope="module")
def official():
    return jointlab.load_robot(str(OFFICIAL))


def test_the_official_urdf_imports_without_its_meshes(official) -> None:
    assert not (OFFICIAL.parent / "assets").exists()
    assert official.dof == 6
    assert set(official.joint_names) == set(jointlab.load_robot("so101").joint_names)


def test_the_official_urdf_tracks_a_trajectory_in_simulation(official) -> None:
    names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]
    index = [official.joint_index(n) for n in names]
    home = np.array(official.home)[index]
    delta = np.array([0.4, 0.3, -0.4, 0.3, 0.5])
    waypoints = [
        {"position": home + delta, "time_from_start": 0.8},
        {"position": home - delta / 2, "time_from_start": 1.6},
        {"position": home, "time_from_start": 2.2},
    ]
    with SimRobot(official, seed=0) as robot:
        commander = Commander(robot)
        handle = commander.follow_trajectory(waypoints, joints=names)
        errors = []
        while not handle.done:
            state = robot.read()
            action = commander.compute(state)
            robot.apply(action)
            robot.step()
            errors.append(action.position[index] - state.position[index])
        final = robot.read().position[index]
    assert handle.succeeded and len(errors) > 2000  # 2.2 s at 1 kHz, in simulated time
    assert np.sqrt(np.mean(np.square(errors))) < TRACKING_RMS
    np.testing.assert_allclose(final, home, atol=0.01)


def _plane_points(description, q) -> dict[str, np.ndarray]:
    k = forward_kinematics(description, q)
    return {n: k.frame(n)[:3, 3] for n in (*PLANE, "wrist_roll")}


def test_the_built_in_so101_matches_the_official_geometry_ranges_and_masses(official) -> None:
    ours = jointlab.load_robot("so101")
    for name, shift in ZERO_SHIFT.items():  # the URDF's ranges, moved to JointLab's zero
        i, j = ours.joint_index(name), official.joint_index(name)
        assert ours.lower[i] == pytest.approx(official.lower[j] + shift, abs=1e-3), name
        assert ours.upper[i] == pytest.approx(official.upper[j] + shift, abs=1e-3), name
    for name in ("shoulder_pan", "gripper"):
        i, j = ours.joint_index(name), official.joint_index(name)
        assert (ours.lower[i], ours.upper[i]) == pytest.approx(
            (official.lower[j], official.upper[j])
        )
    rng = np.random.default_rng(0)
    for _ in range(20):  # random poses: every joint of the arm's plane in the same place
        q_official, q_ours = np.zeros(6), np.zeros(6)
        for name in PLANE:
            j = official.joint_index(name)
            q_official[j] = rng.uniform(official.lower[j], official.upper[j])
            q_ours[ours.joint_index(name)] = q_official[j] + ZERO_SHIFT[name]
        theirs, mine = _plane_points(official, q_official), _plane_points(ours, q_ours)
        for name, point in theirs.items():
            gap = (point - PAN_AXIS) - mine[name]
            assert np.hypot(gap[0], gap[2]) < 1e-3, name  # in the plane (x forward, z up)
            assert abs(gap[1]) < 0.02, name  # the dropped sideways offsets
    masses = {a.name: a.link.mass for a in ours.actuators if a.link is not None}
    for link, joint in (
        ("upper_arm_link", "shoulder_lift"),
        ("lower_arm_link", "elbow_flex"),
        ("wrist_link", "wrist_flex"),
        ("gripper_link", "wrist_roll"),
        ("moving_jaw_so101_v1_link", "gripper"),
    ):
        assert masses[joint] == pytest.approx(official_mass(link), rel=0.01), joint


def official_mass(link: str) -> float:
    import xml.etree.ElementTree as ET

    root = ET.parse(OFFICIAL).getroot()
    element = root.find(f"./link[@name='{link}']/inertial/mass")
    return float(element.get("value"))
