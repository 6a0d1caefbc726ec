"""LeRobot's joint units: degrees, and 0-100 for a gripper, as its SO-101 and Koch followers.

LeRobot's SO-101 and Koch followers (``use_degrees=True``) report body joints in degrees
and the gripper in ``RANGE_0_100``: 0 at the calibrated range's minimum, 100 at its maximum.
JointLab speaks the same units wherever LeRobot reads or writes joint values (the robot
plugin, datasets, the environment of ``lerobot-eval``), so one policy runs on all three.

A joint is a gripper when its name is ``gripper`` (LeRobot's name on both arms); its range
is the description's ``[min, max]``. Every other joint is in degrees (rotary joints; linear
joints would be in millimetres, which no LeRobot arm has).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.robots import RobotDescription

__all__ = ["GRIPPER", "LeRobotUnits"]

#: The joint name LeRobot's followers give their gripper.
GRIPPER = "gripper"


@dataclass(frozen=True, eq=False)
class LeRobotUnits:
    """Conversion of one robot's joint values: ``lerobot = (q - offset) * scale``.

    Attributes:
        keys: LeRobot's feature names, ``<joint>.pos``.
        units: Per joint, ``"deg"`` or ``"0-100"``.
        scale: Per joint, LeRobot units per radian.
        offset: Per joint, the JointLab value of LeRobot's 0, rad.
    """

    keys: tuple[str, ...]
    units: tuple[str, ...]
    scale: np.ndarray
    offset: np.ndarray

    @classmethod
    def of(cls, description: RobotDescription) -> LeRobotUnits:
        """The units of ``description``'s joints."""
        scale = np.full(description.dof, 180.0 / np.pi)
        offset = np.zeros(description.dof)
        units = ["deg"] * description.dof
        for index, name in enumerate(description.joint_names):
            if name == GRIPPER:
                low, high = float(description.lower[index]), float(description.upper[index])
                scale[index], offset[index], units[index] = 100.0 / (high - low), low, "0-100"
        keys = tuple(f"{name}.pos" for name in description.joint_names)
        return cls(keys, tuple(units), scale, offset)

    def to_lerobot(self, q: np.ndarray) -> np.ndarray:
        """Joint positions ``(..., dof)`` rad to LeRobot units."""
        return (np.asarray(q, dtype=np.float64) - self.offset) * self.scale

    def from_lerobot(self, values: np.ndarray) -> np.ndarray:
        """LeRobot units ``(..., dof)`` to joint positions, rad."""
        return np.asarray(values, dtype=np.float64) / self.scale + self.offset

    def rate_to_lerobot(self, qd: np.ndarray) -> np.ndarray:
        """Joint velocities ``(..., dof)`` rad/s to LeRobot units per second."""
        return np.asarray(qd, dtype=np.float64) * self.scale

    def rate_from_lerobot(self, values: np.ndarray) -> np.ndarray:
        """LeRobot units per second ``(..., dof)`` to rad/s."""
        return np.asarray(values, dtype=np.float64) / self.scale
