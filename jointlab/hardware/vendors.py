"""The supported servo models, and a robot file's ``bus`` section checked against them."""

from __future__ import annotations

from jointlab.errors import DescriptionError
from jointlab.hardware.servo.control_table import ServoModel
from jointlab.robots.bus import BusSpec
from jointlab.robots.description import RobotDescription

__all__ = ["baud_code", "baud_rates", "bus_models", "known_models", "servo_model"]


def known_models(protocol: str) -> dict[str, ServoModel]:
    """Model name -> model of the bus ``protocol`` (``"dynamixel"`` or ``"feetech"``)."""
    if protocol == "dynamixel":
        from jointlab.hardware.dynamixel.tables import MODELS
    else:
        from jointlab.hardware.feetech.tables import MODELS
    return MODELS


def baud_rates(protocol: str) -> dict[int, int]:
    """Baud Rate register value -> line rate (bit/s) of the bus ``protocol``'s servos."""
    if protocol == "dynamixel":
        from jointlab.hardware.dynamixel.tables import BAUD_RATES
    else:
        from jointlab.hardware.feetech.tables import BAUD_RATES
    return BAUD_RATES


def baud_code(protocol: str, baud: int) -> int:
    """The Baud Rate register value of line rate ``baud`` on a ``protocol`` servo.

    Raises:
        DescriptionError: the servos have no such rate (names the ones they have).
    """
    codes = {rate: code for code, rate in baud_rates(protocol).items()}
    if int(baud) not in codes:
        raise DescriptionError(
            f"{protocol} servos cannot run at {baud} bit/s; they run at {sorted(codes)}"
        )
    return codes[int(baud)]


def servo_model(protocol: str, name: str) -> ServoModel:
    """The model called ``name`` on a ``protocol`` bus.

    Raises:
        DescriptionError: no such model (names the known ones).
    """
    models = known_models(protocol)
    try:
        return models[name.lower()]
    except KeyError:
        raise DescriptionError(
            f"unknown {protocol} servo model {name!r}; JointLab knows {sorted(models)}"
        ) from None


def bus_models(description: RobotDescription) -> tuple[BusSpec, list[ServoModel]]:
    """The ``bus`` section of ``description`` and each joint's servo model, checked.

    Raises:
        DescriptionError: the robot has no ``bus`` section, a model is unknown, or a servo's
            mode is one its model does not have (names the file, the joint and the servo id).
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
            model = servo_model(bus.protocol.value, servo.model)
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
        models.append(model)
    return bus, models
