"""What a bus robot checks when it connects, and how it decodes a Sync Read into a state.

* :func:`check_servos`: every servo must answer (else an error naming its id, or the baud
  rate when none answers), report the robot file's model and run its operating mode
  (``configure=True`` writes the mode and a zero return delay instead of refusing).
* :class:`StateDecoder`: one Sync Read block (``READ_SPAN`` per protocol) into positions,
  velocities, torques, currents, Player flags and the extras, vectorised over the servos.
"""

from __future__ import annotations

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.hardware.servo.control_table import ServoModel
from jointlab.hardware.servo_host.driver import ServoDriver
from jointlab.interface import ActuatorState
from jointlab.robots.bus import BusSpec
from jointlab.robots.transmission import TransmissionArray

__all__ = ["READ_SPAN", "StateDecoder", "check_servos"]

#: The registers one Sync Read covers, per protocol: everything the state needs.
READ_SPAN = {
    "dynamixel": ("moving", "present_temperature"),
    "feetech": ("present_position", "present_current"),
}


def check_servos(
    driver: ServoDriver, bus: BusSpec, models: list[ServoModel], port: str, configure: bool
) -> None:
    """Ping every servo, check its model and operating mode (see the module docstring).

    Raises:
        ConfigurationError: no servo answers, one does not, another model, another mode.
    """
    ids = list(bus.ids)
    found = {servo_id: driver.ping(servo_id) for servo_id in ids}
    if all(model is None for model in found.values()):
        raise ConfigurationError(
            f"no servo answers on {port!r} at {driver.baud} bit/s (ids {ids}): is "
            f"the bus powered, and do the servos run at {driver.baud} bit/s? A baud mismatch "
            f"looks exactly like this: give each servo its id and the bus baud with `jointlab "
            f"setup-motors {driver.vendor.name}://{port} --robot ROBOT`, or set bus.baud in the "
            "robot file (?baud= in the URL)"
        )
    for servo, model in zip(bus.servos, models, strict=True):
        number = found[servo.id]
        if number is None:
            raise ConfigurationError(
                f"servo id {servo.id} ({servo.joint}) does not answer on {port!r} while "
                f"the others do: check its cable, its id (the robot file's bus.servos."
                f"{servo.joint}.id) and its baud; set it up alone with `jointlab setup-motors "
                f"{driver.vendor.name}://{port} --robot ROBOT --joints {servo.joint}`"
            )
        if number != model.model_number:
            raise ConfigurationError(
                f"servo id {servo.id} ({servo.joint}) reports model number {number}, the "
                f"robot file says {model.name} ({model.model_number}): fix "
                f"bus.servos.{servo.joint}.model, or the wiring"
            )
        table = model.table
        wanted = model.modes[servo.mode.value]
        mode = driver.read(servo.id, table["operating_mode"])
        if mode != wanted or (configure and driver.read(servo.id, table["return_delay_time"])):
            if not configure:
                raise ConfigurationError(
                    f"servo id {servo.id} ({servo.joint}) runs {model.mode_name(mode)!r} "
                    f"(Operating Mode {table['operating_mode'].address} = {mode}); the robot "
                    f"file wants {servo.mode.value!r} ({wanted}). Connect with configure=True "
                    "(?configure=1) to write it, or write it with the vendor's tool"
                )
            driver.write(servo.id, table["torque_enable"], 0)
            driver.write(servo.id, table["operating_mode"], wanted)
            driver.write(servo.id, table["return_delay_time"], 0)


class StateDecoder:
    """Decodes Sync Read blocks of ``models``' servos starting at ``address``."""

    def __init__(self, models: list[ServoModel], address: int) -> None:
        self.models = models
        self.address = address
        self.table = models[0].table
        self.stall = np.array([m.stall_torque for m in models])
        self.per_amp = np.array([m.torque_per_amp for m in models])
        self.measured = np.array(["present_current" in m.table for m in models])
        self.velocity_unit = self.table["present_velocity"].unit * models[0].ticks_per_radian

    def column(self, block: np.ndarray, name: str) -> np.ndarray:
        """Register ``name`` of every servo, decoded, shape ``(n,)``."""
        register = next(m.table for m in self.models if name in m.table)[name]
        start = register.address - self.address
        return register.decode(block[:, start : start + register.size])

    def decode(
        self, block: np.ndarray, errors: np.ndarray, transmissions: TransmissionArray
    ) -> tuple[np.ndarray, ...]:
        """Position, velocity, torque, current, flags, extras of one block.

        Args:
            block: The Sync Read bytes, shape ``(n, length)``.
            errors: Hardware-error bits from the status packets, shape ``(n,)``.
            transmissions: The (calibrated) transmissions.
        """
        ticks = self.column(block, "present_position")
        position = transmissions.to_joint(ticks)
        velocity = transmissions.velocity_to_joint(
            self.column(block, "present_velocity") * self.velocity_unit
        )
        measured, n = self.measured, len(self.models)
        horn, current = np.zeros(n), np.zeros(n)
        if measured.any():
            unit = next(m.table for m in self.models if "present_current" in m.table)[
                "present_current"
            ].unit
            amps = self.column(block, "present_current") * unit
            horn = np.where(measured, amps * self.per_amp, horn)
            current = np.where(measured, amps, current)
        if not measured.all():
            load = self.column(block, "present_load") * 1e-3 * self.stall
            horn = np.where(measured, horn, load)
            current = np.where(measured, current, load / self.per_amp)
        status = self.table["hardware_error_status"]
        if status.address >= self.address:  # Feetech: the Status register is in the block
            errors = errors | self.column(block, "hardware_error_status")
        flags = (1 + (self.column(block, "moving") != 0)).astype(np.uint8)
        flags[errors != 0] |= np.uint8(ActuatorState.STALLED)
        extras = {
            "temperature": self.column(block, "present_temperature") * 1.0,
            "voltage": self.column(block, "present_input_voltage") * 0.1,
            "hardware_error": errors,
            "ticks": ticks,
        }
        return position, velocity, transmissions.torque_to_joint(horn), current, flags, extras
