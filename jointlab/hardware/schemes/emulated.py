"""``emulated://NAME_OR_PATH``: the robot's own emulated device, on a pseudo-terminal.

A robot file without a ``bus`` section gets JointLab's device emulator (``device=emulator``,
the default) or the reference firmware in QEMU (``device=firmware``); one with a ``bus``
section gets its emulated servo bus (``bus=servo``, the default; ``bus=jointlab`` asks for
JointLab's own protocol instead). The query keys of each are their factories'
(:func:`jointlab.hardware.host.urls.connect_emulated_device`,
:func:`jointlab.hardware.host.urls.connect_firmware`,
:func:`jointlab.hardware.servo_host.urls.connect_emulated_bus`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError
from jointlab.hardware.host.urls import connect_emulated_device, connect_firmware
from jointlab.hardware.servo_host.urls import connect_emulated_bus
from jointlab.robots import load_robot

if TYPE_CHECKING:
    from jointlab.connection import RobotURL

__all__ = ["connect_emulated"]

#: Values of ``bus=``: JointLab's protocol, or the robot's servo bus (by any of its names).
BUSES = ("jointlab", "servo", "dynamixel", "feetech")


def connect_emulated(url: RobotURL, options: dict[str, Any]) -> Robot:
    """Factory of ``emulated://`` (see the module docstring)."""
    if not url.target:
        raise ConfigurationError(f"{url.url}: no robot given; expected emulated://NAME_OR_PATH")
    description = load_robot(url.target)
    device = url.take("device", str, "emulator")
    if device not in ("emulator", "firmware"):
        raise ConfigurationError(
            f"{url.url}: device={device!r}; expected emulator (the Python device emulator) or "
            "firmware (the reference firmware in qemu-system-arm, docs/firmware.md)"
        )
    if device == "firmware":
        return connect_firmware(url, description, options)
    bus = url.take("bus", str, "jointlab" if description.bus is None else "servo")
    if bus not in BUSES:
        raise ConfigurationError(
            f"{url.url}: bus={bus!r}; expected jointlab, or the robot's servo bus"
        )
    if bus == "jointlab":
        return connect_emulated_device(url, description, options)
    if description.bus is None or bus not in ("servo", description.bus.protocol.value):
        have = (
            "no bus section"
            if description.bus is None
            else f"a {description.bus.protocol.value} bus"
        )
        raise ConfigurationError(f"{url.url}: robot {description.name!r} has {have}")
    return connect_emulated_bus(url, description, options)
