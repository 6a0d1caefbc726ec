"""The vendors' SDKs behind one small interface, with bus-error counting and a retry budget.

:class:`ServoDriver` opens the port with the vendor's ``PortHandler`` and talks through its
``PacketHandler``: ping, read and write with status (``readTxRx``/``writeTxRx``), sync write
(``GroupSyncWrite``), bulk write (Dynamixel ``GroupBulkWrite``), sync read (``syncReadTx`` then
one ``readRx`` per servo, which keeps each servo's error byte), reboot. The protocol's
:class:`~jointlab.hardware.servo.vendor.Vendor` record says which SDK, which packet handler and
which error bits (its :class:`~jointlab.hardware.servo.vendor.VendorSdk`).

Every exchange that fails (no status packet, a corrupt one) is counted in :class:`BusStats`
and retried up to ``retries`` times after the line has gone quiet; when the budget is spent a
:class:`~jointlab.errors.LinkError` names the servo id, its joint, what went wrong and the
usual fix. A status packet's hardware-error bits are counted per servo and kept for the state.
"""

from __future__ import annotations

import importlib
import select
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jointlab.errors import LinkError, MissingDependencyError
from jointlab.extras import installed
from jointlab.hardware.servo.control_table import Register
from jointlab.hardware.servo.vendor import Vendor
from jointlab.hardware.vendors import VENDORS
from jointlab.hardware.vendors import vendor as vendor_named

try:  # POSIX serial ports raise termios.error (not an OSError) when the device is gone
    import termios

    _PORT_ERRORS: tuple[type[BaseException], ...] = (termios.error,)
except ImportError:  # pragma: no cover - Windows
    _PORT_ERRORS = ()

__all__ = ["LATENCY_FIX", "BusStats", "ServoDriver", "UnsupportedBaud", "check_sdk", "make_driver"]

#: The usual fix for a USB-serial adapter's buffering, quoted in every bus error.
LATENCY_FIX = (
    "on a USB-serial adapter lower the latency timer from its 16 ms default: "
    "echo 1 | sudo tee /sys/bus/usb-serial/devices/ttyUSB0/latency_timer (use your device's "
    "name); also check the servo's power, cable and id, and the baud rate"
)


#: Longest wait for a byte between two polls of the SDK's receive loop, s.
POLL_WAIT = 0.001


class UnsupportedBaud(LinkError):
    """The vendor's SDK cannot set the port to the rate asked (its PortHandler refuses it)."""


@dataclass
class BusStats:
    """Counters of one bus since it was opened."""

    #: Exchanges attempted (a sync read counts once) and retries spent.
    exchanges: int = 0
    retries: int = 0
    #: Status packets that never came, and corrupt ones (bad CRC / checksum), per servo id.
    missing: Counter = field(default_factory=Counter)
    corrupt: Counter = field(default_factory=Counter)
    #: Status packets carrying a hardware-error flag, per servo id.
    hardware_errors: Counter = field(default_factory=Counter)

    @property
    def errors(self) -> int:
        """All missing and corrupt status packets."""
        return sum(self.missing.values()) + sum(self.corrupt.values())


