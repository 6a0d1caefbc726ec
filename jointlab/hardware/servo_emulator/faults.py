"""What fails on an emulated servo bus besides the servos' own protection: link and power.

:class:`BusFaults` is set on a :class:`~jointlab.hardware.servo_emulator.emulator.BusEmulator`
(``BusFaults(...)``, ``set_faults``, or the ``emulated://`` URL's keys, see
:func:`jointlab.hardware.servo_host.urls.bus_faults`):

* ``drop_status`` / ``corrupt_status``: per servo id, the probability that a status packet is
  not sent, or sent with a wrong CRC (checksum);
* ``delay_status``: seconds every status packet leaves late (a slow adapter, a long cable);
* ``unplugged``: ``(at, seconds)``: the cable is out; the servos hear nothing and nobody
  hears them (they keep running their last goals, as real ones do);
* ``power_cut``: ``(at, seconds)``: the supply is off; the servos go limp and silent, and
  power up again afterwards as after a reboot (torque off, RAM to its initial values, the
  EEPROM kept);
* ``brownout``: ``(at, seconds, volts)``: the supply sags to ``volts`` (the servos' voltage
  rules see it: the Input Voltage Error bit below their Min Voltage Limit).

Times ``at`` count firmware seconds from when the faults were set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from jointlab.errors import ConfigurationError

__all__ = ["BusFaults", "Window"]

#: Longest fault window, s (a fault that outlasts a session is a setup mistake).
MAX_SECONDS = 3600.0
#: Longest status delay, s.
MAX_DELAY = 1.0


@dataclass(frozen=True)
class Window:
    """A fault in force from ``at`` for ``seconds`` (firmware seconds from the set-up)."""

    at: float
    seconds: float

    def holds(self, t: float) -> bool:
        """True while the fault is in force at firmware time ``t`` (s since the set-up)."""
        return self.at <= t < self.at + self.seconds


def _window(name: str, value: tuple[float, ...] | None, size: int) -> Window | None:
    if value is None:
        return None
    if len(value) != size or not all(math.isfinite(float(v)) for v in value):
        raise ConfigurationError(f"BusFaults.{name} must be {size} finite numbers, got {value!r}")
    at, seconds = float(value[0]), float(value[1])
    if not (0.0 <= at <= MAX_SECONDS and 0.0 < seconds <= MAX_SECONDS):
        raise ConfigurationError(
            f"BusFaults.{name}: start {at!r} s must be in [0, {MAX_SECONDS:g}] and length "
            f"{seconds!r} s in (0, {MAX_SECONDS:g}]"
        )
    return Window(at, seconds)


@dataclass(frozen=True)
class BusFaults:
    """Link and power faults of an emulated servo bus (see the module docstring; all off)."""

    drop_status: dict[int, float] = field(default_factory=dict)
    corrupt_status: dict[int, float] = field(default_factory=dict)
    #: Seconds every status packet leaves late.
    delay_status: float = 0.0
    #: ``(at, seconds)`` the cable is out.
    unplugged: tuple[float, float] | None = None
    #: ``(at, seconds)`` the supply is off; the servos power up again afterwards.
    power_cut: tuple[float, float] | None = None
    #: ``(at, seconds, volts)`` the supply sags to ``volts``.
    brownout: tuple[float, float, float] | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("drop_status", "corrupt_status"):
            for servo_id, p in getattr(self, name).items():
                if not 0.0 <= p <= 1.0:
                    raise ConfigurationError(
                        f"BusFaults.{name}[{servo_id}] must be a probability, got {p!r}"
                    )
        if not (math.isfinite(self.delay_status) and 0.0 <= self.delay_status <= MAX_DELAY):
            raise ConfigurationError(
                f"BusFaults.delay_status must be in [0, {MAX_DELAY:g}] s, got {self.delay_status!r}"
            )
        _window("unplugged", self.unplugged, 2)
        _window("power_cut", self.power_cut, 2)
        _window("brownout", self.brownout, 3)
        if self.brownout is not None and not 0.0 <= float(self.brownout[2]) <= 100.0:
            raise ConfigurationError(
                f"BusFaults.brownout: the sagging supply must be in [0, 100] V, got "
                f"{self.brownout[2]!r}"
            )

    def window(self, name: str) -> Window | None:
        """The window of ``unplugged``, ``power_cut`` or ``brownout`` (None: not set)."""
        value = getattr(self, name)
        return None if value is None else Window(float(value[0]), float(value[1]))
