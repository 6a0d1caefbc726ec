"""The registers a servo's control law reads, decoded: the inputs of :class:`ServoArray`'s law.

:class:`RegisterInputs` is a part of :class:`~jointlab.hardware.servo_emulator.firmware.ServoArray`:
from the servos' memory images it decodes, once per change of the memory, what the law needs
each tick (modes, goals within the position limits, gains, torque/current/PWM limits, the
profile's speed and acceleration in ticks, homing and drive direction), vectorised over the
servos of a bus.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from jointlab.hardware.servo.control_table import Register, ServoModel

__all__ = ["MODE_NAMES", "POSITION_MODES", "PWM_DIRECTION", "PWM_MAGNITUDE", "RegisterInputs"]

#: Operating modes the law knows, by JointLab name (each model maps them to its values).
MODE_NAMES = (
    "position",
    "extended_position",
    "current_based_position",
    "current",
    "velocity",
    "pwm",
    "step",
)
#: Modes in which the servo follows a position target.
POSITION_MODES = ("position", "extended_position", "current_based_position", "step")
#: Feetech PWM mode: Goal Time (44) holds the duty in ‰ in bits 0-9 and its direction in a
#: higher bit: bit 10 as Feetech's SDKs write it (``SCSCL::WritePWM``, ``SMS_STS::WritePwm``),
#: bit 11 as Feetech's STS3215 memory table states it; either reverses the duty.
PWM_MAGNITUDE, PWM_DIRECTION = 0x3FF, (1 << 10) | (1 << 11)


class RegisterInputs:
    """The law's inputs decoded from the memory (a part of ``ServoArray``; see the module)."""

    models: list[ServoModel]
    n: int
    stall: np.ndarray
    torque_per_amp: np.ndarray
    step_target: np.ndarray
    _inputs: dict[str, np.ndarray] | None
    _mode_values: dict[str, np.ndarray]
    get: Callable[[str], np.ndarray]
    has: Callable[[str], np.ndarray]
    register: Callable[[str], Register]

    def _mode_mask(self, mode: np.ndarray, name: str) -> np.ndarray:
        return mode == self._mode_values[name]

    def _decoded(self) -> dict[str, np.ndarray]:
        """The registers the law reads, decoded once per change of the memory."""
        if self._inputs is None:
            names = [
                "torque_enable",
                "operating_mode",
                "goal_position",
                "position_p_gain",
                "position_d_gain",
            ]
            names += [
                n
                for n in (
                    "goal_current",
                    "goal_velocity",
                    "velocity_p_gain",
                    "velocity_i_gain",
                    "goal_pwm",
                    "goal_time",
                )
                if any(n in m.table for m in self.models)
            ]
            inputs = {name: self.get(name) for name in names}
            inputs["limit"] = self.stall * self._torque_limit()
            inputs["profile_speed"] = self._profile_speed()
            inputs["profile_accel"] = self._profile_acceleration()
            inputs["pwm_cap"] = self._optional("pwm_limit", 885.0) / 885.0
            mode = inputs["operating_mode"]
            inputs["position_mode"] = np.any(
                [self._mode_mask(mode, name) for name in POSITION_MODES], axis=0
            )
            inputs["multi_turn"] = self._mode_mask(mode, "extended_position")
            inputs["homing"] = self._optional("homing_offset", 0)
            drive = self._optional("drive_mode", 0).astype(np.int64)
            inputs["direction"] = np.where(drive & 1, -1.0, 1.0)
            inputs["time_based"] = (drive & 4) != 0  # Drive Mode bit 2: time-based profile
            inputs["profile_velocity_raw"] = self._optional("profile_velocity", 0)
            inputs["profile_acceleration_raw"] = self._optional("profile_acceleration", 0)
            low = self._optional("min_position_limit", -np.inf)
            high = self._optional("max_position_limit", np.inf)
            goal = inputs["goal_position"].astype(np.float64)
            goal = np.where(inputs["multi_turn"], goal, np.clip(goal, low, high))
            inputs["step_mode"] = self._mode_mask(mode, "step")
            stepping = inputs["step_mode"] & ~np.isnan(self.step_target)
            inputs["goal"] = np.where(stepping, self.step_target, goal)
            inputs["current_capped"] = self._mode_mask(mode, "current_based_position")
            cap = self._optional("goal_current", 0) * 1e-3 * self.torque_per_amp
            inputs["current_cap"] = np.minimum(np.abs(cap), inputs["limit"])
            inputs.update(self._protection_inputs())
            self._inputs = inputs
        return self._inputs

    def _protection_inputs(self) -> dict[str, np.ndarray]:
        """The protection rules' registers, raw (see :mod:`.protection`).

        ``cut_mask``: the bits that turn a servo's torque off, Shutdown (63) on Dynamixel,
        Unloading Condition (19) on Feetech.
        """
        names = (
            "temperature_limit",
            "max_voltage_limit",
            "min_voltage_limit",
            "overload_torque",
            "protection_time",
            "protection_current",
            "over_current_protection_time",
            "protective_torque",
        )
        found = {name: self._optional(name, 0.0) for name in names}
        shutdown = self._optional("shutdown", 0.0).astype(np.int64)
        unloading = self._optional("unloading_condition", 0.0).astype(np.int64)
        found["cut_mask"] = np.where(self.has("shutdown"), shutdown, unloading)
        return found

    def _optional(self, name: str, default: float) -> np.ndarray:
        """Register ``name`` of every servo as floats, ``default`` where a model lacks it."""
        mask = self.has(name)
        if not mask.any():
            return np.full(self.n, float(default))
        return np.where(mask, self.get(name).astype(np.float64), default)

    def _torque_limit(self) -> np.ndarray:
        if "torque_limit" in self.models[0].table:  # Feetech: 0.1 % of stall torque
            return np.clip(self.get("torque_limit") * 1e-3, 0.0, 1.0)
        if self.has("current_limit").all():
            amps = self.get("current_limit") * 1e-3
            return np.clip(amps * self.torque_per_amp / self.stall, 0.0, 1.0)
        return np.clip(self.get("pwm_limit") / 885.0, 0.0, 1.0)

    def _profile_speed(self) -> np.ndarray:
        """Setpoint speed limit in ticks/s (0: none)."""
        name = "profile_velocity" if "profile_velocity" in self.models[0].table else "goal_velocity"
        register = self.register(name)
        return np.abs(self.get(name)) * register.unit * self.models[0].ticks_per_radian

    def _profile_acceleration(self) -> np.ndarray:
        """Profile acceleration limit in ticks/s² (``inf`` where the register is 0)."""
        name = "profile_acceleration" if self.has("profile_acceleration").all() else "acceleration"
        register = self.register(name)
        accel = np.abs(self.get(name)) * register.unit * self.models[0].ticks_per_radian
        return np.where(accel > 0, accel, np.inf)

    def _velocity_unit(self) -> np.ndarray:
        """Ticks/s per count of Goal/Present Velocity, shape ``(n,)``."""
        unit = self.register("goal_velocity").unit * self.models[0].ticks_per_radian
        return np.full(self.n, unit)
