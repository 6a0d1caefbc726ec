"""Calibration files: each servo's measured zero, direction and range, kept beside the robot file.

A servo arm is assembled by hand: where a joint's zero sits on its servo's encoder, which way
the servo turns it and how far it can go are measured (``jointlab calibrate``) and stored::

    robot: so101
    protocol: feetech
    method: range_of_motion    # range_of_motion | automatic | manual | lerobot | emulated
    created: '2026-12-01T10:00:00+00:00'
    joints:
      shoulder_pan: {id: 1, offset: 2047.0, direction: 1, min_ticks: 736, max_ticks: 3358,
                     homing_offset: -120, drive_mode: 0}

``offset`` is the motor position in ticks at joint zero and ``direction`` the sign of the
transmission; they replace the robot file's nominal transmission values. ``min_ticks`` and
``max_ticks`` bound the positions the backend will command (the calibrated range).
``homing_offset`` (optional) is the value of the servo's Homing Offset register the
calibration was made with (the range-of-motion method writes it, as LeRobot does), and
``drive_mode`` that of its Drive Mode register (Dynamixel; 0 otherwise): every tick value
of the file is a Present Position reading under those two registers.

Where it lives (:func:`calibration_path`): ``<robot file>.calibration.yaml`` beside a robot
file (``arms/my_so101.yaml`` -> ``arms/my_so101.calibration.yaml``); for a built-in robot,
``$JOINTLAB_CALIBRATION_DIR/<name>.calibration.yaml`` (default ``~/.config/jointlab``).
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from jointlab.errors import DescriptionError
from jointlab.robots.description import RobotDescription
from jointlab.robots.transmission import TransmissionArray

__all__ = ["Calibration", "JointCalibration", "calibration_path", "load_calibration"]

METHODS = ("range_of_motion", "automatic", "manual", "lerobot", "emulated")
JOINT_KEYS = {"id", "offset", "direction", "min_ticks", "max_ticks"}
#: Keys a joint's entry may add (older files lack them).
OPTIONAL_KEYS = {"homing_offset", "drive_mode"}


@dataclass(frozen=True)
class JointCalibration:
    """One joint's measured transmission and range."""

    joint: str
    id: int
    #: Motor ticks at joint zero.
    offset: float
    #: +1 or -1.
    direction: int
    #: Calibrated range in motor ticks (``min_ticks < max_ticks``).
    min_ticks: int
    max_ticks: int
    #: The servo's Homing Offset register the readings were made under (None: not recorded).
    homing_offset: int | None = None
    #: The servo's Drive Mode register (Dynamixel bit 0 reverses the reading; 0 otherwise).
    drive_mode: int = 0


