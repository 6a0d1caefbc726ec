"""Emulated servos: each one a joint of a ``SimRobot``, each with its control table and loop.

:class:`ServoArray` is the firmware of every servo on an emulated bus, vectorised over the
servos: one ``uint8`` memory image per servo (the control table, laid out at the vendor's
addresses), and once per firmware tick (``1 / firmware_rate`` s, the ``SimRobot``'s physics
step) the servos' own control law, computed from their registers in motor space and applied
to the joints through the robot file's transmissions:

* torque off, or a hardware error that shuts the servo down: zero torque (limp); the
  servos' own protection rules (:mod:`jointlab.hardware.servo_emulator.protection`: heat,
  overload, over-current, input voltage from the bus's supply) set those errors as each
  vendor's firmware does;
* ``position`` mode: ``clip(kp·(setpoint − q) − kd·q̇, ±limit)`` with ``kp``, ``kd`` from the
  gain registers (:mod:`jointlab.hardware.servo.gains`), the setpoint following the
  vendor's trapezoidal profile to Goal Position (Profile Velocity/Acceleration on Dynamixel,
  Goal Speed/Acceleration on Feetech; :mod:`jointlab.hardware.servo_emulator.profile`);
* ``current`` mode: Goal Current times the model's torque per ampere;
* ``velocity`` mode (Feetech: wheel mode): the velocity trajectory ramps to Goal Velocity
  (Goal Speed) at the profile acceleration, and the e-Manual's velocity PI loop turns its
  error into a PWM duty;
* ``pwm`` mode: Goal PWM's duty (within PWM Limit); on Feetech STS (mode 2, "PWM open-loop
  speed regulation"), the duty in ‰ that Feetech's memory table puts in the running-time
  register (Goal Time, 44), with its direction bit;
* ``step`` mode (Feetech STS mode 3, "step servo mode"): each Goal Position write is a
  number of steps to move (sign-magnitude, bit 15), added to the servo's target, which may
  leave the turn (:meth:`ServoArray.step`);

where ``limit`` is the stall torque times the torque-limit register (on Feetech after an
overload, Protective Torque). The motor's back-EMF damping is the joint's
``dynamics.damping`` in the robot file, which the simulator applies (so a simulated and an
emulated arm feel the same). Present Position, Velocity, Load/Current, Voltage (the supply
model's), Temperature (the winding's) and Moving are written back into the memory before
every read.
"""

from __future__ import annotations

import numpy as np

from jointlab.hardware.emulator.settle import RestWatch
from jointlab.hardware.servo.control_table import Access, Register, ServoModel
from jointlab.hardware.servo.gains import GainScaling
from jointlab.hardware.servo_emulator.character import ServoCharacter
from jointlab.hardware.servo_emulator.law_inputs import (
    MODE_NAMES,
    PWM_DIRECTION,
    PWM_MAGNITUDE,
    RegisterInputs,
)
from jointlab.hardware.servo_emulator.memory import MemoryRules, eeprom_mask
from jointlab.hardware.servo_emulator.profile import (
    ramp_velocity,
    time_based_limits,
    trapezoid_step,
    velocity_loop,
)
from jointlab.hardware.servo_emulator.protection import (
    AMBIENT,
    PERIOD,
    SATURATED,
    Protection,
    Supply,
)
from jointlab.hardware.servo_emulator.step_mode import StepMode
from jointlab.interface import NJointAction
from jointlab.robots.description import RobotDescription

__all__ = ["ServoArray"]


