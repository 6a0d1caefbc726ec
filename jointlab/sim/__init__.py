"""Simulation backend: worlds, simulated robots, actuator and sensor models (PyBullet, MuJoCo).

::

    from jointlab.sim import SimRobot
    with SimRobot("arm6", control_dt=0.01) as robot:
        robot.apply(NJointAction.Position(robot.description.home))
        robot.step()
        state = robot.read()
"""

from jointlab.sim.actuators import ActuatorArray, DelayLine, coulomb_friction
from jointlab.sim.engine import World
from jointlab.sim.quiet import quiet_output
from jointlab.sim.randomization import (
    EpisodeParameters,
    ObjectDynamics,
    ObjectRandomization,
    Randomization,
)
from jointlab.sim.robot import SimRobot
from jointlab.sim.scene import Camera
from jointlab.sim.sensors import SensorModel

__all__ = [
    "ActuatorArray",
    "Camera",
    "DelayLine",
    "EpisodeParameters",
    "ObjectDynamics",
    "ObjectRandomization",
    "Randomization",
    "SensorModel",
    "SimRobot",
    "World",
    "coulomb_friction",
    "quiet_output",
]
