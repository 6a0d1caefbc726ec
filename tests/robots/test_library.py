"""Built-in robots: every one validates and loads, and each has its documented properties."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jointlab.robots import (
    JointType,
    RobotDescription,
    builtin_path,
    builtin_robots,
    description_from_dict,
    description_to_dict,
    forward_kinematics,
    load_robot,
    parse_yaml,
)

BASE = "base"
REQUIRED = {"planar2", "arm6", "gantry3", "trifinger", "coupled_gripper", "ssl_robot"}
BUILTINS = builtin_robots()
ROOT = Path(__file__).resolve().parents[2]


def test_all_required_robots_are_built_in() -> None:
    assert REQUIRED <= set(BUILTINS)
    for name in BUILTINS:
        assert builtin_path(name).is_file()


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_validates_and_loads(name: str) -> None:
    description = load_robot(name)
    assert isinstance(description, RobotDescription)
    assert description.name == name
    assert description_from_dict(description_to_dict(description)) == description
    assert parse_yaml(builtin_path(name).read_text(), source=name) == description


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_values_are_sane(name: str) -> None:
    d = load_robot(name)
    assert d.dof == len(d.joint_names) >= 1
    assert np.all(d.lower <= d.home) and np.all(d.home <= d.upper)
    assert np.all(d.lower <= d.centre) and np.all(d.centre <= d.upper)
    assert np.all(d.soft_lower >= d.lower) and np.all(d.soft_upper <= d.upper)
    for vector in (d.velocity_limit, d.acceleration_limit, d.jerk_limit, d.effort_limit):
        assert np.all(vector > 0)
    assert np.all(d.config_speed <= d.velocity_limit)
    assert np.all(d.default_kp >= 0) and np.all(d.default_kd >= 0)
    for spec in d.actuators:
        assert spec.link is not None and spec.link.mass > 0 and spec.link.radius > 0, spec.name
        assert np.all(np.linalg.eigvalsh(np.array(spec.link.inertia)) > 0), spec.name
        if spec.is_joint:
            assert np.linalg.norm(spec.axis) == pytest.approx(1.0, abs=1e-15)
    kin = forward_kinematics(d, d.home)
    assert np.all(np.isfinite(kin.ends))
    assert len(kin.tools) == len(d.tool_names) >= 1


def test_planar2() -> None:
    d = load_robot("planar2")
    assert d.dof == 2
    assert d.joint_names == ("shoulder", "elbow")
    assert all(a.type is JointType.ROTARY for a in d.joints)
    assert [a.length for a in d.joints] == [0.3, 0.25]
    assert all(a.axis == (0.0, 0.0, 1.0) for a in d.joints)  # planar: vertical axes


def test_arm6() -> None:
    d = load_robot("arm6")
    assert d.dof == 6
    assert all(a.type is JointType.ROTARY for a in d.joints)
    np.testing.assert_array_equal(d.has_brakes, [True, True, True, False, False, False])
    # Realistic: proximal joints carry more mass and effort than the wrist.
    masses = np.array([a.link.mass for a in d.joints])
    assert masses[:3].min() > masses[3:].max()
    assert d.effort_limit[:3].min() > d.effort_limit[3:].max()
    assert np.all(d.upper - d.lower <= 2 * 2 * np.pi)
    assert d.base.fixed


def test_gantry3() -> None:
    d = load_robot("gantry3")
    assert d.dof == 3
    assert all(a.type is JointType.LINEAR for a in d.joints)
    np.testing.assert_array_equal(d.is_linear, [True, True, True])
    axes = np.array([a.axis for a in d.joints])
    np.testing.assert_array_equal(axes, np.eye(3))  # X, Y, Z


def test_trifinger() -> None:
    d = load_robot("trifinger")
    assert d.dof == 9
    assert len(d.tool_names) == 3
    roots = [a.name for a in d.actuators if a.parent == BASE]
    assert len(roots) == 3  # three chains from one base

    def chain_root(name: str) -> str:
        while d.actuator(name).parent != BASE:
            name = d.actuator(name).parent
        return name

    tool_roots = {chain_root(tool[: -len("_tool")]) for tool in d.tool_names}
    assert tool_roots == set(roots)
    joint_roots = [chain_root(j) for j in d.joint_names]
    assert sorted(joint_roots.count(r) for r in roots) == [3, 3, 3]


def test_coupled_gripper() -> None:
    d = load_robot("coupled_gripper")
    assert d.dependent.sum() == 1
    (index,) = np.flatnonzero(d.dependent)
    follower = d.joints[index]
    assert follower.coupling is not None
    for lead, _alpha in follower.coupling.alpha_leading:
        assert d.actuator(lead).is_joint and d.actuator(lead).coupling is None
    q = d.home.copy()
    lead_index = d.joint_index(follower.coupling.alpha_leading[0][0])
    q[lead_index] = 0.03
    coupled = d.apply_coupling(q)
    expected = follower.coupling.alpha_self * follower.home + sum(
        alpha * q[d.joint_index(name)] for name, alpha in follower.coupling.alpha_leading
    )
    assert coupled[index] == pytest.approx(expected)
    np.testing.assert_array_equal(np.delete(coupled, index), np.delete(q, index))


def test_ssl_robot() -> None:
    d = load_robot("ssl_robot")
    assert d.base.fixed  # a planar mechanism: the drive joints stand for the wheels
    assert d.joint_names == ("base_x", "base_y", "base_w", "dribbler", "kicker")
    types = {a.name: a.type for a in d.joints}
    assert types == {
        "base_x": JointType.LINEAR,
        "base_y": JointType.LINEAR,
        "base_w": JointType.ROTARY,
        "dribbler": JointType.ROTARY,
        "kicker": JointType.LINEAR,
    }
    # base_x and base_y move the chassis along the world x and y axes; base_w turns it about z.
    q = d.home.copy()
    kin0 = forward_kinematics(d, q)
    q[0], q[1], q[2] = 0.5, -0.25, np.pi / 2
    kin1 = forward_kinematics(d, q)
    chassis0, chassis1 = kin0.frame("base_w"), kin1.frame("base_w")
    np.testing.assert_allclose(chassis1[:3, 3] - chassis0[:3, 3], [0.5, -0.25, 0.0], atol=1e-12)
    turned = chassis0[:3, :3].T @ chassis1[:3, :3]
    world_turn = chassis1[:3, :3] @ chassis0[:3, :3].T
    np.testing.assert_allclose(world_turn[:, 2], [0.0, 0.0, 1.0], atol=1e-12)
    assert np.trace(turned) == pytest.approx(1.0, abs=1e-12)  # a quarter turn


def test_import_and_load_in_a_fresh_interpreter() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", "import jointlab; d = jointlab.load_robot('arm6'); print(d.dof)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "6\n"
