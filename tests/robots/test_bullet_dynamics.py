"""Bullet's evaluation of the rigid-body model equals the numpy model it stands in for."""

import gc
import multiprocessing
import warnings
from pathlib import Path

import numpy as np
import pytest
from floating_robot import puck
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import robot_dicts

import jointlab.sim.pybullet  # noqa: F401 - the engine offers its evaluator when loaded
from jointlab.robots import (
    RobotDescription,
    builtin_robots,
    description_from_dict,
    description_to_dict,
    load_robot,
)
from jointlab.robots.dynamics import DynamicsModel, rigid_body_model
from jointlab.sim.pybullet.dynamics import BulletDynamics, bullet_model

OTHER_PEOPLES = [
    "kuka_iiwa/model.urdf",
    "franka_panda/panda.urdf",
    "xarm/xarm6_robot.urdf",
    "r2d2.urdf",
]


def assert_same_dynamics(description, gravity=(0.0, 0.0, -9.81), seed=0):
    """``rigid_body_model`` is Bullet's, and its g, M, inverse dynamics are the numpy model's."""
    model = rigid_body_model(description, gravity, bullet_model)
    reference = DynamicsModel(description, gravity)
    assert isinstance(model, BulletDynamics)
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(description.soft_lower), description.soft_lower, -3.0)
    upper = np.where(np.isfinite(description.soft_upper), description.soft_upper, 3.0)
    for _ in range(5):
        q = rng.uniform(lower, upper)
        qd, qdd = rng.uniform(-2.0, 2.0, (2, description.dof))
        gravity_torque, mass = model.gravity_and_mass_matrix(q)
        scale = 1.0 + np.abs(reference.gravity_torque(q)).max(initial=0.0)
        np.testing.assert_allclose(
            gravity_torque, reference.gravity_torque(q), rtol=0, atol=1e-10 * scale
        )
        np.testing.assert_array_equal(gravity_torque, model.gravity_torque(q))
        np.testing.assert_array_equal(mass, model.mass_matrix(q))
        # Bullet diagonalises each inertia tensor (about 1e-7 of it)
        m_scale = np.abs(reference.mass_matrix(q)).max()
        np.testing.assert_allclose(mass, reference.mass_matrix(q), rtol=0, atol=1e-6 * m_scale)
        tau = reference.inverse_dynamics(q, qd, qdd)
        np.testing.assert_allclose(
            model.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-6 * (1.0 + np.abs(tau).max())
        )
    return model


@pytest.mark.parametrize("name", builtin_robots())
def test_every_built_in_robot_gets_bullets_model_and_it_equals_numpys(name):
    assert_same_dynamics(load_robot(name))


@pytest.mark.parametrize("urdf", OTHER_PEOPLES)
def test_other_peoples_urdfs_get_the_same_dynamics(urdf):
    pybullet_data = pytest.importorskip("pybullet_data")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # their defaults are not ours to judge here
        description = load_robot(Path(pybullet_data.getDataPath()) / urdf)
    assert_same_dynamics(description, seed=1)


def _tree_breadth_first() -> RobotDescription:
    """Two fingers whose actuators alternate in the file (Bullet numbers them depth first),
    a fixed element between joints, a linear joint, a link without an inertial, a tilted
    base: what Bullet must map back to the description's joint order and masses."""

    def link(mass):
        return {
            "mass": mass,
            "radius": 0.02,
            "center_of_gravity": [0.05, 0.01, 0.0],
            "inertia": [[2e-4, 1e-5, 0.0], [1e-5, 3e-4, 0.0], [0.0, 0.0, 4e-4]],
        }

    actuators = [
        {"name": "a1", "type": "rotary", "axis": [0, 0, 1], "length": 0.1, "link": link(0.5)},
        {
            "name": "b1",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.1,
            "orientation": [0.0, 0.0, 2.0],
            "link": link(0.4),
        },
        {
            "name": "a2",
            "type": "rotary",
            "parent": "a1",
            "axis": [0, 1, 0],
            "length": 0.12,
            "link": link(0.3),
        },
        {"name": "b2", "type": "fixed", "parent": "b1", "length": 0.05, "link": link(0.1)},
        {
            "name": "a3",
            "type": "linear",
            "parent": "a2",
            "axis": [1, 0, 0],
            "length": 0.08,
            "min": -0.02,
            "max": 0.02,
            "home": 0.0,
            "centre": 0.0,
            "link": link(0.2),
        },
        {"name": "b3", "type": "rotary", "parent": "b2", "axis": [1, 0, 0], "length": 0.07},
    ]
    for spec in actuators:
        if spec["type"] == "rotary":
            spec.update({"min": -2.0, "max": 2.0, "home": 0.3, "centre": 0.0})
        if spec["type"] != "fixed":
            spec["limits"] = {"velocity": 2.0, "acceleration": 10.0, "jerk": 100.0, "effort": 20.0}
    return description_from_dict(
        {
            "name": "breadth_first",
            "base": {"position": [0.1, -0.2, 0.3], "orientation": [0.2, -0.1, 0.5]},
            "actuators": actuators,
        }
    )


