"""MJCF generation: MuJoCo's model of a description has its kinematics, dynamics and limits."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import one_joint

from jointlab.errors import DescriptionError
from jointlab.robots import (
    RobotDescription,
    builtin_robots,
    description_from_dict,
    forward_kinematics,
    load_robot,
)
from jointlab.sim import SimRobot
from jointlab.sim.actuators import ActuatorArray
from jointlab.sim.mujoco import description_to_mjcf
from jointlab.sim.mujoco.library import import_mujoco
from jointlab.sim.mujoco.mjcf import dc_joints, mujoco_quaternion

# Through JointLab, which picks a headless OpenGL backend before MuJoCo first loads.
mujoco = import_mujoco()


def compiled(description: RobotDescription) -> tuple:
    model = mujoco.MjModel.from_xml_string(description_to_mjcf(description))
    return model, mujoco.MjData(model)


@pytest.mark.parametrize("name", builtin_robots())
def test_mjcf_frames_match_forward_kinematics(name):
    description = load_robot(name)
    model, data = compiled(description)
    q = description.apply_coupling(description.home + 0.1)
    for i, joint in enumerate(description.joint_names):
        data.qpos[model.joint(joint).qposadr[0]] = q[i]
    mujoco.mj_kinematics(model, data)
    kinematics = forward_kinematics(description, q)
    for index, element in enumerate(description.element_names):
        body = model.body(f"{element}_link").id
        np.testing.assert_allclose(data.xpos[body], kinematics.frames[index][:3, 3], atol=1e-12)
        np.testing.assert_allclose(
            data.xmat[body].reshape(3, 3), kinematics.frames[index][:3, :3], atol=1e-12
        )
    for tool, frame in kinematics.tools.items():
        np.testing.assert_allclose(data.site_xpos[model.site(tool).id], frame[:3, 3], atol=1e-12)


def test_joint_fields_become_native_mujoco_fields():
    description = load_robot("arm6")
    model, _ = compiled(description)
    effort = ActuatorArray.from_description(description).effort
    for i, spec in enumerate(description.joints):
        joint = model.joint(spec.name)
        dof = joint.dofadr[0]
        np.testing.assert_allclose(joint.range, [spec.min, spec.max])
        assert model.dof_damping[dof] == spec.dynamics.damping
        assert model.dof_frictionloss[dof] == spec.dynamics.static_friction
        np.testing.assert_allclose(model.jnt_actfrcrange[joint.id], [-effort[i], effort[i]])
        assert model.jnt_actfrclimited[joint.id]
        link = model.body(f"{spec.name}_link")
        assert link.mass[0] == pytest.approx(spec.link.mass)
    # Brakes are inactive joint equalities until engaged; DC motors get their two line actuators.
    braked = [s.name for s in description.joints if s.has_brakes]
    assert [model.equality(f"{n}/brake").id for n in braked] == list(range(len(braked)))
    assert not model.eq_active0.any()
    dc_indices = dc_joints(ActuatorArray.from_description(description))
    dc = [description.joint_names[i] for i in dc_indices]
    assert dc == ["shoulder_pan", "shoulder_lift", "elbow"]
    assert model.nu == description.dof + 2 * len(dc)


def test_armature_is_read_from_the_description_when_it_has_one():
    description = one_joint()
    model, _ = compiled(description)
    expected = getattr(description, "armature", np.zeros(1))
    np.testing.assert_allclose(model.dof_armature, expected)


def test_a_coupling_with_several_leaders_is_an_exact_tendon_equality():
    description = description_from_dict(
        {
            "name": "differential",
            "actuators": [
                {"name": "a", "type": "rotary", "parent": "base", "min": -3, "max": 3},
                {"name": "b", "type": "rotary", "parent": "base", "min": -3, "max": 3},
                {
                    "name": "out",
                    "type": "rotary",
                    "parent": "base",
                    "min": -3,
                    "max": 3,
                    "home": 0.1,
                    "coupling": {"alpha_self": 2.0, "alpha_leading": {"a": 0.5, "b": -0.25}},
                },
            ],
        }
    )
    model, data = compiled(description)
    tendon = model.tendon("out/coupling")
    assert model.equality("out/coupling").type == mujoco.mjtEq.mjEQ_TENDON
    start = model.tendon_adr[tendon.id]
    wraps = slice(start, start + model.tendon_num[tendon.id])
    coefficients = dict(
        zip(model.wrap_objid[wraps].tolist(), model.wrap_prm[wraps].tolist(), strict=True)
    )
    assert coefficients == {2: 1.0, 0: -0.5, 1: 0.25}
    assert model.eq_data[model.equality("out/coupling").id][0] == pytest.approx(0.2)
    # On the relation the constraint is satisfied: the tendon length is the offset.
    data.qpos[:] = description.apply_coupling(np.array([0.4, -0.8, 0.0]))
    mujoco.mj_forward(model, data)
    assert data.ten_length[tendon.id] == pytest.approx(0.2, abs=1e-12)


def test_the_exported_mjcf_is_plain_text_mujoco_loads():
    text = description_to_mjcf(load_robot("trifinger"), dt=0.002)
    assert text.startswith('<mujoco model="trifinger">')
    assert 'solreflimit="0.004 1"' in text  # constraints stiffened for the given physics step
    model = mujoco.MjModel.from_xml_string(text)
    assert model.nu == 9 and model.nsite == 3


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "robots"))
from strategies import robot_dicts  # noqa: E402  (tests/robots: the description strategies)


@settings(max_examples=40)
@given(data=robot_dicts(), offset=st.floats(-0.5, 0.5))
def test_every_valid_description_compiles_with_exact_kinematics(data, offset):
    """MuJoCo expresses every description the schema accepts, exactly, or refuses it by name."""
    description = description_from_dict(data)
    locked = [s.name for s in description.joints if s.min == s.max]
    if locked:
        with pytest.raises(DescriptionError, match=f"joint {locked[0]!r} has no travel"):
            description_to_mjcf(description)
        return
    model, state = compiled(description)
    q = description.apply_coupling(
        np.clip(description.home + offset, description.lower, description.upper)
    )
    for i, joint in enumerate(description.joint_names):
        state.qpos[model.joint(joint).qposadr[0]] = q[i]
    if not description.base.fixed:
        pose = [*description.base.position, *mujoco_quaternion(description.base.orientation)]
        state.qpos[:7] = pose
    mujoco.mj_kinematics(model, state)
    kinematics = forward_kinematics(description, q)
    for tool, frame in kinematics.tools.items():
        np.testing.assert_allclose(state.site_xpos[model.site(tool).id], frame[:3, 3], atol=1e-9)
    couplings = description.dependent.sum()
    assert model.neq == couplings + description.has_brakes.sum()


def test_a_feature_mujoco_cannot_express_is_refused_at_load_by_name():
    locked = one_joint(name="locked", min=0.2, max=0.2, home=0.2, centre=0.2)
    with pytest.raises(DescriptionError) as info:
        SimRobot(locked, engine="mujoco")
    message = str(info.value)
    assert message.startswith("robot 'locked' cannot run on MuJoCo: joint 'j' has no travel")
    assert "type: fixed" in message
    with SimRobot(locked, engine="pybullet") as robot:  # PyBullet holds it at its stop
        assert robot.read().position[0] == pytest.approx(0.2)
