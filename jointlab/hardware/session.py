"""Handshake helpers and refusals of the serial backend.

* :func:`resolve_description` checks an ACK HELLO against the description the user gave
  (dof, digest) or finds one (a built-in robot with the device's digest, else one built
  from the device's GET_GEOM reply by :func:`description_from_geometry`);
* :func:`refused` turns a NACK into :class:`~jointlab.errors.CommandRefused` with the
  device's reason; :class:`ConfigurationRefused` is the refusal of a setting.
"""

from __future__ import annotations

from collections.abc import Callable

from jointlab.errors import CommandRefused, ConfigurationError, LinkError
from jointlab.hardware.protocol import HelloReply, Nack, NackReason
from jointlab.robots import ArrayGeometry, RobotDescription, load_robot
from jointlab.robots.yaml_io import builtin_robots

__all__ = [
    "SETTING_REASONS",
    "ConfigurationRefused",
    "description_from_geometry",
    "refused",
    "resolve_description",
]

#: NACK reasons of REQ SPEED/ACCEL that mean "bad setting" (raised as ConfigurationRefused).
SETTING_REASONS = {NackReason.OUT_OF_RANGE, NackReason.UNKNOWN_JOINT, NackReason.INVALID_VALUE}


class ConfigurationRefused(CommandRefused, ConfigurationError):
    """The device refused a setting (speed, acceleration) as invalid.

    Both a :class:`CommandRefused` (``reason`` is the device's) and a
    :class:`ConfigurationError`, which is what ``SimRobot`` raises for the same mistake.
    """


def refused(nack: Nack, cls: type[CommandRefused] = CommandRefused) -> CommandRefused:
    """The :class:`CommandRefused` (or ``cls``) for a NACK: its reason and its sentence."""
    return cls(nack.describe(), reason=nack.reason.slug)


def description_from_geometry(geometry: ArrayGeometry, name: str = "device") -> RobotDescription:
    """A chain description built from a GET_GEOM reply (geometry only, default limits).

    Used when a device runs a robot whose description the host does not have; joints are
    named ``joint0`` ... and form one chain.
    """
    actuators = [
        {
            "name": f"joint{i}",
            "type": "linear" if g.type == 1 else "rotary",
            "axis": list(g.axis),
            "length": max(g.length, 0.0),
            "orientation": list(g.orientation),
            "min": g.min,
            "max": max(g.max, g.min),
            "centre": min(max(g.centre, g.min), g.max),
            "home": min(max(g.home, g.min), g.max),
            "config_speed": g.config_speed,
            "has_brakes": g.has_brakes,
        }
        for i, g in enumerate(geometry.actuators)
    ]
    base = {"position": list(geometry.base_pos), "orientation": list(geometry.base_orientation)}
    return RobotDescription.from_dict({"name": name, "base": base, "actuators": actuators})


def resolve_description(
    port: str,
    hello: HelloReply,
    given: RobotDescription | None,
    fetch_geometry: Callable[[], ArrayGeometry],
    *,
    allow_digest_mismatch: bool = False,
) -> RobotDescription:
    """The description of the robot behind ``port``, checked against its ACK HELLO.

    Raises:
        LinkError: ``given`` has another dof, or another digest (unless allowed).
    """
    if given is None:
        for name in builtin_robots():
            candidate = load_robot(name)
            if candidate.digest == hello.digest_hex:
                return candidate
        return description_from_geometry(fetch_geometry())
    if hello.dof != given.dof:
        raise LinkError(
            f"device on {port!r} drives {hello.dof} joints, description "
            f"{given.name!r} has {given.dof}"
        )
    if hello.digest_hex != given.digest and not allow_digest_mismatch:
        raise LinkError(
            f"device on {port!r} runs a different robot description (digest "
            f"{hello.digest_hex[:12]}…) than {given.name!r} (digest {given.digest[:12]}…); "
            "pass allow_digest_mismatch=True to connect anyway"
        )
    return given
