"""Every URDF with joints that PyBullet loads from pybullet_data imports, with its kinematics.

Walks ``pybullet_data``: each ``.urdf`` that mentions a joint is loaded by PyBullet (DIRECT,
fixed base, shapes skipped: kinematics only) and by JointLab. Every one PyBullet loads with
joints must import, except unexpanded xacro files, which must be refused with the advice to
expand them. The forward kinematics of each imported robot is compared with PyBullet's link
frames at random joint positions (spherical joints through their quaternion). The summary is
printed (``pytest -s``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pybullet
import pybullet_data
import pytest
from scipy.spatial.transform import Rotation

from jointlab.errors import DescriptionError
from jointlab.robots import RobotDescription, forward_kinematics, load_robot
from jointlab.robots.transforms import quaternion_matrix

ROOT = Path(pybullet_data.getDataPath())
FLAGS = pybullet.URDF_IGNORE_VISUAL_SHAPES | pybullet.URDF_IGNORE_COLLISION_SHAPES
#: Files PyBullet loads that are unexpanded xacro (substitutions left in attributes; those of
#: quadruped/spirit40.urdf and xarm/xarm6_with_gripper.urdf are inside comments: they import).
XACRO = {"husky/husky.urdf"}


def candidates() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.urdf") if "<joint" in p.read_text(errors="replace"))


def pybullet_joints(client: int, body: int) -> list[tuple[int, str, int]]:
    """(index, name, type) of every joint of ``body``."""
    return [
        (j, info[1].decode(), info[2])
        for j in range(pybullet.getNumJoints(body, physicsClientId=client))
        for info in [pybullet.getJointInfo(body, j, physicsClientId=client)]
    ]


def set_pose(client: int, body: int, description: RobotDescription, q: np.ndarray) -> None:
    """Put PyBullet's joints at JointLab's ``q`` (couplings already applied)."""
    values = dict(zip(description.joint_names, q, strict=True))
    for index, name, kind in pybullet_joints(client, body):
        if kind == pybullet.JOINT_SPHERICAL:
            angles = [values[f"{name}__rx"], values[f"{name}__ry"], values[name]]
            quaternion = Rotation.from_euler("XYZ", angles).as_quat()  # Rx·Ry·Rz, intrinsic
            pybullet.resetJointStateMultiDof(body, index, quaternion, physicsClientId=client)
        elif kind in (pybullet.JOINT_REVOLUTE, pybullet.JOINT_PRISMATIC):
            pybullet.resetJointState(body, index, values[name], physicsClientId=client)


def kinematic_error(
    client: int, body: int, description: RobotDescription, rng: np.random.Generator
) -> tuple[float, float]:
    """Largest link-frame position (m) and rotation (rad) difference over random poses."""
    worst = [0.0, 0.0]
    for _ in range(3):
        q = description.apply_coupling(rng.uniform(description.lower, description.upper))
        set_pose(client, body, description, q)
        ours = forward_kinematics(description, q)
        for index, name, _ in pybullet_joints(client, body):
            state = pybullet.getLinkState(
                body, index, computeForwardKinematics=True, physicsClientId=client
            )
            theirs = np.eye(4)
            theirs[:3, :3] = quaternion_matrix(state[5])
            theirs[:3, 3] = state[4]
            frame = ours.frame(name)
            worst[0] = max(worst[0], float(np.abs(frame[:3, 3] - theirs[:3, 3]).max()))
            relative = Rotation.from_matrix(frame[:3, :3].T @ theirs[:3, :3])
            worst[1] = max(worst[1], float(relative.magnitude()))
    return worst[0], worst[1]


@pytest.mark.slow
def test_every_pybullet_data_urdf_with_joints_imports() -> None:
    client = pybullet.connect(pybullet.DIRECT)
    rng = np.random.default_rng(0)
    loaded, imported, refused_xacro, errors = [], [], [], {}
    worst = (0.0, 0.0, "")
    try:
        for path in candidates():
            name = path.relative_to(ROOT).as_posix()
            try:
                body = pybullet.loadURDF(
                    str(path), useFixedBase=True, flags=FLAGS, physicsClientId=client
                )
            except pybullet.error:
                continue
            if pybullet.getNumJoints(body, physicsClientId=client) == 0:
                pybullet.removeBody(body, physicsClientId=client)
                continue
            loaded.append(name)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    description = load_robot(path)
            except DescriptionError as error:
                if name in XACRO and "expand the file first" in str(error):
                    refused_xacro.append(name)
                else:
                    errors[name] = str(error)
                pybullet.removeBody(body, physicsClientId=client)
                continue
            imported.append(name)
            position, rotation = kinematic_error(client, body, description, rng)
            if position > worst[0]:
                worst = (position, max(rotation, worst[1]), name)
            else:
                worst = (worst[0], max(rotation, worst[1]), worst[2])
            pybullet.removeBody(body, physicsClientId=client)
    finally:
        pybullet.disconnect(client)
    print(
        f"\npybullet_data: {len(loaded)} URDFs with joints loaded by PyBullet, "
        f"{len(imported)} imported by JointLab, {len(refused_xacro)} refused as unexpanded "
        f"xacro ({', '.join(refused_xacro)}); largest forward-kinematics difference "
        f"{worst[0]:.2e} m, {worst[1]:.2e} rad ({worst[2]})"
    )
    assert errors == {}
    assert sorted(refused_xacro) == sorted(XACRO)
    assert len(imported) == len(loaded) - len(XACRO) and len(imported) >= 50
    assert worst[0] < 1e-5 and worst[1] < 1e-5  # PyBullet reads URDF numbers as float32


def test_lenient_parsing_warns_and_decomposes(tmp_path: Path) -> None:
    from jointlab.robots.urdf_import import URDFImportWarning

    path = tmp_path / "lenient.urdf"
    path.write_text(
        '\n  <?xml version="1.0"?>\n<robot name="lenient">\n'
        '<link name="root"/><link name="a"/><link name="b"/><link name="c"/>\n'
        '<joint name="hinge" type="revolute"><parent link="root"/><child link="a"/>'
        '<origin xyz="0.1, 0, 0.2" rpy="0 0.5 0 0"/><limit lower="1" upper="-1."/></joint>\n'
        '<joint name="ball" type="spherical"><parent link="a"/><child link="b"/></joint>\n'
        '<joint name="table" type="planar"><parent link="b"/><child link="c"/>'
        '<axis xyz="0 0 1"/></joint>\n</robot>\x00'
    )
    with pytest.warns(URDFImportWarning) as caught:
        description = load_robot(path)
    messages = " ".join(str(w.message) for w in caught)
    assert "'hinge'" in messages and "swap" not in messages  # names the joint
    assert "4 numbers where 3 belong" in messages and "lower 1.0 > upper -1.0" in messages
    hinge = description.actuator("hinge")
    assert (hinge.min, hinge.max) == (-1.0, 1.0)
    assert description.joint_names == (
        "hinge",
        "ball__rx",
        "ball__ry",
        "ball",
        "table__tu",
        "table__tv",
        "table",
    )
    assert [description.actuator(n).link.mass for n in ("ball__rx", "ball__ry")] == [1e-4] * 2
    # spherical: R = Rx(a)·Ry(b)·Rz(c) about the joint frame's own axes
    q = np.zeros(description.dof)
    q[1:4] = [0.3, -0.2, 0.5]
    kin = forward_kinematics(description, q)
    expected = Rotation.from_euler("XYZ", [0.3, -0.2, 0.5]).as_matrix()
    relative = kin.frame("hinge")[:3, :3].T @ kin.frame("ball")[:3, :3]
    np.testing.assert_allclose(relative, expected, atol=1e-12)
    # planar: two translations in the plane normal to the axis, then a turn about it
    q[4:7] = [0.2, -0.1, 0.7]
    kin = forward_kinematics(description, q)
    moved = np.linalg.inv(kin.frame("ball")) @ kin.frame("table")
    assert moved[2, 3] == pytest.approx(0.0, abs=1e-12)
    assert np.hypot(moved[0, 3], moved[1, 3]) == pytest.approx(np.hypot(0.2, 0.1))
    assert Rotation.from_matrix(moved[:3, :3]).as_rotvec() == pytest.approx([0, 0, 0.7])
