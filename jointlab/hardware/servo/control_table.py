"""Servo control tables as data: registers, encodings, units, and the model that owns them.

A serial-bus servo is a block of memory (the vendor's *control table*): every quantity is a
register at an address with a size, an access right, a raw encoding and a unit. Each supported
model has exactly one :class:`ServoModel` (``jointlab.hardware.dynamixel.tables``,
``jointlab.hardware.feetech.tables``), used by the host backends and by the emulated servos
alike, so the two can never disagree about an address.

Registers have canonical snake-case names shared across vendors (``present_position``,
``goal_position``, ``torque_enable`` ...) and keep the vendor's own label. Raw values are
little-endian; signed registers are two's complement (Dynamixel) or sign-magnitude with the
sign in bit ``sign_bit`` (Feetech). Decoding and encoding work on whole columns of a numpy
array at once: one call per register per bus cycle, never one per servo.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from jointlab.errors import ConfigurationError, JointLabError

__all__ = ["Access", "ControlTable", "Encoding", "MemoryRefused", "Register", "ServoModel"]


class MemoryRefused(JointLabError):
    """A read or write an emulated servo's firmware refuses, and why.

    Attributes:
        reason: ``"access"`` (read-only, past the table, an EEPROM write under torque),
            ``"range"`` (a goal while the bus watchdog has fired) or ``"length"``; the
            vendor's instruction handler answers with its status packet's matching error.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"the servo refuses the access ({reason})")
        self.reason = reason


class Encoding(enum.Enum):
    """How a register's raw bytes map to an integer."""

    UNSIGNED = "unsigned"
    #: Two's complement.
    SIGNED = "signed"
    #: Magnitude in the low bits, sign in ``Register.sign_bit``.
    SIGN_MAGNITUDE = "sign_magnitude"


class Access(enum.Enum):
    """Who may write a register."""

    READ = "R"
    READ_WRITE = "RW"


@dataclass(frozen=True)
class Register:
    """One entry of a control table."""

    #: Canonical name (``present_position``), the same across vendors where the meaning is.
    name: str
    #: The vendor's label (``Present Position``).
    label: str
    address: int
    #: Size in bytes (1, 2 or 4).
    size: int
    access: Access = Access.READ_WRITE
    #: Power-up value (raw), or None where the vendor gives none.
    initial: int | None = None
    encoding: Encoding = Encoding.UNSIGNED
    #: Sign bit of a sign-magnitude register.
    sign_bit: int = 15
    #: SI value of one raw count (rad, rad/s, A, V, °C, s ...); 1.0 for plain numbers.
    unit: float = 1.0
    #: The SI unit's name, for documentation (``"rad"``).
    unit_name: str = ""
    #: True for the non-volatile area (writable only with torque off).
    eeprom: bool = False

    def decode(self, raw: np.ndarray) -> np.ndarray:
        """Integers of raw little-endian bytes, shape ``(n, size)`` -> ``(n,)`` int64."""
        raw = np.asarray(raw, dtype=np.uint8).reshape(-1, self.size)
        weights = (256 ** np.arange(self.size)).astype(np.int64)
        value = raw.astype(np.int64) @ weights
        if self.encoding is Encoding.SIGNED:
            half = 1 << (8 * self.size - 1)
            value = np.where(value >= half, value - 2 * half, value)
        elif self.encoding is Encoding.SIGN_MAGNITUDE:
            sign = 1 << self.sign_bit
            value = np.where(value & sign, -(value & (sign - 1)), value & (sign - 1))
        return value

    def encode(self, value: np.ndarray) -> np.ndarray:
        """Raw little-endian bytes, shape ``(n, size)``, of integers ``value`` (shape ``(n,)``).

        Raises:
            ConfigurationError: a value does not fit the register (names it and the range).
        """
        value = np.asarray(np.rint(value), dtype=np.int64).reshape(-1)
        low, high = self.raw_range
        bad = (value < low) | (value > high)
        if bad.any():
            raise ConfigurationError(
                f"{self.label} ({self.address}): {int(value[bad][0])} does not fit its "
                f"{self.size}-byte {self.encoding.value} range [{low}, {high}]"
            )
        if self.encoding is Encoding.SIGNED:
            value = value % (1 << (8 * self.size))
        elif self.encoding is Encoding.SIGN_MAGNITUDE:
            value = np.where(value < 0, (-value) | (1 << self.sign_bit), value)
        shifts = 8 * np.arange(self.size)
        return ((value[:, None] >> shifts) & 0xFF).astype(np.uint8)

    @property
    def raw_range(self) -> tuple[int, int]:
        """Smallest and largest integer the register holds."""
        bits = 8 * self.size
        if self.encoding is Encoding.SIGNED:
            return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if self.encoding is Encoding.SIGN_MAGNITUDE:
            return -((1 << self.sign_bit) - 1), (1 << self.sign_bit) - 1
        return 0, (1 << bits) - 1


