"""The :class:`Vendor` record: everything JointLab knows of one servo bus protocol, in one place.

A protocol (``dynamixel``: ROBOTIS Protocol 2.0; ``feetech``: Feetech SCS/STS) is its servo
models and their control tables, the Baud Rate register's line rates, the names of its
hardware-error bits, the vendor SDK's quirks the host driver needs (:class:`VendorSdk`) and
the instruction handler its emulated servos answer with. Each protocol's record is built next
to its tables (:data:`jointlab.hardware.dynamixel.vendor.DYNAMIXEL`,
:data:`jointlab.hardware.feetech.vendor.FEETECH`); :mod:`jointlab.hardware.vendors` finds
one by name. The host side (:mod:`jointlab.hardware.servo_host`) and the emulated side
(:mod:`jointlab.hardware.servo_emulator`) read the record and never switch on the name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from jointlab.errors import DescriptionError
from jointlab.hardware.servo.control_table import Register, ServoModel

__all__ = ["Vendor", "VendorSdk"]


class VendorSdk(Protocol):
    """What differs between the vendors' SDKs, for the host's one driver.

    The driver (:class:`~jointlab.hardware.servo_host.driver.ServoDriver`) opens the port with
    the SDK's ``PortHandler`` and does the rest through these.
    """

    #: Importable name of the SDK (``dynamixel_sdk``, ``scservo_sdk``).
    module: str
    #: True when the protocol has Bulk Write (:meth:`bulk_write`).
    has_bulk_write: bool

    def packet_handler(self, sdk: Any) -> Any:
        """The SDK's packet handler for this protocol."""

    def hardware_bits(self, error: int) -> int:
        """Hardware-error bits of a status packet's error byte (0: none)."""

    def sync_read_tx(
        self, packets: Any, port: Any, address: int, length: int, ids: list[int]
    ) -> int:
        """Send a Sync Read instruction; return the SDK's result code."""

    def bulk_write(
        self, sdk: Any, packets: Any, port: Any, entries: Sequence[tuple[int, Register, int]]
    ) -> None:
        """Write different registers of several servos in one packet (no status)."""

    def broadcast_ping(
        self, sdk: Any, packets: Any, port: Any, window: float
    ) -> dict[int, int | None]:
        """Servo id -> model number (None: not in the answer) of every servo that answers."""

    def reboot(self, packets: Any, port: Any, servo_id: int) -> None:
        """Reboot one servo."""


@dataclass(frozen=True)
class Vendor:
    """One servo bus protocol (see the module docstring).

    Attributes:
        name: The protocol's name in robot files and URLs (``"dynamixel"``, ``"feetech"``).
        models: Lower-case model name -> model.
        baud_rates: Baud Rate register value -> line rate, bit/s.
        error_bits: Bit -> name of the hardware-error bits (Dynamixel: Hardware Error Status;
            Feetech: the status packet's error byte, mirrored in its Status register).
        factory_baud: The line rate a new servo ships with, bit/s.
        sdk: The SDK's quirks, for the host driver.
        sdk_package: The package that installs the SDK (a runtime dependency of jointlab).
        device: The emulated servos' instruction handler: ``device(servos)`` with ``servos``
            a :class:`~jointlab.hardware.servo_emulator.firmware.ServoArray`.
    """

    name: str
    models: Mapping[str, ServoModel]
    baud_rates: Mapping[int, int]
    error_bits: Mapping[int, str]
    factory_baud: int
    sdk: VendorSdk
    device: Callable[[Any], Any]
    sdk_package: str

    def model(self, name: str) -> ServoModel:
        """The model called ``name`` (any case).

        Raises:
            DescriptionError: no such model (names the known ones).
        """
        try:
            return self.models[name.lower()]
        except KeyError:
            raise DescriptionError(
                f"unknown {self.name} servo model {name!r}; JointLab knows {sorted(self.models)}"
            ) from None

    def model_named(self, number: int) -> str:
        """The name of the model whose Model Number is ``number`` (or the number, spelled)."""
        found = [m.name for m in self.models.values() if m.model_number == number]
        return found[0] if found else f"model number {number}"

    def baud_code(self, baud: int) -> int:
        """The Baud Rate register value of line rate ``baud``, bit/s.

        Raises:
            DescriptionError: the servos have no such rate (names the ones they have).
        """
        codes = {rate: code for code, rate in self.baud_rates.items()}
        if int(baud) not in codes:
            raise DescriptionError(
                f"{self.name} servos cannot run at {baud} bit/s; they run at {sorted(codes)}"
            )
        return codes[int(baud)]

    def error_names(self, bits: int) -> tuple[str, ...]:
        """Names of the hardware-error ``bits`` set."""
        return tuple(self.error_bits.get(b, f"bit {b}") for b in range(8) if bits >> b & 1)
