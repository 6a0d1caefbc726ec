"""Batched rigid-body torques equal the controllers' recursive Newton–Euler, sample by sample."""

from __future__ import annotations

import numpy as np
import pytest

import jointlab
from jointlab.controllers import DynamicsModel
from jointlab.identify.regression import nominal_armature
from jointlab.identify.rigid_body import rigid_body_torque


@pytest.mark.parametrize("name", ["arm6", "planar2", "gantry3", "trifinger", "coupled_gripper"])
def test_batched_torques_match_the_controllers_model(name):
    description = jointlab.load_robot(name)
    model = DynamicsModel(description)
    rng = np.random.default_rng(11)
    shape = (20, description.dof)
    q = rng.uniform(description.lower, description.upper, shape)
    qd = rng.normal(0.0, 1.0, shape)
    qdd = rng.normal(0.0, 3.0, shape)
    states = zip(q, qd, qdd, strict=True)
    expected = np.array([model.inverse_dynamics(*state) for state in states])
    # the controllers' model carries the reflected rotor inertia (armature) on M's diagonal
    armature = nominal_armature(description) * qdd
    np.testing.assert_allclose(
        rigid_body_torque(description, q, qd, qdd) + armature, expected, rtol=1e-10, atol=1e-10
    )


def test_a_single_state_works_too():
    description = jointlab.load_robot("arm6")
    q = description.home
    torque = rigid_body_torque(description, q, np.zeros(6), np.zeros(6))
    np.testing.assert_allclose(torque[0], DynamicsModel(description).gravity_torque(q), atol=1e-10)
