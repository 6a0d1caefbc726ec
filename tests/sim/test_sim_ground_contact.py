"""A fixed base stands on the ground without touching it; the rest of the robot still does."""

from __future__ import annotations

import numpy as np
import pybullet
import pytest
from floating_robot import puck

from jointlab.hardware import SSLRobotLink
from jointlab.robots import load_robot
from jointlab.sim import SimRobot
from jointlab.sim.scene import mounted_elements


def ground_contacts(robot: SimRobot) -> set[str]:
    """Names of the robot's links ("base" or an element) touching the ground plane now."""
    world = robot.world
    if world.engine == "pybullet":
        points = pybullet.getContactPoints(
            bodyA=world.ground_id, bodyB=robot.body_id, physicsClientId=world.client_id
        )
        names = {index: name for name, index in robot._body.links.items()}
        return {names[point[4]] for point in points}
    model, data = world.model, world.data
    links = {ref.body: name for name, ref in robot._body.links.items() if ref.site is None}
    touching = set()
    for contact in data.contact[: data.ncon]:
        bodies = {int(model.geom_bodyid[contact.geom1]), int(model.geom_bodyid[contact.geom2])}
        if 0 in bodies:  # the world body holds the ground plane
            touching |= {links[b] for b in bodies if b in links}
    return touching


def test_mounted_elements_are_fixed_to_the_base_or_turn_about_its_origin():
    assert mounted_elements(load_robot("arm6")) == ["shoulder_pan"]
    # the fingers' first joints sit at the end of their mounts, well above the floor
    assert mounted_elements(load_robot("trifinger")) == [f"finger{i}_mount" for i in range(3)]
    assert mounted_elements(load_robot("ssl_robot")) == ["base_x"]  # slides along the mount
    assert mounted_elements(puck()) == []  # a floating base rests on the floor


@pytest.mark.parametrize("name", ["arm6", "gantry3", "trifinger"])
def test_a_fixed_base_robot_at_rest_has_no_ground_contact(engine, name):
    with SimRobot(name, engine=engine) as robot:
        for _ in range(50):
            robot.step()
        assert ground_contacts(robot) == set()


def test_links_beyond_the_mount_still_hit_the_ground(engine):
    with SimRobot("arm6", engine=engine) as robot:
        folded = np.array(robot.description.home)
        folded[1:3] = [1.9, 2.0]  # upper arm past horizontal, forearm folded into the floor
        robot.reset(folded)
        robot.step()
        touching = ground_contacts(robot)
    assert touching and not touching & {"base", "shoulder_pan"}


def test_the_ssl_robot_drives_over_the_field_without_touching_it(engine):
    # Its drive joints stand for the wheels: the chassis clears the ground by 35 mm and the
    # drive links by 5 mm, so ground friction never drags or turns it.
    with SimRobot("ssl_robot", engine=engine) as robot:
        link = SSLRobotLink(robot)
        link.drive(0.5, -0.25, 1.0)
        for _ in range(500):
            link.step()
            assert ground_contacts(robot) == set()
        moved = robot.link_pose("base_w")[:3, 3] - robot.link_pose("base")[:3, 3]
    assert moved[0] > 0.1 and moved[1] < -0.05


def test_a_floating_base_stands_on_the_ground(engine):
    with SimRobot(puck(), engine=engine) as robot:
        for _ in range(50):
            robot.step()
        assert "base" in ground_contacts(robot)
