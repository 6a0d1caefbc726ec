"""One contact model on both engines: declared friction, the product rule, the stick/slip angle.

Every body declares one sliding friction coefficient (robot files: ``link.friction`` and
``base.friction``; scenes: ``add_box(..., friction=)``, ``set_object_dynamics``), 1 by
default as the ground's; two bodies slide against each other with the product. PyBullet
multiplies natively; the MuJoCo adapter gives a non-unit geom contact priority.
"""

from __future__ import annotations

import math

import numpy as np
import pybullet
import pytest

from jointlab.errors import DescriptionError
from jointlab.robots import description_from_dict, dump_yaml, parse_yaml
from jointlab.sim import World
from jointlab.sim.robot import SimRobot
from jointlab.sim.scene import combined_friction

ENGINES = ("pybullet", "mujoco")


def slide(
    engine: str,
    angle: float,
    box_friction: float,
    slope_friction: float = 1.0,
    seconds: float = 1.0,
) -> float:
    """Metres a 0.5 kg box slides in ``seconds`` from rest on a static slope of ``angle`` rad."""
    world = World(dt=0.001, engine=engine)
    try:
        world.add_box((1.0, 0.5, 0.05), (0.0, 0.0, 0.5), (0.0, angle, 0.0), friction=slope_friction)
        normal = np.array([math.sin(angle), 0.0, math.cos(angle)])
        centre = np.array([0.0, 0.0, 0.5]) + normal * (0.05 + 0.02 + 1e-4)
        box = world.add_box(
            (0.05, 0.05, 0.02), tuple(centre), (0.0, angle, 0.0), mass=0.5, friction=box_friction
        )
        start = np.array(world.body_pose(box)[0])
        for _ in range(round(seconds / 0.001)):
            world.step()
        return float(np.linalg.norm(np.array(world.body_pose(box)[0]) - start))
    finally:
        world.close()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("friction", [0.3, 0.5, 1.0])
def test_a_box_sticks_below_and_slips_above_atan_mu_within_5_percent(engine, friction) -> None:
    critical = math.atan(combined_friction(friction, 1.0))
    assert slide(engine, 0.95 * critical, friction) < 0.02  # sticks (creeps < 1 mm: hard
    assert slide(engine, 1.05 * critical, friction) > 0.05  # contacts on both engines)


@pytest.mark.parametrize("engine", ENGINES)
def test_two_bodies_both_off_1_slide_with_the_product(engine) -> None:
    """0.5 on 0.8: 0.4 (MuJoCo alone would take the larger, 0.8, and stick up to 39 deg)."""
    critical = math.atan(combined_friction(0.5, 0.8))
    assert slide(engine, 0.95 * critical, 0.5, 0.8) < 0.01
    assert slide(engine, 1.05 * critical, 0.5, 0.8) > 0.05


def test_the_slide_above_the_angle_is_the_same_on_both_engines() -> None:
    distances = [slide(engine, math.radians(30.0), 0.5) for engine in ENGINES]
    assert distances[0] == pytest.approx(distances[1], rel=0.05)


ROBOT = {
    "name": "footed",
    "base": {"position": [0, 0, 0.3], "friction": 0.7},
    "actuators": [
        {
            "name": "leg",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.2,
            "min": -1,
            "max": 1,
            "link": {"friction": 0.4},
        },
        {"name": "foot", "type": "rotary", "axis": [0, 1, 0], "length": 0.1, "min": -1, "max": 1},
    ],
}


def test_robot_files_declare_link_and_base_friction_and_write_them_back() -> None:
    robot = description_from_dict(ROBOT)
    assert robot.base.friction == 0.7
    assert [a.link.friction for a in robot.actuators] == [0.4, 1.0]
    again = parse_yaml(dump_yaml(robot))
    assert again.base.friction == 0.7 and again.actuators[0].link.friction == 0.4
    import yaml

    written = yaml.safe_load(dump_yaml(robot))
    assert "friction" not in written["actuators"][1]["link"]  # the default is not written


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        (("actuators", 0, "link"), -0.2, "link.friction"),
        (("actuators", 0, "link"), "grippy", "link.friction"),
        (("base",), 0.0, "base.friction"),
    ],
)
def test_bad_friction_is_refused_naming_the_field(where, value, expected) -> None:
    import copy

    data = copy.deepcopy(ROBOT)
    target = data
    for key in where:
        target = target[key]
    target["friction"] = value
    with pytest.raises(DescriptionError, match=expected):
        description_from_dict(data, source="footed.yaml")


def test_each_engine_is_given_the_declared_coefficients() -> None:
    robot = description_from_dict(ROBOT)
    with SimRobot(robot, engine="pybullet") as sim:
        body = sim._body
        lateral = [
            pybullet.getDynamicsInfo(body.body_id, link, physicsClientId=body.client_id)[1]
            for link in (-1, body.links["leg"], body.links["foot"])
        ]
        assert lateral == pytest.approx([0.7, 0.4, 1.0])
    with SimRobot(robot, engine="mujoco") as sim:
        model = sim._world.model
        used = {
            (round(float(f), 6), int(p))
            for f, p in zip(model.geom_friction[:, 0], model.geom_priority, strict=True)
        }
        # non-unit coefficients win their contacts (priority 1): the product with the ground's 1
        assert {(0.7, 1), (0.4, 1), (1.0, 0)} <= used
        assert not {(0.7, 0), (0.4, 0)} & used