@dataclass(frozen=True)
class ControlTable:
    """The registers of one model, addressable by canonical name."""

    registers: tuple[Register, ...]
    _by_name: dict[str, Register] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {r.name: r for r in self.registers})

    def __getitem__(self, name: str) -> Register:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no register {name!r}; known: {sorted(self._by_name)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterable[Register]:  # type: ignore[override]
        return iter(self.registers)

    @property
    def size(self) -> int:
        """Bytes of memory the table spans (highest address + its size)."""
        return max(r.address + r.size for r in self.registers)

    def span(self, first: str, last: str) -> tuple[int, int]:
        """``(address, length)`` of the block from register ``first`` through ``last``."""
        start = self[first].address
        end = self[last].address + self[last].size
        return start, end - start

    def initial_memory(self) -> np.ndarray:
        """The power-up memory image (uint8, ``size`` bytes), unlisted bytes zero."""
        memory = np.zeros(self.size, dtype=np.uint8)
        for register in self.registers:
            if register.initial is not None:
                raw = register.encode(np.array([register.initial]))[0]
                memory[register.address : register.address + register.size] = raw
        return memory


@dataclass(frozen=True)
class ServoModel:
    """A servo model: identity, control table, operating modes and motor data.

    Motor data are the vendor's published figures at the voltage given; they set the
    emulated servo's torque-speed line and the scaling of gains and currents.
    """

    #: ``"dynamixel"`` or ``"feetech"``.
    vendor: str
    #: Lower-case model name used in robot files (``xl430-w250``).
    name: str
    #: The value of the Model Number register.
    model_number: int
    table: ControlTable
    #: Encoder ticks per revolution of the horn.
    resolution: int
    #: JointLab mode -> Operating Mode register value (``{"position": 3, "current": 0}``).
    modes: dict[str, int]
    #: Other operating modes the model has (name -> register value), for error messages.
    other_modes: dict[str, int]
    #: Stall torque at the horn, N·m, at ``voltage``.
    stall_torque: float
    #: No-load speed of the horn, rad/s, at ``voltage``.
    no_load_speed: float
    #: Stall current, A, at ``voltage``.
    stall_current: float
    #: Gearbox ratio (motor turns per horn turn).
    gear_ratio: float
    #: Supply voltage of the figures above, V.
    voltage: float
    #: Where the figures come from.
    source: str
    #: Full-scale PWM in raw counts (duty 1.0).
    pwm_full_scale: int
    #: Servo firmware control rate assumed by the emulated servo, Hz.
    firmware_rate: int = 1000
    #: Baud Rate register value -> line rate, bit/s (the vendor's table).
    baud_rates: dict[int, int] = field(default_factory=dict)

    def baud_value(self, baud: int) -> int | None:
        """The Baud Rate register value of line rate ``baud`` (bit/s), None if it has none."""
        return next((value for value, rate in self.baud_rates.items() if rate == baud), None)

    @property
    def has_current_control(self) -> bool:
        """True when the model takes a goal current (JointLab ``current`` mode)."""
        return "current" in self.modes

    @property
    def torque_per_amp(self) -> float:
        """Horn torque per ampere, N·m/A: stall torque over stall current."""
        return self.stall_torque / self.stall_current

    @property
    def ticks_per_radian(self) -> float:
        """Encoder ticks per radian of the horn."""
        return self.resolution / (2.0 * np.pi)

    def mode_name(self, value: int) -> str:
        """The name of Operating Mode register value ``value``."""
        for name, raw in {**self.modes, **self.other_modes}.items():
            if raw == value:
                return name
        return f"unknown mode {value}"
