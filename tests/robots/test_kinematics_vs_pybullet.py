"""Forward kinematics agrees with PyBullet's own link poses."""

import os
import tempfile

import numpy as np
import pybullet
import pybullet_data
import pytest

from jointlab.robots import (
    RobotDescription,
    builtin_robots,
    description_from_urdf,
    description_to_urdf,
    forward_kinematics,
    load_robot,
)
from jointlab.robots.transforms import quaternion_matrix, rotation_angle_between


def _pybullet_link_frames(urdf_path: str, joint_values: dict[str, float]) -> dict[str, np.ndarray]:
    """URDF link frames of every joint's child link, keyed by joint name."""
    client = pybullet.connect(pybullet.DIRECT)
    try:
        body = pybullet.loadURDF(urdf_path, useFixedBase=True, physicsClientId=client)
        frames = {}
        names = []
        for j in range(pybullet.getNumJoints(body, physicsClientId=client)):
            info = pybullet.getJointInfo(body, j, physicsClientId=client)
            name = info[1].decode()
            names.append(name)
            if name in joint_values:
                pybullet.resetJointState(body, j, joint_values[name], physicsClientId=client)
        for j, name in enumerate(names):
            state = pybullet.getLinkState(
                body, j, computeForwardKinematics=True, physicsClientId=client
            )
            frame = np.eye(4)
            frame[:3, :3] = quaternion_matrix(state[5])
            frame[:3, 3] = state[4]
            frames[name] = frame
        return frames
    finally:
        pybullet.disconnect(client)


def _random_configurations(description: RobotDescription, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(description.lower, description.upper, size=(count, description.dof))


def _check(
    description: RobotDescription, urdf_path: str, configurations: np.ndarray, base: np.ndarray
) -> None:
    kin = forward_kinematics(description, configurations)
    for q, frames, tools in zip(
        configurations,
        np.moveaxis(kin.frames, 0, 0),
        [{k: v[i] for k, v in kin.tools.items()} for i in range(len(configurations))],
        strict=True,
    ):
        reference = _pybullet_link_frames(
            urdf_path, dict(zip(description.joint_names, q, strict=True))
        )
        for index, name in enumerate(description.element_names):
            if name.endswith("__origin") or name.endswith("__origin_rot"):
                continue
            ours = frames[index]
            theirs = base @ reference[name]
            np.testing.assert_allclose(ours[:3, 3], theirs[:3, 3], atol=1e-6, err_msg=name)
            assert rotation_angle_between(ours[:3, :3], theirs[:3, :3]) < 1e-6, name
        for name, ours in tools.items():
            if f"{name}_joint" not in reference:  # an original URDF has no tool links
                continue
            theirs = base @ reference[f"{name}_joint"]
            np.testing.assert_allclose(ours[:3, 3], theirs[:3, 3], atol=1e-6, err_msg=name)
            assert rotation_angle_between(ours[:3, :3], theirs[:3, :3]) < 1e-6, name


@pytest.mark.parametrize("name", builtin_robots())
def test_builtin_fk_matches_pybullet_on_exported_urdf(name: str) -> None:
    description = load_robot(name)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"{name}.urdf")
        with open(path, "w") as handle:
            handle.write(description_to_urdf(description))
        from jointlab.robots.transforms import pose_matrix

        base = pose_matrix(description.base.position, description.base.orientation)
        _check(description, path, _random_configurations(description, 50, seed=1), base)


@pytest.mark.parametrize(
    "relative", ["kuka_iiwa/model.urdf", "franka_panda/panda.urdf", "xarm/xarm6_robot.urdf"]
)
def test_from_urdf_fk_matches_pybullet_on_original(relative: str) -> None:
    path = os.path.join(pybullet_data.getDataPath(), relative)
    description = description_from_urdf(path)
    configurations = description.apply_coupling(_random_configurations(description, 20, seed=2))
    _check(description, path, configurations, np.eye(4))