@dataclass(frozen=True)
class Calibration:
    """A robot's calibration (see the module docstring)."""

    robot: str
    protocol: str
    method: str
    joints: tuple[JointCalibration, ...]
    created: str = ""

    def transmissions(self, description: RobotDescription) -> TransmissionArray:
        """The description's transmissions with the measured offsets and directions."""
        offsets = np.array([j.offset for j in self.joints], dtype=np.float64)
        directions = np.array([j.direction for j in self.joints], dtype=np.float64)
        return description.transmissions.with_offsets(offsets, directions)

    def tick_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Calibrated ranges in ticks, shapes ``(dof,)``."""
        return (
            np.array([j.min_ticks for j in self.joints], dtype=np.float64),
            np.array([j.max_ticks for j in self.joints], dtype=np.float64),
        )

    def check(self, description: RobotDescription) -> None:
        """Raise unless the calibration is for ``description``'s robot, joints and servo ids.

        Raises:
            DescriptionError: another robot, another joint list, or other servo ids.
        """
        bus = description.bus
        ids = bus.ids if bus is not None else ()
        joints = tuple(j.joint for j in self.joints)
        if self.robot != description.name or joints != description.joint_names:
            raise DescriptionError(
                f"calibration of robot {self.robot!r} (joints {list(joints)}) does not fit robot "
                f"{description.name!r} (joints {list(description.joint_names)}); recalibrate"
            )
        if tuple(j.id for j in self.joints) != ids:
            raise DescriptionError(
                f"calibration of {self.robot!r} was made with servo ids "
                f"{[j.id for j in self.joints]}, the robot file has {list(ids)}; recalibrate"
            )

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict[str, Any]:
        """The file's mapping."""
        return {
            "robot": self.robot,
            "protocol": self.protocol,
            "method": self.method,
            "created": self.created,
            "joints": {j.joint: _joint_entry(j) for j in self.joints},
        }

    def save(self, path: str | Path) -> Path:
        """Write the calibration to ``path`` (folders are created); return the path."""
        target = Path(path).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.safe_dump(self.to_dict(), sort_keys=False), encoding="utf-8")
        return target

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        """Read a calibration file.

        Raises:
            DescriptionError: unreadable file, or a missing or invalid field (named).
        """
        source = Path(path).expanduser()
        try:
            data = yaml.safe_load(source.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise DescriptionError(f"{source}: cannot read calibration file: {exc}") from exc
        return cls.from_dict(data, str(source))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<calibration>") -> Calibration:
        """Validate a calibration mapping (``source`` names it in errors)."""
        if not isinstance(data, dict):
            raise DescriptionError(f"{source}: a calibration file must be a mapping")
        for key in ("robot", "protocol", "method", "joints"):
            if key not in data:
                raise DescriptionError(f"{source}: field {key!r} is required")
        if data["method"] not in METHODS:
            raise DescriptionError(f"{source}: field 'method' must be one of {list(METHODS)}")
        joints = []
        raw = data["joints"]
        if not isinstance(raw, dict) or not raw:
            raise DescriptionError(f"{source}: field 'joints' must map joint names to entries")
        for name, entry in raw.items():
            field = f"joints.{name}"
            if not isinstance(entry, dict) or not JOINT_KEYS <= set(entry) <= (
                JOINT_KEYS | OPTIONAL_KEYS
            ):
                raise DescriptionError(
                    f"{source}: field {field!r} needs {sorted(JOINT_KEYS)} "
                    f"(and optionally {sorted(OPTIONAL_KEYS)})"
                )
            if entry["direction"] not in (1, -1) or not entry["min_ticks"] < entry["max_ticks"]:
                raise DescriptionError(
                    f"{source}: field {field!r}: direction must be 1 or -1 and "
                    "min_ticks < max_ticks"
                )
            joints.append(
                JointCalibration(
                    joint=str(name),
                    id=int(entry["id"]),
                    offset=float(entry["offset"]),
                    direction=int(entry["direction"]),
                    min_ticks=int(entry["min_ticks"]),
                    max_ticks=int(entry["max_ticks"]),
                    homing_offset=_optional_int(entry, "homing_offset"),
                    drive_mode=int(entry.get("drive_mode", 0)),
                )
            )
        return cls(
            robot=str(data["robot"]),
            protocol=str(data["protocol"]),
            method=str(data["method"]),
            joints=tuple(joints),
            created=str(data.get("created", "")),
        )

    @staticmethod
    def now() -> str:
        """The current UTC time in ISO 8601, for ``created``."""
        return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _joint_entry(joint: JointCalibration) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": joint.id,
        "offset": float(joint.offset),
        "direction": joint.direction,
        "min_ticks": int(joint.min_ticks),
        "max_ticks": int(joint.max_ticks),
    }
    if joint.homing_offset is not None:
        entry["homing_offset"] = int(joint.homing_offset)
    if joint.drive_mode:
        entry["drive_mode"] = int(joint.drive_mode)
    return entry


def _optional_int(entry: dict[str, Any], key: str) -> int | None:
    value = entry.get(key)
    return None if value is None else int(value)


def calibration_path(description: RobotDescription) -> Path:
    """Where ``description``'s calibration file lives (see the module docstring)."""
    source = description.source or ""
    if source and not source.startswith("<") and Path(source).suffix in (".yaml", ".yml"):
        path = Path(source)
        return path.with_name(f"{path.stem}.calibration.yaml")
    folder = os.environ.get("JOINTLAB_CALIBRATION_DIR") or str(
        Path("~/.config/jointlab").expanduser()
    )
    return Path(folder) / f"{description.name}.calibration.yaml"


def load_calibration(
    given: Calibration | str | Path | bool | None, description: RobotDescription
) -> Calibration | None:
    """The calibration a servo robot uses, checked against ``description``.

    Args:
        given: A :class:`Calibration`, a calibration file, None for the file at
            :func:`calibration_path` (if there is one), or False for none.
        description: The robot.

    Raises:
        DescriptionError: the file cannot be read or does not fit the robot.
    """
    if given is False:
        return None
    if given is None:
        path = calibration_path(description)
        if not path.is_file():
            return None
        given = path
    calibration = given if isinstance(given, Calibration) else Calibration.load(given)  # type: ignore[arg-type]
    calibration.check(description)
    return calibration
