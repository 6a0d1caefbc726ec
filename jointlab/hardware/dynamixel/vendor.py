"""ROBOTIS Dynamixel (Protocol 2.0) as one :class:`~jointlab.hardware.servo.vendor.Vendor`."""

from __future__ import annotations

from jointlab.hardware.dynamixel.device import DynamixelDevice
from jointlab.hardware.dynamixel.driver import DynamixelSdk
from jointlab.hardware.dynamixel.tables import BAUD_RATES, HARDWARE_ERROR_BITS, MODELS
from jointlab.hardware.servo.vendor import Vendor

__all__ = ["DYNAMIXEL"]

DYNAMIXEL = Vendor(
    name="dynamixel",
    models=MODELS,
    baud_rates=BAUD_RATES,
    error_bits=HARDWARE_ERROR_BITS,
    factory_baud=57_600,  # e-Manual, Baud Rate (8): initial value 1
    sdk=DynamixelSdk(),
    device=DynamixelDevice,
    sdk_package="dynamixel-sdk",
)
