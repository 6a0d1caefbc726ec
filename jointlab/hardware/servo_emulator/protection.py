"""The servos' own protection rules: heat, overload, over-current and input voltage.

Once per firmware tick, vectorised over the servos of a bus, :class:`Protection` turns the
output each servo drove into the current it drew, the heat in its winding and the voltage at
its terminals, and sets the hardware-error bits its firmware would set. Which rules a servo
runs follows from its control table (the registers are the rules' parameters):

**Dynamixel X series** (ROBOTIS e-Manual, XL430-W250-T / XL330-M288-T control tables):

* Temperature Limit (31): "When the Present Temperature(146) is greater than the Temperature
  Limit(31), the Overheating Error Bit(0x04) ... in the Hardware Error Status(70) will be set".
* Max/Min Voltage Limit (32, 34): Present Input Voltage (144) outside them sets the Input
  Voltage Error bit (0x01).
* Overload Error bit (0x20), "Detects that persistent load that exceeds maximum output": the
  output held at its maximum (the PWM Limit (36)) for :data:`DYNAMIXEL_OVERLOAD_SECONDS`. The
  e-Manual gives no time; the value is this model's (see its docstring).
* Shutdown (63): the bits set in it clear Torque Enable (64) ("the motor's output becomes
  0 [%]"); "REBOOT is the only method to reset Torque Enable(64) to '1'(Torque ON) after the
  shutdown". Bits stay in Hardware Error Status (70) until the reboot.

**Feetech STS** (Feetech's SMS/STS memory table, as used by its FTServo SDK):

* Max Temperature Limit (13, °C) and Max/Min Input Voltage (14, 15, 0.1 V): Status (65)
  bits 2 (temperature) and 0 (voltage).
* Overload: the output above Overload Torque (36, 1 % of the maximum torque) for Protection
  Time (35, 10 ms) sets bit 5, and the output is then held to Protective Torque (34, 1 %).
* Over-current: the current above Protection Current (28, 6.5 mA) for Over-current Protection
  Time (38, 10 ms) sets bit 3.
* Unloading Condition (19): the bits set in it release the torque (Torque Enable (40) = 0);
  writing Torque Enable 1 clears the Status bits (a condition still present sets its bit
  again at the next tick).

**The physics behind them.** A servo's current is its output torque over its torque
constant (stall torque / stall current, the vendors' specifications); its winding resistance
is the rated voltage over the stall current. The winding heats as one thermal mass to
ambient: ``C dT/dt = I²R − (T − T_ambient) / R_th`` with ``R_th`` =
:data:`THERMAL_RESISTANCE` and ``R_th·C`` = :data:`THERMAL_TIME_CONSTANT` (neither vendor
publishes these: ``R_th`` is fitted to an owner's measurement, the time constant is this
model's; both stated so a trip time can be computed). ``T_ambient`` is the air around the
servos (:data:`AMBIENT` unless the bus is given another). The supply (:class:`Supply`) sags
by its resistance times the bus's total current.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.hardware.servo.control_table import ServoModel

__all__ = [
    "AMBIENT",
    "COLDEST",
    "DYNAMIXEL_OVERLOAD_SECONDS",
    "PERIOD",
    "THERMAL_RESISTANCE",
    "THERMAL_TIME_CONSTANT",
    "Protection",
    "Supply",
    "check_ambient",
    "heating_time",
]

#: Ambient temperature, °C: a servo at rest reads this.
AMBIENT = 25.0
#: The coldest ambient temperature accepted, °C (both vendors' lowest operating temperature
#: is above it).
COLDEST = -20.0
#: Winding-to-ambient thermal resistance, K/W. Neither vendor publishes it; it is fitted to
#: the one owner's measurement found (TheRobotStudio/SO-ARM100#134, an STS3215 at 12 V):
#: 1.5 kg lifted on a 10 cm lever rose 15 °C in 10 minutes. Read as a hold at 45° (as the
#: report's other lever tests): 1.04 N·m, 0.96 A, 4.05 W over six time constants, so
#: 15 / 4.05 = 3.7 K/W (if the load moved, less heat went in and the true value is higher).
#: Dynamixel servos share it for want of data.
THERMAL_RESISTANCE = 3.7
#: Thermal time constant of the winding and case, s (a model value: not published, and the
#: measurement above is at steady state, so it cannot tell).
THERMAL_TIME_CONSTANT = 100.0
#: Seconds of output held at the PWM Limit before a Dynamixel sets its Overload Error bit.
#: The e-Manual says only "persistent load that exceeds maximum output"; owners report an
#: XM430 holding at its limit trips in seconds. One second is this model's choice.
DYNAMIXEL_OVERLOAD_SECONDS = 1.0
#: Fraction of the maximum output that counts as "at" it (the output is clipped there).
SATURATED = 0.999
#: Firmware ticks per step of the rules (10 ms at 1 kHz: Feetech's unit of Protection Time,
#: and a hundredth of the shortest thermal or overload time, at a tenth of the cost).
PERIOD = 10

#: Hardware-error bits, the same positions on both vendors.
VOLTAGE_BIT, OVERHEAT_BIT, OVERCURRENT_BIT, OVERLOAD_BIT = 0x01, 0x04, 0x08, 0x20


@dataclass(frozen=True)
class Supply:
    """The bus's power supply: its voltage and internal resistance.

    Attributes:
        voltage: Open-circuit voltage, V (None: each servo's rated voltage, a supply that
            fits every servo).
        resistance: Internal resistance plus the cables', Ω; the bus voltage is
            ``voltage − resistance · (total current)``.
    """

    voltage: float | None = None
    resistance: float = 0.05

    def check(self, models: list[ServoModel]) -> None:
        """Refuse a supply outside a servo's rated input range (its voltage-limit registers).

        Raises:
            ConfigurationError: names the voltage, the model and its range.
        """
        if not (math.isfinite(self.resistance) and 0.0 <= self.resistance <= 100.0):
            raise ConfigurationError(
                f"supply resistance must be in [0, 100] ohm, got {self.resistance!r}"
            )
        if self.voltage is None:
            return
        for model in models:
            low, high = voltage_range(model)
            if not low <= self.voltage <= high:
                raise ConfigurationError(
                    f"supply voltage {self.voltage} V is outside the {model.name}'s rated "
                    f"input range {low:g}-{high:g} V (its Min/Max Voltage Limit); use a "
                    "supply in that range"
                )


def check_ambient(ambient: float, models: list[ServoModel]) -> None:
    """Refuse an ambient temperature a servo could not start in.

    A servo reads whole degrees and faults above its limit, so an ambient just under
    ``limit + 1`` is a servo at its limit that any work pushes over (tests use it to see the
    rule in seconds of real time).

    Raises:
        ConfigurationError: below :data:`COLDEST` °C, or where a servo would read above its
            initial Temperature Limit at power-up (in error before it moved); names the model.
    """
    if not (math.isfinite(ambient) and ambient >= COLDEST):
        raise ConfigurationError(
            f"ambient temperature must be a number >= {COLDEST:g} C, got {ambient!r}"
        )
    for model in models:
        limit = model.table["temperature_limit"].initial
        if ambient >= limit + 1:  # type: ignore[operator]
            raise ConfigurationError(
                f"ambient temperature {ambient:g} C is above the {model.name}'s "
                f"Temperature Limit ({limit} C): it would be in error from power-up; use an "
                f"ambient below {limit + 1} C"  # type: ignore[operator]
            )


def voltage_range(model: ServoModel) -> tuple[float, float]:
    """The initial Min and Max Voltage Limit of ``model``, V (its rated input range)."""
    table = model.table
    low, high = table["min_voltage_limit"], table["max_voltage_limit"]
    return low.initial * low.unit, high.initial * high.unit  # type: ignore[operator]


def heating_time(
    power: float, limit: float, start: float | None = None, ambient: float = AMBIENT
) -> float:
    """Seconds for a winding dissipating ``power`` W to heat from ``start`` to ``limit`` °C.

    ``start`` defaults to ``ambient`` (°C). ``inf`` when the steady temperature
    ``ambient + power · THERMAL_RESISTANCE`` stays at or below the limit.
    """
    start = ambient if start is None else start
    final = ambient + power * THERMAL_RESISTANCE
    if final <= limit:
        return math.inf
    return THERMAL_TIME_CONSTANT * math.log((final - start) / (final - limit))


class Protection:
    """The protection state of the servos of one bus (see the module docstring).

    Args:
        models: Each servo's model.
        dt: Seconds between two steps of the rules (``PERIOD`` firmware ticks).
        supply: The bus's supply.
        ambient: The air around the servos, °C: a servo at rest reads it
            (:func:`check_ambient`).
    """

    def __init__(
        self,
        models: list[ServoModel],
        dt: float,
        supply: Supply | None = None,
        ambient: float = AMBIENT,
    ) -> None:
        supply = supply or Supply()
        supply.check(models)
        check_ambient(ambient, models)
        self.supply = supply
        self.ambient = float(ambient)
        self.dt = float(dt)
        self.n = len(models)
        stall_current = np.array([m.stall_current for m in models])
        rated = np.array([m.voltage for m in models])
        #: Torque constant at the horn, N·m/A, and winding resistance, Ω.
        self.torque_per_amp = np.array([m.stall_torque for m in models]) / stall_current
        self.resistance = rated / stall_current
        self.nominal = rated if supply.voltage is None else np.full(self.n, supply.voltage)
        #: Which rule set each servo runs (from its control table).
        self.dynamixel = np.array(["shutdown" in m.table for m in models])
        #: Winding temperature, °C; supply voltage at each servo, V; current drawn, A.
        self.temperature = np.full(self.n, self.ambient)
        self.voltage = self.nominal.copy()
        self.current = np.zeros(self.n)
        #: Seconds each overload / over-current condition has lasted.
        self.overload_time = np.zeros(self.n)
        self.overcurrent_time = np.zeros(self.n)
        #: Feetech: the output is held to Protective Torque (after an overload).
        self.protecting = np.zeros(self.n, dtype=bool)
        #: The supply's open-circuit voltage while a brown-out holds, V (None: no brown-out).
        self.override: float | None = None

    @property
    def busy(self) -> bool:
        """True while a timer runs or a winding is away from its steady temperature.

        A resting emulated arm sleeps (skips its physics) only when this is False.
        """
        steady = self.ambient + self.current**2 * self.resistance * THERMAL_RESISTANCE
        return bool(
            (self.overload_time > 0).any()
            or (self.overcurrent_time > 0).any()
            or (np.abs(self.temperature - steady) > 0.5).any()
        )

    def reset(self, k: int) -> None:
        """Servo ``k`` powered up again: its timers restart (it keeps its heat)."""
        self.overload_time[k] = self.overcurrent_time[k] = 0.0
        self.protecting[k] = False

    def output_cap(self, stall: np.ndarray, protective: np.ndarray) -> np.ndarray:
        """The torque each servo may drive now, N·m (``inf``: no protection in force).

        Args:
            stall: Stall torque, N·m.
            protective: Protective Torque register (Feetech, %; ignored elsewhere).
        """
        return np.where(self.protecting, stall * protective * 0.01, np.inf)

    def _thresholds(self, registers: dict[str, np.ndarray], stall: np.ndarray) -> None:
        """The rules' registers in SI units, once per change of the servos' memory."""
        self._registers = registers
        #: Present Temperature (whole degrees, floored) above the limit: T >= limit + 1.
        self._hot = registers["temperature_limit"] + 1.0
        #: Present Input Voltage (0.1 V, rounded) outside the limits.
        self._low = (registers["min_voltage_limit"] - 0.5) * 0.1
        self._high = (registers["max_voltage_limit"] + 0.5) * 0.1
        dxl = self.dynamixel
        self._overload_torque = stall * registers["overload_torque"] * 0.01
        self._overload_seconds = (
            np.where(dxl, DYNAMIXEL_OVERLOAD_SECONDS, registers["protection_time"] * 0.01) - 1e-9
        )
        self._overcurrent = np.where(dxl, np.inf, registers["protection_current"] * 6.5e-3)
        self._overcurrent_seconds = registers["over_current_protection_time"] * 0.01 - 1e-9
        self._heat_gain = self.dt * THERMAL_RESISTANCE / THERMAL_TIME_CONSTANT * self.resistance
        self._keep = 1.0 - self.dt / THERMAL_TIME_CONSTANT

    def step(
        self,
        torque: np.ndarray,
        at_max: np.ndarray,
        registers: dict[str, np.ndarray],
        stall: np.ndarray,
    ) -> np.ndarray | None:
        """One tick: heat, supply and the rules; the hardware-error bits found, or None.

        Args:
            torque: Horn torque each servo drove this tick, N·m.
            at_max: Whether each servo's output was held at its maximum (its PWM Limit).
            registers: The rules' registers, raw (``temperature_limit``,
                ``max_voltage_limit``, ``min_voltage_limit``, and on Feetech
                ``overload_torque``, ``protection_time``, ``protection_current``,
                ``over_current_protection_time``), shape ``(n,)`` each; a new dict whenever
                the servos' memory changed.
            stall: Stall torque, N·m.

        Returns:
            The bits of every rule that holds this tick, ``(n,)``; None when none does (the
            usual tick, kept cheap: it runs at the firmware rate).
        """
        if registers is not getattr(self, "_registers", None):
            self._thresholds(registers, stall)
        dt = self.dt
        magnitude = np.abs(torque)
        self.current = current = magnitude / self.torque_per_amp
        # C dT/dt = I²R − (T − T_amb)/R_th, explicit Euler at the firmware tick
        self.temperature = (
            self.temperature * self._keep
            + self._heat_gain * current * current
            + (1.0 - self._keep) * self.ambient
        )
        source = self.nominal if self.override is None else np.full(self.n, self.override)
        self.voltage = voltage = np.maximum(
            source - self.supply.resistance * float(current.sum()), 0.0
        )
        over = np.where(self.dynamixel, at_max, magnitude > self._overload_torque)
        self.overload_time = np.where(over, self.overload_time + dt, 0.0)
        tripped = over & (self.overload_time >= self._overload_seconds)
        high_current = current > self._overcurrent
        if high_current.any() or self.overcurrent_time.any():
            self.overcurrent_time = np.where(high_current, self.overcurrent_time + dt, 0.0)
        hot = self.temperature >= self._hot
        off = (voltage < self._low) | (voltage > self._high)
        if not (
            tripped.any()
            or self.protecting.any()
            or hot.any()
            or off.any()
            or self.overcurrent_time.any()
        ):
            return None
        self.protecting |= tripped & ~self.dynamixel
        bits = np.where(hot, OVERHEAT_BIT, 0) | np.where(off, VOLTAGE_BIT, 0)
        bits |= np.where(tripped | self.protecting, OVERLOAD_BIT, 0)
        timer = self.overcurrent_time
        long_enough = (timer > 0) & (timer >= self._overcurrent_seconds)
        bits |= np.where(long_enough, OVERCURRENT_BIT, 0)
        return bits
