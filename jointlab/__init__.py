"""JointLab: a simulation-first physics testbed for robot actuator arrays.

The public API::

    import jointlab
    description = jointlab.load_robot("arm6")
    with jointlab.connect("sim://arm6") as robot:
        robot.apply(jointlab.NJointAction.Position(description.home))
        robot.step()
        state = robot.read()
"""

from jointlab.contract import Robot
from jointlab.errors import (
    ActionError,
    CommandRefused,
    ConfigurationError,
    ConfigurationRefused,
    DescriptionError,
    JointLabError,
    LinkError,
    PackingError,
    RobotClosed,
    SimulationError,
)
from jointlab.interface import ActuatorState, ActuatorType, ArrayState, NJointAction
from jointlab.robots import RobotDescription, forward_kinematics, load_robot

__version__ = "0.1.0"


def connect(url: str, **options: object) -> Robot:
    """Build a :class:`Robot` from a URL: ``sim://``, ``serial://`` or ``emulated://``.

    See :func:`jointlab.connection.connect` for the URL forms and options.
    """
    from jointlab.connection import connect as _connect

    return _connect(url, **options)


def run(robot: Robot, controller: object, **kwargs: object) -> object:
    """Run ``controller`` on ``robot``: the one control loop (see ``jointlab.controllers.run``)."""
    from jointlab.controllers.loop import run as _run

    return _run(robot, controller, **kwargs)


__all__ = [
    "ActionError",
    "ActuatorState",
    "ActuatorType",
    "ArrayState",
    "CommandRefused",
    "ConfigurationError",
    "ConfigurationRefused",
    "DescriptionError",
    "JointLabError",
    "LinkError",
    "NJointAction",
    "PackingError",
    "Robot",
    "RobotClosed",
    "RobotDescription",
    "SimulationError",
    "__version__",
    "connect",
    "forward_kinematics",
    "load_robot",
    "run",
]