class ServoDriver:
    """One servo bus through a vendor SDK (see the module docstring).

    Args:
        vendor: The bus protocol.
        port: Device path (``/dev/ttyUSB0``) or a pty.
        baud: Line rate in bit/s.
        names: Servo id -> joint name, for messages.
        retries: Extra attempts per exchange before a :class:`LinkError`.
        extra_timeout_ms: Added to the SDK's status-packet timeout (which is the packet's
            wire time plus 34 ms); an emulated bus on a busy machine wants more.
    """

    def __init__(
        self,
        vendor: Vendor,
        port: str,
        baud: int,
        names: dict[int, str],
        retries: int = 2,
        extra_timeout_ms: float = 0.0,
    ) -> None:
        self.vendor = vendor
        self.port_name = port
        self.baud = int(baud)
        self.names = names
        self.retries = int(retries)
        self.stats = BusStats()
        #: Hardware-error bits of each servo's latest status packet.
        self.error_bits: dict[int, int] = {}
        check_sdk(vendor.name, f"{vendor.name} bus on {port}")
        self.sdk = importlib.import_module(vendor.sdk.module)
        base = self.sdk.PortHandler

        class _CountingPort(base):  # type: ignore[misc, valid-type]
            """The SDK's port, counting the bytes written (for lockstep emulation).

            Bytes waiting when an instruction goes out are stale (a bus is half duplex: only
            answers to earlier instructions, e.g. the late status packets of an exchange that
            was retried), so they are dropped first; the SDKs' ``clearPort`` only flushes
            output, and a stale packet would be read as the answer to the new instruction.
            """

            bytes_written = 0

            def writePort(self, packet: Any) -> int:
                if self.ser is not None:
                    self.ser.reset_input_buffer()
                written = super().writePort(packet)
                self.bytes_written += written
                return written

            def readPort(self, length: int) -> Any:
                # The SDKs poll a non-blocking port in a loop; waiting in select() for the
                # first byte instead frees the core (for the servo emulator, or anything).
                data = super().readPort(length)
                if not data and self.ser is not None and hasattr(self.ser, "fd"):
                    select.select([self.ser.fd], [], [], POLL_WAIT)
                    data = super().readPort(length)
                return data

            def setPacketTimeout(self, packet_length: int) -> None:
                super().setPacketTimeout(packet_length)
                self.packet_timeout += extra

        extra = float(extra_timeout_ms)
        self.port = _CountingPort(port)
        self.packets = vendor.sdk.packet_handler(self.sdk)
        self._opened = False

    # ------------------------------------------------------------------ vendor parts
    def hardware_bits(self, error: int) -> int:
        """Hardware-error bits of a status packet's error byte (0: none)."""
        return self.vendor.sdk.hardware_bits(error)

    def bulk_write(self, entries: Sequence[tuple[int, Register, int]]) -> None:
        """Write different registers of several servos in one packet (no status).

        Raises:
            NotImplementedError: the protocol has none (see :attr:`has_bulk_write`).
        """
        self.vendor.sdk.bulk_write(self.sdk, self.packets, self.port, entries)
        self.stats.exchanges += 1

    @property
    def has_bulk_write(self) -> bool:
        """True when :meth:`bulk_write` exists on this protocol."""
        return self.vendor.sdk.has_bulk_write

    # ------------------------------------------------------------------ port
    @property
    def bytes_written(self) -> int:
        """Bytes the host has written to the port since it was opened."""
        return int(self.port.bytes_written)

    def open(self) -> None:
        """Open the port at ``baud``.

        Raises:
            LinkError: the port cannot be opened, or the SDK refuses the baud rate.
        """
        try:
            opened = self.port.openPort()
        except Exception as exc:  # the SDKs let pyserial's errors through
            raise LinkError(f"cannot open servo bus port {self.port_name!r}: {exc}") from exc
        if not opened:
            raise LinkError(f"cannot open servo bus port {self.port_name!r}")
        self._opened = True
        try:
            ok = self.port.setBaudRate(self.baud)
        except Exception as exc:
            raise LinkError(f"{self.port_name!r}: cannot set {self.baud} bit/s: {exc}") from exc
        if not ok:
            raise UnsupportedBaud(
                f"{self.port_name!r}: the {self.vendor.name} SDK does not support {self.baud} bit/s"
            )

    def close(self) -> None:
        """Close the port; safe to call twice."""
        if self._opened:
            self._opened = False
            try:
                self.port.closePort()
            except Exception:
                pass

    def _quiet(self, seconds: float = 0.002) -> None:
        """Wait for the line to go quiet, then drop whatever arrived (before a retry)."""
        time.sleep(seconds)
        try:
            self.port.ser.reset_input_buffer()
        except Exception:
            pass

    def _name(self, servo_id: int) -> str:
        joint = self.names.get(servo_id)
        return f"servo id {servo_id}" + (f" ({joint})" if joint else "")

    def _fail(self, servo_id: int, what: str) -> LinkError:
        error = LinkError(
            f"{self._name(servo_id)} on {self.port_name!r}: {what} after {1 + self.retries} "
            f"attempts ({self.stats.errors} bus errors so far); {LATENCY_FIX}"
        )
        error.servo_id = int(servo_id)  # type: ignore[attr-defined]
        return error

    def _count(self, servo_id: int, result: int) -> str:
        sdk = self.sdk
        if result == sdk.COMM_RX_CORRUPT:
            self.stats.corrupt[servo_id] += 1
            return "corrupt status packet (CRC/checksum error)"
        self.stats.missing[servo_id] += 1
        return "no status packet"

    def _note(self, servo_id: int, error: int) -> None:
        bits = self.hardware_bits(error)
        self.error_bits[servo_id] = bits
        if bits:
            self.stats.hardware_errors[servo_id] += 1

    # ------------------------------------------------------------------ exchanges
    def _guarded(self, call: Any, *args: Any) -> tuple[Any, ...]:
        """An SDK exchange, as ``(data, result, error)``.

        An exception inside the SDK (it indexes a short or stale packet without checking)
        counts as a corrupt status packet, which is what it is. The port itself failing (an
        unplugged adapter, a closed pty: ``OSError``, ``termios.error``) is a ``LinkError``.
        """
        try:
            result = call(*args)
        except (IndexError, ValueError, TypeError):
            self.port.is_using = False
            return (None, self.sdk.COMM_RX_CORRUPT, 0)
        except (OSError, *_PORT_ERRORS) as exc:
            self.port.is_using = False
            name = getattr(self.port, "port_name", "the port")
            raise LinkError(f"servo bus on {name!r}: the port failed: {exc}") from exc
        return result if len(result) == 3 else (None, *result)

    def ping(self, servo_id: int) -> int | None:
        """The model number ``servo_id`` reports, or None if it does not answer."""
        for attempt in range(1 + self.retries):
            self.stats.exchanges += attempt == 0
            model, result, error = self._guarded(self.packets.ping, self.port, servo_id)
            if result == self.sdk.COMM_SUCCESS:
                self._note(servo_id, error)
                return int(model)
            self.stats.retries += attempt < self.retries
            if result != self.sdk.COMM_RX_TIMEOUT:
                self._count(servo_id, result)
            self._quiet()
        return None

    def read(self, servo_id: int, register: Register) -> int:
        """Read one register of one servo (decoded integer).

        Raises:
            LinkError: no good status packet within the retry budget.
        """
        what = ""
        for attempt in range(1 + self.retries):
            self.stats.exchanges += attempt == 0
            data, result, error = self._guarded(
                self.packets.readTxRx, self.port, servo_id, register.address, register.size
            )
            if result == self.sdk.COMM_SUCCESS and len(data) == register.size:
                self._note(servo_id, error)
                return int(register.decode(np.array(data, dtype=np.uint8))[0])
            what = self._count(servo_id, result)
            self.stats.retries += attempt < self.retries
            self._quiet()
        raise self._fail(servo_id, f"reading {register.label} ({register.address}): {what}")

    def write(self, servo_id: int, register: Register, value: int) -> int:
        """Write one register and wait for the status packet; return its error byte.

        Raises:
            LinkError: no good status packet within the retry budget.
        """
        raw = register.encode(np.array([value]))[0].tolist()
        what = ""
        for attempt in range(1 + self.retries):
            self.stats.exchanges += attempt == 0
            result, error = self._guarded(
                self.packets.writeTxRx, self.port, servo_id, register.address, register.size, raw
            )[1:]
            if result == self.sdk.COMM_SUCCESS:
                self._note(servo_id, error)
                return int(error)
            what = self._count(servo_id, result)
            self.stats.retries += attempt < self.retries
            self._quiet()
        raise self._fail(servo_id, f"writing {register.label} ({register.address}): {what}")

    def sync_write(self, register: Register, ids: Sequence[int], values: np.ndarray) -> None:
        """Write ``register`` of every servo of ``ids`` in one packet (no status packets)."""
        rows = register.encode(np.asarray(values))
        group = self.sdk.GroupSyncWrite(self.port, self.packets, register.address, register.size)
        for servo_id, row in zip(ids, rows.tolist(), strict=True):
            group.addParam(int(servo_id), row)
        self.stats.exchanges += 1
        group.txPacket()

    def sync_read(self, address: int, length: int, ids: Sequence[int]) -> np.ndarray:
        """Bytes ``address .. address + length`` of every servo of ``ids``, shape ``(n, length)``.

        One sync read instruction, then one status packet per servo in order; the exchange is
        retried whole when a status packet is missing or corrupt.

        Raises:
            LinkError: a servo's status packet is missing or corrupt after the retries.
        """
        ids = [int(i) for i in ids]
        out = np.empty((len(ids), length), dtype=np.uint8)
        success = self.sdk.COMM_SUCCESS
        failed, what = ids[0], ""
        for attempt in range(1 + self.retries):
            self.stats.exchanges += attempt == 0
            result = self.vendor.sdk.sync_read_tx(self.packets, self.port, address, length, ids)
            if result != success:
                raise LinkError(
                    f"{self.port_name!r}: cannot send a sync read (SDK result "
                    f"{result}); {LATENCY_FIX}"
                )
            for row, servo_id in enumerate(ids):
                data, result, error = self._guarded(
                    self.packets.readRx, self.port, servo_id, length
                )
                if result != success or len(data) != length:
                    failed, what = servo_id, self._count(servo_id, result)
                    break
                out[row] = data
                self._note(servo_id, error)
            else:
                return out
            self.stats.retries += attempt < self.retries
            self._quiet(0.002 + len(ids) * (length + 12) * 10.0 / self.baud)
        raise self._fail(failed, f"sync read of {length} bytes at {address}: {what}")

    def reboot(self, servo_id: int) -> None:
        """Reboot one servo (clears its hardware error; its torque is off afterwards)."""
        self.stats.exchanges += 1
        self.vendor.sdk.reboot(self.packets, self.port, servo_id)
        self.error_bits[servo_id] = 0