class ServoArray(RegisterInputs, StepMode, MemoryRules):
    """The firmware of the servos of one emulated bus (see the module docstring).

    Args:
        sim: The ``SimRobot`` whose joints the servos drive (``dt`` = one firmware tick).
        models: The model of each joint's servo, in joint order.
        ids: The servo ids, in joint order.
        offsets: Motor ticks at joint zero of each servo as *assembled* (defaults to the
            robot file's transmission offsets; a calibration has to find these).
        modes: Operating Mode register value of each servo as set up (default: the table's
            initial value). Set-up servos also answer without a return delay.
        baud: The bus's line rate, bit/s: each servo's Baud Rate register starts at its
            value for it (default: the table's initial value).
        supply: The bus's power supply (default: each servo's rated voltage, 0.05 Ω).
        ambient: The air around the servos, °C (default: :data:`.protection.AMBIENT`).
    """

    def __init__(
        self,
        sim: object,
        models: list[ServoModel],
        ids: list[int],
        offsets: np.ndarray | None = None,
        modes: list[int] | None = None,
        baud: int | None = None,
        supply: Supply | None = None,
        ambient: float = AMBIENT,
    ) -> None:
        self.sim = sim
        description: RobotDescription = sim.description  # type: ignore[attr-defined]
        self.description = description
        self.models = models
        self.ids = np.array(ids, dtype=np.int64)
        self.index = {int(i): k for k, i in enumerate(ids)}
        self.n = len(ids)
        size = max(m.table.size for m in models)
        self.memory = np.zeros((self.n, size), dtype=np.uint8)
        transmissions = description.transmissions
        if offsets is not None:
            transmissions = transmissions.with_offsets(np.asarray(offsets, dtype=np.float64))
        self.transmissions = transmissions
        self.dt = float(sim.dt)  # type: ignore[attr-defined]
        self.stall = np.array([m.stall_torque for m in models])
        self.torque_per_amp = np.array([m.torque_per_amp for m in models])
        self.scaling = GainScaling.for_models(models)
        #: The robot file's identified stiffness, backlash and delay of each servo.
        self.character = ServoCharacter.of(description, transmissions.scale, self.dt)
        self.faults = np.zeros(self.n, dtype=np.int64)
        #: Heat, supply voltage and the protection rules' timers (see :mod:`.protection`).
        self.protection = Protection(models, self.dt * PERIOD, supply, ambient)
        self.tick_count = 0
        self.setpoint = np.zeros(self.n)
        #: Velocity trajectory (ticks/s) of the profile, and the velocity loop's integral.
        self.trajectory_velocity = np.zeros(self.n)
        self.velocity_integral = np.zeros(self.n)
        #: PWM duty (fraction of full scale) each servo drove in the last tick.
        self.duty = np.zeros(self.n)
        #: Step mode: each servo's target, ticks in its unwrapped frame (NaN: none yet).
        self.step_target = np.full(self.n, np.nan)
        #: Goal and length (ticks) of each servo's current move, for time-based profiles.
        self._move_goal = np.full(self.n, np.nan)
        self._move_length = np.zeros(self.n)
        self._pwm_full = np.array([float(m.pwm_full_scale) for m in models])
        self._zeros = np.zeros(self.n)
        self._nan = np.full(self.n, np.nan)
        self._registers: dict[str, Register] = {}
        self._refreshed = -1
        self._inputs: dict[str, np.ndarray] | None = None
        self._mode_values = {
            name: np.array([m.modes.get(name, m.other_modes.get(name, -1)) for m in models])
            for name in MODE_NAMES
        }
        self._feetech = np.array([m.vendor == "feetech" for m in models])
        self._resolution = np.array([float(m.resolution) for m in models])
        self.setup = modes
        self.baud = baud
        #: Let a resting arm sleep between writes (see :meth:`tick`); off by default (exact).
        self.sleep = False
        #: Whether the arm has been at rest with nothing written (see :meth:`tick`).
        self.rest = RestWatch()
        #: Servo index -> its saved memory image (the EEPROM area is what survives a reboot).
        self._eeprom: dict[int, np.ndarray] = {}
        for k in range(self.n):
            self.power_up(k)

    # ------------------------------------------------------------------ memory
    def register(self, name: str) -> Register:
        """The register ``name``, checked to sit at one address on every model of the bus."""
        cached = self._registers.get(name)
        if cached is None:
            found = {
                (m.table[name].address, m.table[name].size, m.table[name].encoding)
                for m in self.models
                if name in m.table
            }
            if len(found) != 1:
                raise KeyError(f"register {name!r} differs between the servos' models or is absent")
            cached = next(m.table[name] for m in self.models if name in m.table)
            self._registers[name] = cached
        return cached

    def has(self, name: str) -> np.ndarray:
        """Mask of the servos whose model has register ``name``."""
        return np.array([name in m.table for m in self.models])

    def get(self, name: str) -> np.ndarray:
        """Raw integer values of register ``name`` of every servo, shape ``(n,)``."""
        register = self.register(name)
        raw = self.memory[:, register.address : register.address + register.size]
        return register.decode(raw)

    def set(self, name: str, values: np.ndarray, mask: np.ndarray | None = None) -> None:
        """Store raw integers ``values`` (shape ``(n,)``) in register ``name`` (where ``mask``)."""
        register = self.register(name)
        low, high = register.raw_range
        raw = register.encode(np.clip(np.asarray(values), low, high))
        rows = slice(None) if mask is None else mask
        self.memory[rows, register.address : register.address + register.size] = (
            raw if mask is None else raw[mask]
        )
        if register.access is not Access.READ:
            self.changed()

    def power_up(self, k: int, *, bus_baud: bool = True) -> None:
        """Servo ``k`` as after power-on or a reboot: initial values, its id, goal = present.

        ``bus_baud``: a servo without saved EEPROM starts at the bus's rate (as set up);
        False after a factory reset, which leaves it at the table's factory rate.
        """
        model = self.models[k]
        self.memory[k, :] = 0
        saved = self._eeprom.get(k)
        if saved is None:
            self.memory[k, : model.table.size] = model.table.initial_memory()
            number = model.table["model_number"]
            self.memory[k, number.address : number.address + number.size] = number.encode(
                np.array([model.model_number])
            )[0]
            id_register = model.table["id"]
            self.memory[k, id_register.address] = int(self.ids[k])
            baud = None if self.baud is None or not bus_baud else model.baud_value(self.baud)
            if baud is not None:
                self.memory[k, model.table["baud_rate"].address] = baud
            if self.setup is not None:  # the servo was set up before this session
                self.memory[k, model.table["operating_mode"].address] = self.setup[k]
                self.memory[k, model.table["return_delay_time"].address] = 0
            self._eeprom[k] = self.memory[k, : model.table.size].copy()
        else:  # RAM to its power-up values, the EEPROM area as last saved
            self.memory[k, : model.table.size] = model.table.initial_memory()
            mask = eeprom_mask(model)
            self.memory[k, : model.table.size][mask] = saved[mask]
        self._goals_at_their_limits(k)
        self.faults[k] = 0
        self.protection.reset(k)
        self._refreshed = -1
        self.refresh()
        present = self.get("present_position")
        mask = np.arange(self.n) == k
        self.set("goal_position", present, mask)
        self.setpoint[k] = present[k]
        self.character.reset(k, float(present[k]))
        self.trajectory_velocity[k] = self.velocity_integral[k] = self.duty[k] = 0.0
        self.step_target[k] = np.nan
        if self.in_step_mode(k):
            self.hold_steps(k)

    def _goals_at_their_limits(self, k: int) -> None:
        """Servo ``k``'s Goal Current and Goal PWM power up at its Current and PWM Limits.

        As a Dynamixel X does: a servo in current-based position mode (5) whose Goal Current
        was never written drives up to its Current Limit (LeRobot's Koch follower puts its
        gripper in mode 5 and never writes Goal Current; a gripper at 0 A would be limp).
        """
        model = self.models[k]
        for goal, limit in (("goal_current", "current_limit"), ("goal_pwm", "pwm_limit")):
            if goal in model.table and limit in model.table:
                g, lim = model.table[goal], model.table[limit]
                value = lim.decode(self.memory[k : k + 1, lim.address : lim.address + lim.size])
                self.memory[k, g.address : g.address + g.size] = g.encode(value)[0]

    def invalidate(self) -> None:
        """The joints moved outside a tick (a reset): refresh on the next read."""
        self._wake()
        self._refreshed = -1
        self.refresh()

    # ------------------------------------------------------------------ state -> registers
    def refresh(self) -> None:
        """Write the present values (position, velocity, load/current ...) into the memory.

        Once per firmware tick at most: the joints do not move between ticks.
        """
        if self._refreshed == self.tick_count:
            self.set("hardware_error_status", self.faults)
            return
        self._refreshed = self.tick_count
        state = self.sim.read()  # type: ignore[attr-defined]
        t = self.transmissions
        inputs = self._decoded()
        direction = inputs["direction"]
        ticks = np.rint(self._reported(t.to_motor(state.position), inputs))
        speed = direction * t.velocity_to_motor(state.velocity)  # ticks/s
        horn_torque = direction * t.torque_to_motor(state.torque)
        self.set("present_position", ticks)
        velocity_unit = self.register("present_velocity").unit * self.models[0].ticks_per_radian
        self.set("present_velocity", np.rint(speed / velocity_unit))
        for name in ("present_load", "present_current"):
            if not self.has(name).any():
                continue
            mask = self.has(name)
            register = self.register(name)
            if name == "present_load":
                value = horn_torque / self.stall / register.unit
            else:
                value = horn_torque / self.torque_per_amp / register.unit
            self.set(name, np.rint(value), mask)
        protection = self.protection
        self.set("present_input_voltage", np.rint(protection.voltage / 0.1))
        self.set("present_temperature", np.floor(protection.temperature))
        threshold = 10 * self.register("present_velocity").unit  # 10 counts, as the default
        moving = np.abs(speed / self.models[0].ticks_per_radian) > threshold
        self.set("moving", moving.astype(np.int64))
        if self.has("velocity_trajectory").all():
            trajectory = self.trajectory_velocity / self._velocity_unit()
            self.set("velocity_trajectory", np.rint(trajectory))
            self.set("position_trajectory", np.rint(self.setpoint))
        if self.has("present_pwm").all():
            self.set("present_pwm", np.rint(self.duty * self._pwm_full))
        self.set("hardware_error_status", self.faults)

    # ------------------------------------------------------------------ the law
    def _torque(self) -> np.ndarray:
        """Horn torques of this tick from the registers and the joint state, shape ``(n,)``."""
        state = self.sim.read()  # type: ignore[attr-defined]
        t = self.transmissions
        inputs = self._decoded()
        direction = inputs["direction"]
        ticks = t.to_motor(state.position)
        q = self._reported(ticks, inputs)  # ticks, as Present Position
        step = inputs["step_mode"]
        if step.any():  # step mode: the target may leave the turn; the loop counts turns
            q = np.where(step, direction * ticks - inputs["homing"], q)
        qd = direction * t.velocity_to_motor(state.velocity)  # ticks/s
        enabled = (inputs["torque_enable"] == 1) & ((self.faults & inputs["cut_mask"]) == 0)
        mode = inputs["operating_mode"]
        limit = inputs["limit"]
        tau = np.zeros(self.n)
        self.trajectory_velocity = np.where(enabled, self.trajectory_velocity, 0.0)
        position = enabled & inputs["position_mode"]
        goal = self.character.delayed(inputs["goal"])  # (every tick: the line keeps time)
        if position.any():
            fresh = goal != self._move_goal  # a new move: its length sets a timed profile
            if fresh.any():
                self._move_length = np.where(fresh, np.abs(goal - self.setpoint), self._move_length)
                self._move_goal = goal.copy()
            ramping = position & ((goal != self.setpoint) | (self.trajectory_velocity != 0))
            if ramping.any():  # (a servo holding its goal has no profile to follow)
                speed = inputs["profile_speed"]
                v_max, a_max = np.where(speed > 0, speed, np.inf), inputs["profile_accel"]
                timed = inputs["time_based"]
                if timed.any():
                    v_timed, a_timed = time_based_limits(
                        self._move_length,
                        inputs["profile_velocity_raw"],
                        inputs["profile_acceleration_raw"],
                    )
                    v_max = np.where(timed, v_timed, v_max)
                    a_max = np.where(timed, a_timed, a_max)
                setpoint, trajectory = trapezoid_step(
                    self.setpoint, self.trajectory_velocity, goal, v_max, a_max, self.dt
                )
                self.setpoint = np.where(position, setpoint, goal)
                self.trajectory_velocity = np.where(position, trajectory, self.trajectory_velocity)
            else:
                self.setpoint = np.where(position, self.setpoint, goal)
            kp, kd = self.scaling.gains(inputs["position_p_gain"], inputs["position_d_gain"])
            error = self.character.dead_band(self.setpoint - q)
            tau = np.where(position, self.character.stiffness * kp * error - kd * qd, tau)
            limit = np.where(enabled & inputs["current_capped"], inputs["current_cap"], limit)
        current = enabled & self._mode_mask(mode, "current")
        if current.any():
            amps = inputs["goal_current"] * self.register("goal_current").unit
            tau = np.where(current, amps * self.torque_per_amp, tau)
        velocity = enabled & self._mode_mask(mode, "velocity")
        if velocity.any():
            unit = self._velocity_unit()  # ticks/s per count of Goal Velocity
            goal_v = inputs["goal_velocity"] * unit
            ramped = ramp_velocity(
                self.trajectory_velocity, goal_v, inputs["profile_accel"], self.dt
            )
            self.trajectory_velocity = np.where(velocity, ramped, self.trajectory_velocity)
            pwm_out, integral = velocity_loop(
                (self.trajectory_velocity - qd) / unit,
                self.velocity_integral,
                inputs["velocity_p_gain"],
                inputs["velocity_i_gain"],
                self._pwm_full,
            )
            self.velocity_integral = np.where(velocity, integral, 0.0)
            tau = np.where(velocity, pwm_out / self._pwm_full * self.stall, tau)
        else:
            self.velocity_integral[:] = 0.0
        pwm = enabled & self._mode_mask(mode, "pwm")
        if pwm.any() and "goal_pwm" in self.models[0].table:
            duty = inputs["goal_pwm"] * self.register("goal_pwm").unit
            duty = np.clip(duty, -inputs["pwm_cap"], inputs["pwm_cap"])
            tau = np.where(pwm, duty * self.stall, tau)
        elif pwm.any() and "goal_time" in inputs:  # Feetech mode 2: Goal Time is the duty
            raw = inputs["goal_time"].astype(np.int64)
            duty = np.minimum(raw & PWM_MAGNITUDE, 1000) * 1e-3
            duty = np.where(raw & PWM_DIRECTION, -duty, duty)
            tau = np.where(pwm, duty * self.stall, tau)
        if self.protection.protecting.any():  # Feetech after an overload: Protective Torque
            limit = np.minimum(
                limit, self.protection.output_cap(self.stall, inputs["protective_torque"])
            )
        demand = tau
        tau = np.clip(tau, -limit, limit)
        self.duty = np.where(enabled, tau / self.stall, 0.0)
        if self.tick_count % PERIOD == 0:  # the rules sample every PERIOD ticks
            at_max = enabled & (np.abs(tau) >= SATURATED * inputs["limit"]) & (demand != 0)
            self._protect(tau, at_max, inputs)
        return direction * tau

    def _protect(self, tau: np.ndarray, at_max: np.ndarray, inputs: dict[str, np.ndarray]) -> None:
        """The protection rules after this tick's output: errors set, torque cut where due."""
        bits = self.protection.step(tau, at_max, inputs, self.stall)
        if bits is None:
            return
        new = bits & ~self.faults
        if not new.any():
            return
        self.faults |= bits
        cut = (new & inputs["cut_mask"]) != 0
        if cut.any():  # Shutdown / Unloading Condition: Torque Enable cleared, output 0
            self.set("torque_enable", np.zeros(self.n), cut)
        self._wake()

    def _reported(self, ticks: np.ndarray, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """Present Position (ticks, unrounded) of the motors at ``ticks`` as assembled.

        Feetech STS: ``(actual − Homing_Offset)`` wrapped to one turn. Dynamixel:
        ``actual + Homing_Offset`` with the actual position in one turn, except in extended
        position mode, which counts turns; Drive Mode bit 0 reverses the direction.
        """
        actual = inputs["direction"] * ticks
        homing = inputs["homing"]
        resolution = self._resolution
        wrapped = np.mod(actual - homing, resolution)
        dynamixel = np.where(inputs["multi_turn"], actual, np.mod(actual, resolution)) + homing
        return np.where(self._feetech, wrapped, dynamixel)

    def changed(self) -> None:
        """The host wrote registers: decode the law's inputs again at the next tick."""
        self._inputs = None
        self._wake()

    @property
    def asleep(self) -> bool:
        """True while ticks step no physics (see :meth:`tick`)."""
        return self.rest.at_rest

    def _wake(self) -> None:
        self.rest.wake()

    def saved_memory(self, k: int) -> np.ndarray:
        """Servo ``k``'s saved image, whose EEPROM area a power cycle restores (a view)."""
        return self._eeprom[k]

    def rename(self, k: int, servo_id: int) -> None:
        """Servo ``k`` answers to ``servo_id`` from now on (its ID register was written)."""
        del self.index[int(self.ids[k])]
        self.ids[k] = servo_id
        self.index[int(servo_id)] = k

    def tick(self) -> None:
        """One firmware tick: the law from the registers, one physics step.

        With ``sleep`` on (real-time emulators), an arm at rest by the emulators' one
        criterion (:class:`~jointlab.hardware.emulator.settle.RestWatch`: it moved less than
        ``REST_DISTANCE`` in ``REST_TICKS`` ticks) with nothing written to any servo, and no
        setpoint still ramping, is asleep, as a physics
        engine lets resting bodies sleep: its ticks only count time (no physics step, which
        would not move it) until a write, a reboot, a fault or a hand moving it wakes it.
        """
        if self.asleep:
            self.tick_count += 1
            return
        setpoint = self.setpoint
        horn = self._torque()
        joint = self.transmissions.torque_to_joint(horn)
        self.sim.apply(  # type: ignore[attr-defined]
            NJointAction.from_validated(
                joint, self._nan.copy(), self._nan.copy(), self._nan.copy(), self._nan.copy()
            )
        )
        self.sim.step()  # type: ignore[attr-defined]
        self.tick_count += 1
        if self.sleep:
            q = self.sim.read().position  # type: ignore[attr-defined]
            moved = not np.array_equal(setpoint, self.setpoint)
            self.rest.observe(q, disturbed=moved or self.protection.busy)

    # ------------------------------------------------------------------ faults
    def inject(self, servo_id: int, bits: int) -> None:
        """Set hardware error ``bits`` on servo ``servo_id``; it shuts its torque off.

        (A test's shortcut; the protection rules set the same bits from the physics.)
        """
        k = self.index[int(servo_id)]
        self.faults[k] |= int(bits)
        self.changed()
        mask = np.arange(self.n) == k
        self.set("torque_enable", np.zeros(self.n), mask)

    def reboot(self, servo_id: int) -> None:
        """A reboot: the servo powers up again (errors cleared, torque off, EEPROM kept)."""
        self.power_up(self.index[int(servo_id)])

    def factory_reset(self, servo_id: int, new_id: int | None = None) -> None:
        """A factory reset: the EEPROM back to the table's initial values, then a reboot.

        Args:
            servo_id: The servo to reset.
            new_id: Its id afterwards (None: it keeps its id).
        """
        k = self.index[int(servo_id)]
        self._eeprom.pop(k, None)
        if new_id is not None:
            self.rename(k, int(new_id))
        self.power_up(k, bus_baud=False)
