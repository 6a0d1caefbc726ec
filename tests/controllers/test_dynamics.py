"""Gravity compensation and inverse dynamics from the description (numpy, no PyBullet)."""

import numpy as np
import pybullet
import pytest
from pybullet_urdf import load_urdf

from jointlab.controllers import DynamicsModel, GravityCompensation
from jointlab.interface import ArrayState
from jointlab.robots import (
    description_from_dict,
    description_to_dict,
    forward_kinematics,
    load_robot,
)

ROBOTS = ["arm6", "gantry3", "planar2", "trifinger"]


def potential_energy(model, description, q):
    kin = forward_kinematics(description, q)
    com = np.einsum("eij,ej->ei", kin.frames[:, :3, :3], model._com_moving) + kin.frames[:, :3, 3]
    return -np.sum(model.mass * (com @ model.gravity))


@pytest.mark.parametrize("name", ROBOTS)
def test_gravity_torque_is_the_gradient_of_potential_energy(name):
    description = load_robot(name)
    model = DynamicsModel(description)
    q = np.random.default_rng(3).uniform(description.soft_lower, description.soft_upper)
    eps = 1e-6
    numeric = np.array(
        [
            (
                potential_energy(model, description, q + eps * e)
                - potential_energy(model, description, q - eps * e)
            )
            / (2 * eps)
            for e in np.eye(description.dof)
        ]
    )
    np.testing.assert_allclose(model.gravity_torque(q), numeric, atol=1e-6)


@pytest.mark.parametrize("name", ROBOTS)
def test_frames_match_forward_kinematics(name):
    description = load_robot(name)
    q = np.random.default_rng(4).uniform(description.soft_lower, description.soft_upper)
    np.testing.assert_allclose(
        DynamicsModel(description).end_frames(q),
        forward_kinematics(description, q).ends,
        atol=1e-12,
    )


def without_armature(description):
    data = description_to_dict(description)
    for entry in data["actuators"]:
        if "dynamics" in entry:
            entry["dynamics"]["armature"] = 0.0
    return description_from_dict(data)


@pytest.mark.parametrize("name", ["arm6", "planar2", "gantry3"])
def test_armature_adds_exactly_armature_times_acceleration(name):
    description = load_robot(name)
    rigid = DynamicsModel(without_armature(description))
    model = DynamicsModel(description)
    assert np.all(model.armature > 0)
    rng = np.random.default_rng(6)
    q, qd, qdd = (rng.uniform(-1, 1, description.dof) for _ in range(3))
    np.testing.assert_allclose(
        model.inverse_dynamics(q, qd, qdd),
        rigid.inverse_dynamics(q, qd, qdd) + model.armature * qdd,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        model.mass_matrix(q), rigid.mass_matrix(q) + np.diag(model.armature), atol=1e-12
    )


@pytest.mark.parametrize("name", ["arm6", "planar2", "gantry3"])
def test_inverse_dynamics_matches_pybullet(name):
    # the rigid-body part; PyBullet has no armature (see test_sim_armature.py)
    description = without_armature(load_robot(name))
    model = DynamicsModel(description)
    rng = np.random.default_rng(5)
    client = pybullet.connect(pybullet.DIRECT)
    try:
        pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
        body = load_urdf(client, description)
        names = [
            pybullet.getJointInfo(body, j, physicsClientId=client)[1].decode()
            for j in range(pybullet.getNumJoints(body, physicsClientId=client))
        ]
        movable = [names.index(n) for n in description.joint_names]
        assert movable == list(range(description.dof))  # tool joints are fixed, at the end
        for _ in range(3):
            q, qd, qdd = (rng.uniform(-1, 1, description.dof) * s for s in (0.5, 1.0, 2.0))
            q = np.clip(description.home + q, description.soft_lower, description.soft_upper)
            expected = pybullet.calculateInverseDynamics(
                body, q.tolist(), qd.tolist(), qdd.tolist(), physicsClientId=client
            )
            # the URDF's tool links carry a tiny 1e-4 kg mass the description does not have
            np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), expected, atol=2e-3)
            np.testing.assert_allclose(
                model.inverse_dynamics(q, 0 * q, 0 * q), model.gravity_torque(q), atol=1e-12
            )
    finally:
        pybullet.disconnect(client)


def test_gravity_compensation_controller():
    description = load_robot("arm6")
    controller = GravityCompensation(description, scale=0.5)
    q = description.home
    zeros = np.zeros(6)
    state = ArrayState(0.0, q, zeros, zeros, zeros, zeros, np.ones(6, np.uint8), True, True)
    controller.reset(state)
    action = controller.compute(state)
    assert not action.pd_mask.any()
    np.testing.assert_allclose(action.torque, 0.5 * DynamicsModel(description).gravity_torque(q))
    assert abs(action.torque[1]) > 1.0  # the shoulder carries the arm


@pytest.mark.parametrize("name", [*ROBOTS, "coupled_gripper", "ssl_robot"])
def test_gravity_and_mass_matrix_is_both_from_one_pass(name):
    description = load_robot(name)
    model = DynamicsModel(description)
    rng = np.random.default_rng(8)
    for q in rng.uniform(description.lower, description.upper, (5, description.dof)):
        gravity, mass = model.gravity_and_mass_matrix(q)
        np.testing.assert_array_equal(gravity, model.gravity_torque(q))
        np.testing.assert_array_equal(mass, model.mass_matrix(q))