def test_a_tree_listed_breadth_first_maps_back_to_the_description_order():
    description = _tree_breadth_first()
    assert description.joint_names == ("a1", "b1", "a2", "a3", "b3")
    model = assert_same_dynamics(description, seed=2)
    assert not model._identity  # Bullet did number the joints otherwise (the case tested)
    assert_same_dynamics(description, gravity=(1.0, -2.0, -9.0), seed=3)


def test_a_floating_base_is_held_fixed_as_in_the_numpy_model():
    assert_same_dynamics(puck(), seed=4)


def test_a_tensor_bullet_zeroes_falls_back_to_the_numpy_model():
    # within the schema's 1e-9 tolerance of the triangle inequality, past Bullet's: Bullet
    # would set the link's inertia to zero, so M would lose it
    data = description_to_dict(load_robot("arm6"))
    data["actuators"][2]["link"]["inertia"] = np.diag([1e-3, 1e-3, 2e-3 * (1 + 5e-10)]).tolist()
    description = description_from_dict(data)
    model = rigid_body_model(description, evaluator=bullet_model)
    assert type(model) is DynamicsModel
    q = description.home
    assert np.abs(BulletDynamics(description).mass_matrix(q) - model.mass_matrix(q)).max() > 1e-4


def test_models_made_and_dropped_in_turn_never_answer_for_another_robot():
    # PyBullet reuses a removed body's id and keeps its inverse-dynamics tree: bodies stay
    names = builtin_robots()
    for _ in range(2):
        for name in names:
            description = load_robot(name)
            model = rigid_body_model(description, evaluator=bullet_model)
            q = description.home
            np.testing.assert_allclose(
                model.gravity_torque(q),
                DynamicsModel(description).gravity_torque(q),
                rtol=0,
                atol=1e-9,
            )
            del model
            gc.collect()


def _gravity_in_child(model, q, queue):
    queue.put(model.gravity_torque(q))


def test_a_model_made_before_a_fork_works_in_the_child():
    description = load_robot("arm6")
    model = rigid_body_model(description, evaluator=bullet_model)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_gravity_in_child, args=(model, description.home, queue))
    child.start()
    result = queue.get(timeout=60)
    child.join(timeout=60)
    np.testing.assert_array_equal(result, model.gravity_torque(description.home))


def _near_the_triangle_edge(description):
    """True when a link tensor lies within 1e-4 of I1 + I2 >= I3 (Bullet may zero it)."""
    for spec in description.actuators:
        if spec.link is not None:
            eigen = np.linalg.eigvalsh(np.array(spec.link.inertia))
            if eigen[0] + eigen[1] < eigen[2] * (1 + 1e-4):
                return True
    return False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=robot_dicts(), seed=st.integers(0, 2**16))
def test_any_valid_robot_file_gets_bullets_model_and_it_equals_numpys(data, seed):
    # chains and trees of rotary, linear and fixed elements, couplings, explicit and derived
    # inertials, any base pose: Bullet's model at random configurations, not only the two
    # rigid_body_model checks
    description = description_from_dict(data)
    model = rigid_body_model(description, evaluator=bullet_model)
    if _near_the_triangle_edge(description):
        return  # Bullet may zero such a tensor; the fallback has its own test
    assert isinstance(model, BulletDynamics)
    assert_same_dynamics(description, seed=seed)


def test_models_of_different_gravity_take_turns_on_the_shared_client():
    # one client serves every model: each sets its own gravity before its inverse dynamics
    description = _tree_breadth_first()
    gravities = [(0.0, 0.0, -9.81), (1.0, -2.0, -9.0), (0.0, 0.0, -1.62)]
    models = [rigid_body_model(description, g, bullet_model) for g in gravities]
    references = [DynamicsModel(description, g) for g in gravities]
    q = description.home + 0.1
    qd = np.full(description.dof, 0.3)
    for _ in range(2):
        for model, reference in zip(models, references, strict=True):
            np.testing.assert_allclose(
                model.gravity_torque(q), reference.gravity_torque(q), rtol=0, atol=1e-10
            )
            np.testing.assert_allclose(
                model.inverse_dynamics(q, qd, qd),
                reference.inverse_dynamics(q, qd, qd),
                rtol=0,
                atol=1e-6,
            )
