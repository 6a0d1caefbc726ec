"""The :class:`Teleoperator` interface (``read() -> action``) and the devices JointLab ships.

A teleoperator is anything a person moves whose reading becomes a follower's joint targets:
a leader arm (a servo arm with its torque off, read at its bus rate), a scripted stand-in for
a person in tests and demos, or a device someone adds (keyboard, gamepad, VR controller) by
subclassing :class:`Teleoperator`.

Every reading is a vector of the teleoperator's own joint positions (rad or m), in the order
of :attr:`Teleoperator.joint_names`, inside ``[lower, upper]``; a
:class:`~jointlab.teleop.mapping.JointMap` turns it into the follower's targets.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence

import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError

__all__ = ["LeaderArm", "ScriptedTeleoperator", "Teleoperator"]


class Teleoperator(abc.ABC):
    """A device whose reading is a vector of joint positions.

    Subclasses set :attr:`joint_names`, :attr:`lower` and :attr:`upper` and implement
    :meth:`read`.
    """

    #: Joint names, in reading order.
    joint_names: tuple[str, ...]
    #: Lowest reading per joint, ``(n,)``, rad or m.
    lower: np.ndarray
    #: Highest reading per joint, ``(n,)``, rad or m.
    upper: np.ndarray
    #: Seconds between two fresh readings (a leader arm's bus period); None: any rate.
    period: float | None = None

    @abc.abstractmethod
    def read(self) -> np.ndarray:
        """The present joint positions, ``(n,)``, rad or m (a new reading per call).

        Raises:
            LinkError: the device stopped answering (a teleoperation loop stops cleanly).
        """

    def close(self) -> None:  # noqa: B027 - optional for devices without resources
        """Release the device; safe twice."""

    def __enter__(self) -> Teleoperator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class LeaderArm(Teleoperator):
    """A robot used as a leader: torque off, its joint positions read once per bus cycle.

    On a servo bus (:class:`~jointlab.hardware.servo_host.robot.ServoBusRobot`) each :meth:`read`
    is one bus cycle that writes nothing (``idle_cycle``: one Sync Read, paced at the bus
    rate); on another backend it is one ``step()`` of the disarmed robot.

    Args:
        robot: The leader (disarmed here if it is armed: a person moves it).
        own: Close the robot with the leader.
    """

    def __init__(self, robot: Robot, *, own: bool = True) -> None:
        self.robot = robot
        self._own = own
        if robot.read().armed:
            robot.disarm()
        d = robot.description
        self.joint_names = tuple(d.joint_names)
        self.lower = np.asarray(d.lower, dtype=np.float64)
        self.upper = np.asarray(d.upper, dtype=np.float64)
        self.period = float(getattr(robot, "bus_dt", robot.control_dt))
        self._idle = getattr(robot, "idle_cycle", None)

    def read(self) -> np.ndarray:
        """One bus cycle's joint positions, ``(n,)``, rad."""
        if self._idle is not None:
            return np.array(self._idle().position, dtype=np.float64)
        self.robot.step()
        return np.array(self.robot.read().position, dtype=np.float64)

    def close(self) -> None:
        """Close the leader robot (when owned); safe twice."""
        if self._own:
            self.robot.close()


class ScriptedTeleoperator(Teleoperator):
    """A teleoperator whose reading is a function of the reading count (a scripted person).

    Args:
        joint_names: Joint names.
        lower: Lowest readings, ``(n,)``.
        upper: Highest readings, ``(n,)``.
        script: ``script(k) -> (n,)`` positions at reading ``k`` (0, 1, ...).
        period: Seconds between readings (for the loop's time keeping).
    """

    def __init__(
        self,
        joint_names: Sequence[str],
        lower: Sequence[float],
        upper: Sequence[float],
        script: Callable[[int], np.ndarray],
        period: float | None = None,
    ) -> None:
        self.joint_names = tuple(joint_names)
        self.lower = np.asarray(lower, dtype=np.float64)
        self.upper = np.asarray(upper, dtype=np.float64)
        if self.lower.shape != (len(self.joint_names),) or self.upper.shape != self.lower.shape:
            raise ConfigurationError(
                f"scripted teleoperator: lower and upper must have {len(self.joint_names)} "
                f"values (one per joint), got {self.lower.shape} and {self.upper.shape}"
            )
        self.period = period
        self._script = script
        self.count = 0

    def read(self) -> np.ndarray:
        """The script's positions at this reading, ``(n,)``."""
        value = np.asarray(self._script(self.count), dtype=np.float64)
        self.count += 1
        return value
