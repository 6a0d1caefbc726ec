"""The servo bus protocols JointLab speaks, one :class:`Vendor` record each, found by name.

:data:`VENDORS` holds :data:`~jointlab.hardware.dynamixel.vendor.DYNAMIXEL` and
:data:`~jointlab.hardware.feetech.vendor.FEETECH`; :func:`vendor` finds one by the name a
robot file's ``bus.protocol`` or a URL scheme gives, and :func:`bus_models` checks a robot
file's ``bus`` section against its vendor's models. The only place that knows every vendor.
"""

from __future__ import annotations

from jointlab.errors import ConfigurationError, DescriptionError
from jointlab.hardware.dynamixel.vendor import DYNAMIXEL
from jointlab.hardware.feetech.vendor import FEETECH
from jointlab.hardware.servo.control_table import ServoModel
from jointlab.hardware.servo.vendor import Vendor
from jointlab.robots.bus import BusSpec
from jointlab.robots.description import RobotDescription

__all__ = ["VENDORS", "Vendor", "bus_models", "vendor"]

#: Protocol name -> its record.
VENDORS: dict[str, Vendor] = {v.name: v for v in (DYNAMIXEL, FEETECH)}


def vendor(protocol: str) -> Vendor:
    """The record of bus ``protocol`` (``"dynamixel"`` or ``"feetech"``).

    Raises:
        ConfigurationError: an unknown protocol (names the known ones).
    """
    try:
        return VENDORS[protocol]
    except KeyError:
        raise ConfigurationError(
            f"unknown servo bus protocol {protocol!r}; expected one of {sorted(VENDORS)}"
        ) from None


def bus_models(description: RobotDescription) -> tuple[BusSpec, list[ServoModel]]:
    """The ``bus`` section of ``description`` and each joint's servo model, checked.

    Raises:
        DescriptionError: the robot has no ``bus`` section, a model is unknown, a servo's
            mode is one its model does not have, or a backlash is not smaller than its
            joint's range (names the file, the joint and the servo id).
    """
    bus = description.bus
    where = description.source or description.name
    if bus is None:
        raise DescriptionError(
            f"{where}: robot {description.name!r} has no 'bus' section; a servo backend needs "
            "one (protocol, baud, servos: {joint: {id, model, mode}}), see docs/robot-files.md"
        )
    models = []
    for servo in bus.servos:
        try:
            model = vendor(bus.protocol.value).model(servo.model)
        except DescriptionError as exc:
            raise DescriptionError(
                f"{where}: bus.servos.{servo.joint} (servo id {servo.id}): {exc}"
            ) from None
        if servo.mode.value not in model.modes:
            raise DescriptionError(
                f"{where}: bus.servos.{servo.joint} (servo id {servo.id}): mode "
                f"{servo.mode.value!r} is not available on the {model.name} (it has "
                f"{sorted(model.modes)}); use mode: position"
            )
        j = description.joint_names.index(servo.joint)
        span = float(description.upper[j] - description.lower[j])
        if servo.backlash >= span:
            raise DescriptionError(
                f"{where}: bus.servos.{servo.joint}.backlash = {servo.backlash} rad is not "
                f"smaller than the joint's range {span:.4g} rad; a gear's dead band is a few "
                "degrees at most (about 0.017 rad on an STS3215)"
            )
        models.append(model)
    return bus, models