def check_sdk(protocol: str, what: str) -> None:
    """Raise if the vendor SDK of bus ``protocol`` is not installed; imports nothing (cheap).

    Called before anything starts (an emulator, a run folder), so a partial install is one
    clear line, not a traceback from inside a running command.

    Args:
        protocol: A servo bus protocol (others need no SDK and pass).
        what: What needs it, for the message (a URL, a robot).

    Raises:
        MissingDependencyError: the SDK's module cannot be found (names the package).
    """
    record = VENDORS.get(protocol)
    if record is None or installed(record.sdk.module):
        return
    module, package = record.sdk.module, record.sdk_package
    raise MissingDependencyError(
        f"{what}: the {protocol} servo bus needs the vendor SDK {module} (package {package}, "
        f"a dependency of jointlab that this install lacks): pip install {package}, or "
        "reinstall jointlab (pip install -e . in a checkout)"
    )


def make_driver(
    protocol: str,
    port: str,
    baud: int,
    names: dict[int, str],
    retries: int = 2,
    extra_timeout_ms: float = 0.0,
) -> ServoDriver:
    """The SDK driver of bus ``protocol`` (``"dynamixel"`` or ``"feetech"``).

    Raises:
        ConfigurationError: an unknown protocol (names the known ones).
    """
    return ServoDriver(vendor_named(protocol), port, baud, names, retries, extra_timeout_ms)
