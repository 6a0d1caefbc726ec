"""How PyBullet realises ``dynamics.armature``: joint inertia, and weightless on linear joints."""

from __future__ import annotations

import numpy as np
import pybullet
import pytest
from sim_helpers import one_joint

from jointlab.controllers import DynamicsModel
from jointlab.interface import NJointAction
from jointlab.robots import RobotDescription, description_from_dict, description_to_dict
from jointlab.robots.gains import UnstableGainsWarning
from jointlab.robots.urdf_io import TINY_MASS
from jointlab.sim import SimRobot, World


def mass_matrix(robot: SimRobot) -> np.ndarray:
    q = robot.read().position.tolist()
    return np.array(
        pybullet.calculateMassMatrix(robot.body_id, q, physicsClientId=robot.world.client_id)
    )


def test_rotary_armature_adds_exactly_its_value_to_the_joint_inertia():
    rigid = SimRobot(one_joint("rigid"), world=World(gravity=(0, 0, 0), ground=False))
    geared = SimRobot(
        one_joint("geared", dynamics={"armature": 0.05}),
        world=World(gravity=(0, 0, 0), ground=False),
    )
    assert mass_matrix(geared)[0, 0] == pytest.approx(mass_matrix(rigid)[0, 0] + 0.05, rel=1e-9)
    # and it is felt: a torque accelerates the geared joint more slowly, by that inertia
    for robot in (rigid, geared):
        robot.apply(NJointAction.Torque([1.0]))
        robot.step()
    inertia = mass_matrix(rigid)[0, 0]
    assert rigid.read().velocity[0] == pytest.approx(1.0 / inertia * 1e-3, rel=1e-6)
    assert geared.read().velocity[0] == pytest.approx(1.0 / (inertia + 0.05) * 1e-3, rel=1e-6)
    for robot in (rigid, geared):
        robot.world.close()


def vertical_slide(armature: float) -> RobotDescription:
    return description_from_dict(
        {
            "name": "lift",
            "base": {"position": [0, 0, 1.0]},
            "actuators": [
                {
                    "name": "z",
                    "type": "linear",
                    "axis": [0, 0, 1],
                    "min": -0.5,
                    "max": 0.5,
                    "limits": {"effort": 500.0},
                    "link": {"mass": 2.0, "radius": 0.05},
                    "dynamics": {"armature": armature},
                }
            ],
        }
    )


def test_linear_armature_is_inertia_without_weight():
    with World(ground=False) as world:
        robot = SimRobot(vertical_slide(3.0), world=world)
        hold = DynamicsModel(robot.description).gravity_torque(robot.read().position)
        assert hold[0] == pytest.approx(2.0 * 9.81)  # the link only: armature has no weight
        assert mass_matrix(robot)[0, 0] == pytest.approx(2.0 + 3.0 + TINY_MASS)
        robot.apply(NJointAction.Torque(hold + TINY_MASS * 9.81))  # + the URDF's tool link
        for _ in range(500):
            robot.step()
        assert abs(robot.read().position[0]) < 1e-9  # the weight compensation is exact
        robot.apply(NJointAction.Torque(hold + 10.0))
        robot.step()
        # 10 N more accelerate link and armature together: 2 m/s² (one step: v = a·dt)
        assert robot.read().velocity[0] == pytest.approx(10.0 / 5.0 * 1e-3, rel=1e-3)


def test_weightless_armature_follows_mass_randomisation():
    from jointlab.sim import Randomization

    with World(ground=False) as world:
        robot = SimRobot(
            vertical_slide(3.0), world=world, randomization=Randomization(mass_scale=(2.0, 2.0))
        )
        robot.reset(randomize=True)
        # the doubled link (and the unscaled tool link), not the doubled armature
        robot.apply(NJointAction.Torque([(2 * 2.0 + TINY_MASS) * 9.81]))
        for _ in range(200):
            robot.step()
        assert abs(robot.read().position[0]) < 1e-9


def test_linear_armature_under_a_turning_joint_is_weightless_too():
    # the slide hangs from a horizontal hinge, so its weight's lever arm changes with q:
    # cancelled by a force on the link every physics step
    description = description_from_dict(
        {
            "name": "boom",
            "actuators": [
                {
                    "name": "hinge",
                    "type": "rotary",
                    "axis": [0, 1, 0],
                    "length": 0.4,
                    "min": -2.0,
                    "max": 2.0,
                    "link": {"mass": 1.0},
                    "dynamics": {"armature": 0.0},
                },
                {
                    "name": "slide",
                    "type": "linear",
                    "axis": [1, 0, 0],
                    "length": 0.1,
                    "min": -0.2,
                    "max": 0.2,
                    "link": {"mass": 0.5},
                    "dynamics": {"armature": 4.0},
                },
            ],
        }
    )
    model = DynamicsModel(description)
    with World(ground=False) as world:
        robot = SimRobot(description, world=world)
        assert robot._body.weightless and not robot._body.weightless_torque
        q = np.array([0.5, 0.1])
        robot.reset(q)
        for _ in range(300):  # hold by gravity compensation of the rigid bodies alone
            state = robot.read()
            robot.apply(NJointAction.TorqueAndPosition(model.gravity_torque(state.position), q))
            robot.step()
        np.testing.assert_allclose(robot.read().position, q, atol=2e-4)


def test_horizontal_linear_armature_needs_no_cancelling():
    with SimRobot("gantry3") as robot:
        body = robot._body
        # x and y are horizontal (no load), z is vertical: one constant term, no forces
        assert body.weightless == [] and len(body.weightless_torque) == 3
        lift = robot._loop.lift_torque
        np.testing.assert_allclose(lift, [0.0, 0.0, 0.5 * 9.81], atol=1e-12)


def _edge_of_the_triangle_inequality(armature: bool) -> RobotDescription:
    """arm6 with the elbow's tensor within the description check's 1e-9 of I1 + I2 >= I3."""
    from jointlab.robots import load_robot

    data = description_to_dict(load_robot("arm6"))
    data["actuators"][2]["link"]["inertia"] = np.diag([1e-3, 1e-3, 2e-3 * (1 + 5e-10)]).tolist()
    if not armature:
        for entry in data["actuators"]:
            entry.setdefault("dynamics", {})["armature"] = 0.0
    return description_from_dict(data)


def test_a_tensor_at_the_edge_of_the_triangle_inequality_keeps_its_inertia():
    # past PyBullet's own test: it would set the link's inertia to zero; the simulator moves
    # the tensor 1e-4 inside instead (here on the path without armature)
    description = _edge_of_the_triangle_inequality(armature=False)
    with pytest.warns(UnstableGainsWarning):  # arm6's wrist gains assume its armature
        robot = SimRobot(description, gain_check="warn")
    with robot:
        robot.reset(description.home)
        simulated = mass_matrix(robot)
    expected = DynamicsModel(description).mass_matrix(description.home)
    # zeroed, the elbow's tensor would be missing by about 2e-3 kg·m²; the margin adds 2e-7,
    # the URDF's 1e-4 kg tool mass about 4e-5
    np.testing.assert_allclose(simulated, expected, rtol=0, atol=3e-4)


def test_a_tensor_at_the_edge_of_the_triangle_inequality_compiles_on_mujoco():
    # MuJoCo refused it ("inertia must satisfy A + B >= C"); it gets the same margin
    description = _edge_of_the_triangle_inequality(armature=True)
    with SimRobot(description, engine="mujoco", gain_check="warn") as robot:
        robot.step()
        assert np.isfinite(robot.read().position).all()
