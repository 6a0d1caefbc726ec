"""Feetech SCS/STS as one :class:`~jointlab.hardware.servo.vendor.Vendor`."""

from __future__ import annotations

from jointlab.hardware.feetech.device import FeetechDevice
from jointlab.hardware.feetech.driver import FeetechSdk
from jointlab.hardware.feetech.tables import BAUD_RATES, ERROR_BITS, MODELS
from jointlab.hardware.servo.vendor import Vendor

__all__ = ["FEETECH"]

FEETECH = Vendor(
    name="feetech",
    models=MODELS,
    baud_rates=BAUD_RATES,
    error_bits=ERROR_BITS,
    factory_baud=1_000_000,  # Feetech memory table, Baud Rate (6): initial value 0
    sdk=FeetechSdk(),
    device=FeetechDevice,
    sdk_package="feetech-servo-sdk",
)
