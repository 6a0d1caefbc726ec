"""Forward kinematics per the documented geometry convention (numpy only, no PyBullet)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from scipy.spatial.transform import Rotation
from strategies import robot_dicts

from jointlab.errors import DescriptionError
from jointlab.robots import (
    JointType,
    RobotDescription,
    builtin_robots,
    description_from_dict,
    forward_kinematics,
    load_robot,
    position_jacobian,
    tool_positions,
)

BUILTINS = builtin_robots()


def _random_q(description: RobotDescription, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(description.lower, description.upper, size=(count, description.dof))


def _reference_fk(description: RobotDescription, q: np.ndarray) -> dict[str, np.ndarray]:
    """End frames from the documented formula, written independently with scipy rotations."""

    def transform(rotation: Rotation | None = None, translation: Any = (0, 0, 0)) -> np.ndarray:
        matrix = np.eye(4)
        if rotation is not None:
            matrix[:3, :3] = rotation.as_matrix()
        matrix[:3, 3] = translation
        return matrix

    def rpy(angles: Any) -> Rotation:
        return Rotation.from_euler("xyz", angles)  # extrinsic x, y, z: Rz(y)·Ry(p)·Rx(r)

    specs = {a.name: a for a in description.actuators}
    values = dict(zip(description.joint_names, q, strict=True))
    ends: dict[str, np.ndarray] = {}

    def end(name: str) -> np.ndarray:
        if name not in ends:
            spec = specs[name]
            parent = (
                transform(rpy(description.base.orientation), description.base.position)
                if spec.parent == "base"
                else end(spec.parent)
            )
            axis = np.array(spec.axis)
            if spec.type is JointType.ROTARY:
                motion = transform(Rotation.from_rotvec(axis * values[name]))
            elif spec.type is JointType.LINEAR:
                motion = transform(translation=axis * values[name])
            else:
                motion = np.eye(4)
            offset = transform(rpy(spec.orientation)) @ transform(translation=(spec.length, 0, 0))
            ends[name] = parent @ motion @ offset
        return ends[name]

    return {name: end(name) for name in description.element_names}


@pytest.mark.parametrize("name", BUILTINS)
def test_batch_fk_equals_per_sample_fk(name: str) -> None:
    description = load_robot(name)
    q = _random_q(description, 12, seed=4).reshape(3, 4, description.dof)
    batch = forward_kinematics(description, q)
    assert batch.frames.shape == (3, 4, len(description.actuators), 4, 4)
    for i in range(3):
        for j in range(4):
            single = forward_kinematics(description, q[i, j])
            np.testing.assert_array_equal(batch.frames[i, j], single.frames)
            np.testing.assert_array_equal(batch.ends[i, j], single.ends)
            for tool in description.tool_names:
                np.testing.assert_array_equal(batch.tools[tool][i, j], single.tools[tool])


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_fk_matches_the_design_formula(name: str) -> None:
    description = load_robot(name)
    q = _random_q(description, 5, seed=5)
    kin = forward_kinematics(description, q)
    for k in range(len(q)):
        reference = _reference_fk(description, q[k])
        for index, element in enumerate(description.element_names):
            np.testing.assert_allclose(kin.ends[k, index], reference[element], atol=1e-12)


@settings(max_examples=40)
@given(robot_dicts(max_elements=6))
def test_generated_fk_matches_the_design_formula(data: dict[str, Any]) -> None:
    description = description_from_dict(data)
    q = _random_q(description, 3, seed=6)
    kin = forward_kinematics(description, q)
    for k in range(len(q)):
        reference = _reference_fk(description, q[k])
        for index, element in enumerate(description.element_names):
            np.testing.assert_allclose(kin.ends[k, index], reference[element], atol=1e-12)


@pytest.mark.parametrize("name", BUILTINS)
def test_frames_are_rigid_transforms(name: str) -> None:
    description = load_robot(name)
    kin = forward_kinematics(description, _random_q(description, 6, seed=7))
    rotations = kin.frames[..., :3, :3]
    identity = np.broadcast_to(np.eye(3), rotations.shape)
    np.testing.assert_allclose(rotations @ np.swapaxes(rotations, -1, -2), identity, atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(rotations), 1.0, atol=1e-12)
    np.testing.assert_array_equal(
        kin.frames[..., 3, :], np.broadcast_to([0, 0, 0, 1.0], kin.frames.shape[:-1])
    )


def test_planar2_hand_computed() -> None:
    description = load_robot("planar2")
    q = _random_q(description, 20, seed=8)
    q1, q2 = q[:, 0], q[:, 1]
    tool = forward_kinematics(description, q).tools["elbow_tool"]
    expected = np.stack(
        [
            0.3 * np.cos(q1) + 0.25 * np.cos(q1 + q2),
            0.3 * np.sin(q1) + 0.25 * np.sin(q1 + q2),
            np.full_like(q1, 0.1),  # the base height
        ],
        axis=-1,
    )
    np.testing.assert_allclose(tool[:, :3, 3], expected, atol=1e-12)
    yaw = np.arctan2(tool[:, 1, 0], tool[:, 0, 0])
    np.testing.assert_allclose(np.cos(yaw - (q1 + q2)), 1.0, atol=1e-12)
    np.testing.assert_allclose(tool[:, 2, :3], np.broadcast_to([0, 0, 1.0], (20, 3)), atol=1e-15)


def test_planar2_elbow_frame_sits_at_the_end_of_the_upper_arm() -> None:
    description = load_robot("planar2")
    kin = forward_kinematics(description, np.array([math.pi / 2, 0.3]))
    np.testing.assert_allclose(kin.frame("elbow")[:3, 3], [0.0, 0.3, 0.1], atol=1e-15)
    np.testing.assert_allclose(kin.frame("shoulder")[:3, 3], [0.0, 0.0, 0.1], atol=1e-15)


@pytest.mark.parametrize("joint", [0, 1, 2])
def test_gantry3_tool_moves_by_dq_along_its_axis(joint: int) -> None:
    description = load_robot("gantry3")
    world_axes = np.eye(3)  # x, y, z axes are world-aligned
    q = _random_q(description, 10, seed=9 + joint)
    dq = np.random.default_rng(joint).uniform(-0.1, 0.1, size=10)
    moved = q.copy()
    moved[:, joint] += dq
    before = forward_kinematics(description, q).tools["z_tool"]
    after = forward_kinematics(description, moved).tools["z_tool"]
    np.testing.assert_allclose(
        after[:, :3, 3] - before[:, :3, 3], dq[:, None] * world_axes[joint], atol=1e-14
    )
    np.testing.assert_array_equal(after[:, :3, :3], before[:, :3, :3])  # no rotation


def test_gantry3_tool_position_is_affine_in_q() -> None:
    description = load_robot("gantry3")
    q = np.array([0.1, 0.2, -0.3])
    tool = forward_kinematics(description, q).tools["z_tool"][:3, 3]
    # Base at z = 1 m; the tool hangs 0.15 m below the carriage (length along -z).
    np.testing.assert_allclose(tool, [0.1, 0.2, 1.0 - 0.3 - 0.15], atol=1e-15)


def test_trifinger_is_a_tree_with_three_tools() -> None:
    description = load_robot("trifinger")
    assert len(description.tool_names) == 3
    q = _random_q(description, 8, seed=10)
    kin = forward_kinematics(description, q)
    assert set(kin.tools) == set(description.tool_names)
    positions = tool_positions(description, q)
    assert positions.shape == (8, 3, 3)
    # Each finger's tip depends only on that finger's three joints.
    for finger, tool in enumerate(description.tool_names):
        changed = q.copy()
        others = [j for j in range(9) if j // 3 != finger]
        changed[:, others] = _random_q(description, 8, seed=11)[:, others]
        np.testing.assert_array_equal(
            forward_kinematics(description, changed).tools[tool], kin.tools[tool]
        )
    # The three tips are distinct points.
    gaps = np.linalg.norm(positions[:, :, None] - positions[:, None, :], axis=-1)
    assert np.all(gaps[:, ~np.eye(3, dtype=bool)] > 1e-3)


def _finite_difference_jacobian(
    description: RobotDescription, q: np.ndarray, tool: str, eps: float = 1e-6
) -> np.ndarray:
    columns = []
    for j in range(description.dof):
        step = np.zeros(description.dof)
        step[j] = eps
        plus = forward_kinematics(description, q + step).frame(tool)[:3, 3]
        minus = forward_kinematics(description, q - step).frame(tool)[:3, 3]
        columns.append((plus - minus) / (2 * eps))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("name", BUILTINS)
def test_position_jacobian_matches_finite_differences(name: str) -> None:
    description = load_robot(name)
    for q in _random_q(description, 3, seed=12):
        for tool in description.tool_names:
            jacobian = position_jacobian(description, q, tool)
            assert jacobian.shape == (3, description.dof)
            np.testing.assert_allclose(
                jacobian, _finite_difference_jacobian(description, q, tool), atol=1e-6
            )


def test_planar2_jacobian_is_analytic() -> None:
    description = load_robot("planar2")
    q1, q2 = 0.4, -1.1
    s1, c1, s12, c12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
    expected = np.array(
        [[-0.3 * s1 - 0.25 * s12, -0.25 * s12], [0.3 * c1 + 0.25 * c12, 0.25 * c12], [0.0, 0.0]]
    )
    jacobian = position_jacobian(description, np.array([q1, q2]), "elbow_tool")
    np.testing.assert_allclose(jacobian, expected, atol=1e-8)


@pytest.mark.parametrize(
    "shape", [(), (1,), (3,), (5, 1), (2, 3)], ids=["scalar", "1", "3", "5x1", "2x3"]
)
def test_wrong_q_shape_is_a_description_error(shape: tuple[int, ...]) -> None:
    description = load_robot("planar2")
    with pytest.raises(DescriptionError) as info:
        forward_kinematics(description, np.zeros(shape))
    message = str(info.value)
    assert "(..., 2)" in message and "planar2" in message and str(shape) in message


def test_unknown_frame_name() -> None:
    description = load_robot("planar2")
    kin = forward_kinematics(description, description.home)
    with pytest.raises(DescriptionError, match="wrist"):
        kin.frame("wrist")
    np.testing.assert_array_equal(kin.frame("elbow_tool"), kin.tools["elbow_tool"])


def test_fk_accepts_lists_and_does_not_modify_q() -> None:
    description = load_robot("arm6")
    q = _random_q(description, 1, seed=13)[0]
    original = q.copy()
    from_list = forward_kinematics(description, q.tolist())
    np.testing.assert_array_equal(from_list.frames, forward_kinematics(description, q).frames)
    np.testing.assert_array_equal(q, original)
