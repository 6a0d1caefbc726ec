"""LeRobot's calibration JSON, both ways, so an existing calibration keeps working.

LeRobot (0.4) keeps one file per robot instance, ``<calibration dir>/<robot type>/<id>.json``
(default ``~/.cache/huggingface/lerobot/calibration/robots/so101_follower/<id>.json``), which
maps each motor name to its ``MotorCalibration``::

    {"shoulder_pan": {"id": 1, "drive_mode": 0, "homing_offset": -120,
                      "range_min": 736, "range_max": 3358}, ...}

``homing_offset`` is the servo's Homing Offset register, ``drive_mode`` its Drive Mode
register (Feetech: always 0), and ``range_min``/``range_max`` are Present Position readings
under them, which LeRobot also writes to the Min/Max Position Limit registers. JointLab's
motor names are its joint names (the same as LeRobot's SO-101 and Koch followers).

* :func:`to_lerobot` / :func:`export_lerobot`: a JointLab calibration that recorded its
  Homing Offsets (the range-of-motion method, an import) as that mapping.
* :func:`from_lerobot` / :func:`import_lerobot`: a LeRobot file checked against the robot
  file (the same motor names, the bus section's ids, a valid range); the joint zero is the
  middle of LeRobot's range placed at the middle of the robot file's range, as the
  range-of-motion method does, and the direction is the robot file's transmission sign
  (reversed by Drive Mode bit 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import DescriptionError
from jointlab.hardware.servo_host.calibration import Calibration, JointCalibration
from jointlab.robots.description import RobotDescription

__all__ = ["FIELDS", "export_lerobot", "from_lerobot", "import_lerobot", "to_lerobot"]

#: The fields of LeRobot's ``MotorCalibration``, in its order.
FIELDS = ("id", "drive_mode", "homing_offset", "range_min", "range_max")


def to_lerobot(calibration: Calibration, source: str = "<calibration>") -> dict[str, Any]:
    """The LeRobot mapping of ``calibration`` (motor name -> MotorCalibration fields).

    Raises:
        DescriptionError: a joint has no recorded Homing Offset (a ``manual`` or
            ``automatic`` calibration; names the joint and the way out).
    """
    out: dict[str, Any] = {}
    for joint in calibration.joints:
        if joint.homing_offset is None:
            raise DescriptionError(
                f"{source}: joint {joint.joint!r} has no 'homing_offset' (a {calibration.method} "
                "calibration does not record the servos' Homing Offset registers); pass the "
                "bus URL so they are read from the servos, or calibrate with the "
                "range-of-motion method"
            )
        out[joint.joint] = {
            "id": joint.id,
            "drive_mode": joint.drive_mode,
            "homing_offset": int(joint.homing_offset),
            "range_min": int(joint.min_ticks),
            "range_max": int(joint.max_ticks),
        }
    return out


def export_lerobot(calibration: Calibration, path: str | Path) -> Path:
    """Write ``calibration`` as LeRobot's JSON (folders are created); return the path."""
    data = to_lerobot(calibration)
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=4) + "\n", encoding="utf-8")
    return target


def _field(source: str, motor: str, entry: dict[str, Any], key: str) -> int:
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise DescriptionError(
            f"{source}: motor {motor!r}: field {key!r} must be an integer, got {value!r}"
        )
    return value


def from_lerobot(
    data: Any, description: RobotDescription, source: str = "<lerobot calibration>"
) -> Calibration:
    """Validate LeRobot's mapping against ``description`` and convert it.

    Raises:
        DescriptionError: not a mapping, another set of motor names, a missing or extra
            field, a non-integer value, an id other than the robot file's bus section, a
            drive mode other than 0/1 or ``range_min >= range_max`` (each names the motor and
            the field, and what was expected).
    """
    bus = description.bus
    if bus is None:
        raise DescriptionError(f"robot {description.name!r} has no 'bus' section")
    if not isinstance(data, dict):
        raise DescriptionError(f"{source}: a LeRobot calibration must map motor names to entries")
    names = description.joint_names
    missing = [n for n in names if n not in data]
    extra = [str(n) for n in data if n not in names]
    if missing or extra:
        raise DescriptionError(
            f"{source}: motor names do not match robot {description.name!r} (joints "
            f"{list(names)}): missing {missing}, unknown {extra}"
        )
    joints = []
    scale = np.abs(description.transmissions.scale)
    sign = np.sign(description.transmissions.scale)
    for i, (name, servo) in enumerate(zip(names, bus.servos, strict=True)):
        entry = data[name]
        if not isinstance(entry, dict) or set(entry) != set(FIELDS):
            have = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            raise DescriptionError(
                f"{source}: motor {name!r} needs exactly the fields {list(FIELDS)}, has {have}"
            )
        values = {key: _field(source, name, entry, key) for key in FIELDS}
        if values["id"] != servo.id:
            raise DescriptionError(
                f"{source}: motor {name!r}: field 'id' is {values['id']}, the robot file's bus "
                f"section has servo id {servo.id} for it; use the calibration of this arm"
            )
        if values["drive_mode"] not in (0, 1):
            raise DescriptionError(
                f"{source}: motor {name!r}: field 'drive_mode' must be 0 or 1, "
                f"got {values['drive_mode']}"
            )
        if not values["range_min"] < values["range_max"]:
            raise DescriptionError(
                f"{source}: motor {name!r}: fields 'range_min' ({values['range_min']}) and "
                f"'range_max' ({values['range_max']}): range_min must be below range_max"
            )
        direction = int(sign[i]) * (-1 if values["drive_mode"] & 1 else 1)
        middle = (description.lower[i] + description.upper[i]) / 2.0
        offset = (values["range_min"] + values["range_max"]) / 2.0 - direction * scale[i] * middle
        joints.append(
            JointCalibration(
                joint=name,
                id=servo.id,
                offset=float(offset),
                direction=direction,
                min_ticks=values["range_min"],
                max_ticks=values["range_max"],
                homing_offset=values["homing_offset"],
                drive_mode=values["drive_mode"],
            )
        )
    return Calibration(
        robot=description.name,
        protocol=bus.protocol.value,
        method="lerobot",
        joints=tuple(joints),
        created=Calibration.now(),
    )


def import_lerobot(path: str | Path, description: RobotDescription) -> Calibration:
    """Read LeRobot's calibration JSON at ``path`` for ``description`` (see :func:`from_lerobot`).

    Raises:
        DescriptionError: unreadable file or invalid content (names the file).
    """
    source = Path(path).expanduser()
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DescriptionError(f"{source}: cannot read LeRobot calibration: {exc}") from exc
    return from_lerobot(data, description, str(source))
