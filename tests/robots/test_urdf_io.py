"""URDF export and import: structure of ``to_urdf()``, ``from_urdf`` and round trips.

The FK-vs-PyBullet checks live in ``test_kinematics_vs_pybullet.py``; here the round trip
``to_urdf -> from_urdf`` is checked against our own FK, which is exact per docs/robot-files.md.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from strategies import robot_dicts

from jointlab.errors import DescriptionError
from jointlab.robots import (
    JointType,
    RobotDescription,
    builtin_robots,
    description_from_dict,
    description_from_urdf,
    description_to_urdf,
    forward_kinematics,
    load_robot,
)
from jointlab.robots.transforms import axis_angle_matrix, homogeneous, pose_matrix

BUILTINS = builtin_robots()


def _import(description: RobotDescription, folder: Path) -> RobotDescription:
    path = folder / f"{description.name}.urdf"
    path.write_text(description_to_urdf(description))
    return description_from_urdf(str(path))


def _single_leader(description: RobotDescription) -> np.ndarray:
    """Mask of joints whose coupling the URDF can carry (independent, or one leader)."""
    return np.array(
        [a.coupling is None or len(a.coupling.alpha_leading) == 1 for a in description.joints]
    )


def _check_round_trip(original: RobotDescription, imported: RobotDescription, seed: int) -> None:
    # Joint order, names, types, ranges and effort/velocity limits survive.
    assert imported.joint_names == original.joint_names
    for before in original.joints:
        after = imported.actuator(before.name)
        assert after.type is before.type, before.name
        assert (after.min, after.max) == (before.min, before.max), before.name
        assert after.limits.effort == before.limits.effort, before.name
        assert after.limits.velocity == before.limits.velocity, before.name
        assert after.dynamics == before.dynamics, before.name
        assert after.link is not None and before.link is not None
        assert after.link.mass == before.link.mass, before.name
        np.testing.assert_allclose(after.link.inertia, before.link.inertia, atol=1e-15)
    # FK agrees at random q (the URDF has no world pose: compose the base frame back in).
    rng = np.random.default_rng(seed)
    q = rng.uniform(original.lower, original.upper, size=(8, original.dof))
    ours = forward_kinematics(original, q)
    theirs = forward_kinematics(imported, q)
    base = pose_matrix(original.base.position, original.base.orientation)
    for index, name in enumerate(original.element_names):
        frame = theirs.frame(name)
        np.testing.assert_allclose(base @ frame, ours.frames[:, index], atol=1e-9, err_msg=name)
    # The exported tool frames come back as the chains' tool frames, names unchanged.
    assert imported.tool_names == original.tool_names
    for tool, frame in ours.tools.items():
        np.testing.assert_allclose(base @ theirs.tools[tool], frame, atol=1e-9)
    # Couplings with one leader travel as URDF mimic tags and keep their meaning.
    carried = _single_leader(original)
    np.testing.assert_allclose(
        imported.apply_coupling(q)[:, carried], original.apply_coupling(q)[:, carried], atol=1e-12
    )
    np.testing.assert_array_equal(imported.dependent, original.dependent & carried)


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_urdf_round_trip(name: str, tmp_path: Path) -> None:
    original = load_robot(name)
    _check_round_trip(original, _import(original, tmp_path), seed=1)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=robot_dicts(max_elements=5))
def test_generated_descriptions_survive_urdf_round_trip(
    data: dict[str, Any], tmp_path: Path
) -> None:
    original = description_from_dict(data)
    _check_round_trip(original, _import(original, tmp_path), seed=2)


# --------------------------------------------------------------------------- export
@pytest.mark.parametrize("name", BUILTINS)
def test_exported_urdf_structure(name: str) -> None:
    description = load_robot(name)
    root = ET.fromstring(description_to_urdf(description))
    assert root.tag == "robot" and root.get("name") == name
    joints = {j.get("name"): j for j in root.findall("joint")}
    links = {link.get("name"): link for link in root.findall("link")}
    kinds = {JointType.ROTARY: "revolute", JointType.LINEAR: "prismatic", JointType.FIXED: "fixed"}
    for spec in description.actuators:
        joint = joints[spec.name]
        assert joint.get("type") == kinds[spec.type]
        assert joint.find("child").get("link") == f"{spec.name}_link"
        if spec.is_joint:
            limit = joint.find("limit")
            assert float(limit.get("lower")) == spec.min
            assert float(limit.get("upper")) == spec.max
            assert float(limit.get("effort")) == spec.limits.effort
            assert float(limit.get("velocity")) == spec.limits.velocity
            dynamics = joint.find("dynamics")
            assert float(dynamics.get("damping")) == spec.dynamics.damping
            assert float(dynamics.get("friction")) == spec.dynamics.static_friction
            axis = [float(v) for v in joint.find("axis").get("xyz").split()]
            assert tuple(axis) == spec.axis
        link = links[f"{spec.name}_link"]
        assert link.find("visual/geometry") is not None
        assert link.find("collision/geometry") is not None
        inertial = link.find("inertial")
        assert float(inertial.find("mass").get("value")) == spec.link.mass
        tensor = inertial.find("inertia")
        # Every attribute is a plain number (numpy 2 reprs like "np.float64(...)" are not).
        values = {key: float(tensor.get(key)) for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        assert values["ixx"] == spec.link.inertia[0][0]
        assert values["iyz"] == spec.link.inertia[1][2]
    for tool in description.tool_names:
        assert tool in links
        assert joints[f"{tool}_joint"].get("type") == "fixed"


def test_capsule_shapes_follow_the_link() -> None:
    description = load_robot("planar2")
    root = ET.fromstring(description_to_urdf(description))
    link = next(x for x in root.findall("link") if x.get("name") == "shoulder_link")
    capsule = link.find("visual/geometry/capsule")
    assert float(capsule.get("length")) == 0.3
    assert float(capsule.get("radius")) == description.actuator("shoulder").link.radius
    centre = [float(v) for v in link.find("visual/origin").get("xyz").split()]
    np.testing.assert_allclose(centre, [0.15, 0.0, 0.0], atol=1e-15)


def test_mimic_tag_for_simple_coupling() -> None:
    description = load_robot("coupled_gripper")
    root = ET.fromstring(description_to_urdf(description))
    joint = next(j for j in root.findall("joint") if j.get("name") == "right_finger")
    mimic = joint.find("mimic")
    assert mimic is not None and mimic.get("joint") == "left_finger"
    spec = description.actuator("right_finger")
    assert float(mimic.get("multiplier")) == spec.coupling.leading["left_finger"]
    assert float(mimic.get("offset")) == spec.coupling.alpha_self * spec.home
    others = [j for j in root.findall("joint") if j.get("name") != "right_finger"]
    assert all(j.find("mimic") is None for j in others)


# --------------------------------------------------------------------------- import
URDF_HEAD = '<?xml version="1.0"?>\n<robot name="{name}">\n'


def _write_urdf(folder: Path, body: str, name: str = "hand") -> Path:
    path = folder / f"{name}.urdf"
    path.write_text(URDF_HEAD.format(name=name) + body + "</robot>\n")
    return path


def _links(*names: str) -> str:
    return "".join(
        f'<link name="{n}"><inertial><mass value="0.5"/>'
        '<inertia ixx="1e-3" ixy="0" ixz="0" iyy="2e-3" iyz="0" izz="3e-3"/></inertial></link>\n'
        for n in names
    )


def test_import_keeps_arbitrary_joint_origins_exact(tmp_path: Path) -> None:
    body = _links("root", "a", "b") + (
        '<joint name="j1" type="revolute"><parent link="root"/><child link="a"/>'
        '<origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 0.1"/><axis xyz="0 1 0"/>'
        '<limit lower="-1" upper="1" effort="3" velocity="4"/></joint>\n'
        '<joint name="j2" type="prismatic"><parent link="a"/><child link="b"/>'
        '<origin xyz="0 0.4 -0.1" rpy="1.2 0 0.5"/><axis xyz="1 1 0"/>'
        '<limit lower="0" upper="0.2" effort="30" velocity="0.5"/></joint>\n'
    )
    description = description_from_urdf(str(_write_urdf(tmp_path, body)))
    assert description.joint_names == ("j1", "j2")
    q = np.array([0.7, 0.15])
    kin = forward_kinematics(description, q)
    first = pose_matrix([0.1, 0.2, 0.3], [0.3, -0.2, 0.1]) @ homogeneous(
        axis_angle_matrix(np.array([0.0, 1.0, 0.0]), 0.7), np.zeros(3)
    )
    axis = np.array([1.0, 1.0, 0.0]) / math.sqrt(2.0)
    second = first @ pose_matrix([0.0, 0.4, -0.1], [1.2, 0.0, 0.5])
    second = second @ homogeneous(np.eye(3), 0.15 * axis)
    np.testing.assert_allclose(kin.frame("j1"), first, atol=1e-12)
    np.testing.assert_allclose(kin.frame("j2"), second, atol=1e-12)
    j1 = description.actuator("j1")
    assert (j1.min, j1.max, j1.limits.effort, j1.limits.velocity) == (-1.0, 1.0, 3.0, 4.0)
    assert j1.link.mass == 0.5


def test_import_tree_with_continuous_and_fixed_joints(tmp_path: Path) -> None:
    body = _links("root", "left", "right", "tip") + (
        '<joint name="spin" type="continuous"><parent link="root"/><child link="left"/>'
        '<origin xyz="0 0.1 0"/><axis xyz="0 0 1"/></joint>\n'
        '<joint name="slide" type="prismatic"><parent link="root"/><child link="right"/>'
        '<origin xyz="0 -0.1 0"/><axis xyz="0 0 1"/>'
        '<limit lower="-0.1" upper="0.1" effort="5" velocity="1"/></joint>\n'
        '<joint name="weld" type="fixed"><parent link="left"/><child link="tip"/>'
        '<origin xyz="0.2 0 0"/></joint>\n'
    )
    description = description_from_urdf(str(_write_urdf(tmp_path, body)))
    assert description.joint_names == ("spin", "slide")
    spin = description.actuator("spin")
    assert spin.type is JointType.ROTARY and (spin.min, spin.max) == (-2 * math.pi, 2 * math.pi)
    assert description.actuator("slide").type is JointType.LINEAR
    assert description.actuator("weld").type is JointType.FIXED
    kin = forward_kinematics(description, np.array([math.pi / 2, 0.05]))
    np.testing.assert_allclose(kin.frame("weld")[:3, 3], [0.0, 0.3, 0.0], atol=1e-12)
    np.testing.assert_allclose(kin.frame("slide")[:3, 3], [0.0, -0.1, 0.05], atol=1e-12)


def test_import_mimic_offset_outside_the_range(tmp_path: Path) -> None:
    # q_follower = 2 * q_leader + 0.5, with the offset outside the follower's own range.
    body = _links("root", "a", "b") + (
        '<joint name="leader" type="revolute"><parent link="root"/><child link="a"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>\n'
        '<joint name="follower" type="revolute"><parent link="root"/><child link="b"/>'
        '<limit lower="-0.25" upper="0.0" effort="1" velocity="1"/>'
        '<mimic joint="leader" multiplier="2" offset="0.5"/></joint>\n'
    )
    description = description_from_urdf(str(_write_urdf(tmp_path, body)))
    q = description.apply_coupling(np.array([-0.3, 0.0]))
    assert q[1] == pytest.approx(2 * -0.3 + 0.5, abs=1e-15)


ERROR_CASES = [
    (
        "unsupported_type",
        '<joint name="free" type="floating"><parent link="root"/><child link="a"/></joint>',
        "'free'",
        "floating",
    ),
    (
        "bad_origin",
        '<joint name="odd" type="fixed"><parent link="root"/><child link="a"/>'
        '<origin xyz="0 0"/></joint>',
        "'odd'",
        "3 numbers",
    ),
    (
        "bad_number",
        '<joint name="nan" type="revolute"><parent link="root"/><child link="a"/>'
        '<limit lower="low" upper="1"/></joint>',
        "'low'",
        "not a number",
    ),
    (
        "xacro",
        '<joint name="j" type="fixed"><parent link="root"/><child link="a"/>'
        '<origin xyz="$(optenv OFFSET 0 0 1)"/></joint>',
        "$(optenv",
        "expand the file first",
    ),
    (
        "xacro_property",
        '<joint name="j" type="fixed"><parent link="root"/><child link="a"/>'
        '<origin xyz="0 0 ${height}"/></joint>',
        "<origin> of joint 'j'",
        "expand the file first",
    ),
    (
        "xacro_element",
        '<xacro:property xmlns:xacro="http://www.ros.org/wiki/xacro" name="height" value="1"/>',
        "<xacro:property>",
        "expand the file first",
    ),
]


def test_xacro_inside_comments_is_not_xacro(tmp_path: Path) -> None:
    # As in pybullet_data/quadruped/spirit40.urdf: ${...} only inside XML comments.
    body = (
        _links("root", "a") + '<!-- <origin xyz="0 0 ${height}"/> $(find pkg) -->\n'
        '<joint name="j" type="revolute"><parent link="root"/><child link="a"/>'
        '<!-- <limit lower="-${pi}"/> --><limit lower="-1" upper="1"/></joint>\n'
    )
    description = description_from_urdf(str(_write_urdf(tmp_path, body)))
    assert description.joint_names == ("j",)


def test_spirit40_of_pybullet_data_imports() -> None:
    pybullet_data = pytest.importorskip("pybullet_data")
    path = Path(pybullet_data.getDataPath()) / "quadruped" / "spirit40.urdf"
    assert "${" in path.read_text()  # in its comments
    description = description_from_urdf(str(path))
    assert description.dof == 12


@pytest.mark.parametrize(
    ("joint", "named", "reason"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES]
)
def test_import_errors_name_the_file(tmp_path: Path, joint: str, named: str, reason: str) -> None:
    path = _write_urdf(tmp_path, _links("root", "a") + joint + "\n")
    with pytest.raises(DescriptionError) as info:
        description_from_urdf(str(path))
    message = str(info.value)
    assert str(path) in message and named in message and reason in message, message


def test_import_two_roots(tmp_path: Path) -> None:
    path = _write_urdf(tmp_path, _links("one", "two"))
    with pytest.raises(DescriptionError, match="one root link"):
        description_from_urdf(str(path))


def test_import_malformed_xml_and_missing_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot><link name='a'>")
    with pytest.raises(DescriptionError, match="cannot read URDF") as info:
        description_from_urdf(str(broken))
    assert str(broken) in str(info.value)
    with pytest.raises(DescriptionError, match="cannot read URDF"):
        description_from_urdf(str(tmp_path / "nowhere.urdf"))


@pytest.mark.parametrize(
    "actuators",
    [
        [  # a tree whose file order is not breadth-first
            {"name": "mount", "type": "fixed", "length": 0.1},
            {"name": "deep_mount", "type": "fixed", "parent": "mount", "length": 0.1},
            {"name": "deep", "type": "rotary", "parent": "deep_mount", "min": -1, "max": 1},
            {"name": "shallow", "type": "linear", "parent": "mount", "min": -1, "max": 1},
        ],
        [  # a forward parent reference
            {"name": "outer", "type": "rotary", "parent": "inner", "min": -1, "max": 1},
            {
                "name": "inner",
                "type": "rotary",
                "parent": "base",
                "length": 0.2,
                "min": -1,
                "max": 1,
            },
        ],
    ],
    ids=["tree", "forward_reference"],
)
def test_import_keeps_the_joint_order(tmp_path: Path, actuators: list[dict[str, Any]]) -> None:
    original = description_from_dict({"name": "order", "actuators": actuators})
    imported = _import(original, tmp_path)
    assert imported.joint_names == original.joint_names
    _check_round_trip(original, imported, seed=3)
