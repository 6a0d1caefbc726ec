"""NJointAction -> servo goals, per the capabilities of each servo model.

* A joint whose servo runs in ``position`` mode gets Goal Position from the action's target
  and its P/D gain registers from the action's gains (the description's defaults where NaN),
  through :mod:`~jointlab.hardware.servo.gains`. A target velocity ``v`` enters as a lead of
  the goal, ``p + kd/kp · v``, which keeps the PD law ``kp(p − q) + kd(v − q̇)`` exact. Such a
  servo cannot add a torque: a non-zero torque, or a joint without a target in a non-zero
  action, is refused with reason ``unsupported_by_device`` (never dropped).
* A joint whose servo runs in ``current`` mode runs the whole NJointAction law on the host at
  the bus rate, from the last state read, and gets Goal Current = torque / torque per ampere.
* The zero action holds the present positions on position servos and sends zero current.

Targets outside the calibrated range are refused (reason ``out_of_limits``), gains that do not
fit the registers too (reason ``out_of_range``), each message naming the joint and servo id.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.errors import CommandRefused
from jointlab.hardware.servo.control_table import ServoModel
from jointlab.hardware.servo.gains import GainScaling
from jointlab.hardware.servo_host.driver import ServoDriver
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.description import RobotDescription
from jointlab.robots.transmission import TransmissionArray

__all__ = ["Goals", "ServoCommands"]


@dataclass(frozen=True)
class Goals:
    """What one action asks of the servos; arrays of shape ``(n,)``."""

    #: True for the zero action: hold positions, zero current.
    hold: bool
    #: Goal Position in ticks (position joints; NaN elsewhere).
    ticks: np.ndarray
    #: P and D gain register values (position joints).
    p_gain: np.ndarray
    d_gain: np.ndarray
    #: The host law of current joints: torque, kp, kd, target, target velocity (joint side).
    torque: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    target: np.ndarray
    velocity: np.ndarray


class ServoCommands:
    """Turns actions into :class:`Goals` for one robot (see the module docstring).

    Args:
        description: The robot.
        models: Each joint's servo model.
        current: Mask of the joints driven in ``current`` mode.
        transmissions: The (calibrated) transmissions.
        tick_range: Calibrated ``(min_ticks, max_ticks)``, or None for the encoder's range.
    """

    def __init__(
        self,
        description: RobotDescription,
        models: list[ServoModel],
        current: np.ndarray,
        transmissions: TransmissionArray,
        tick_range: tuple[np.ndarray, np.ndarray] | None,
    ) -> None:
        self.description = description
        self.models = models
        self.current = np.asarray(current, dtype=bool)
        self.position = ~self.current
        self.transmissions = transmissions
        resolution = np.array([m.resolution for m in models], dtype=np.float64)
        self.tick_range = tick_range or (np.zeros_like(resolution), resolution - 1)
        self.scaling = GainScaling.for_models(models)
        self.torque_per_amp = np.array([m.torque_per_amp for m in models])
        self.gain_max = np.array([m.table["position_p_gain"].raw_range[1] for m in models])
        self.ids = [s.id for s in description.bus.servos] if description.bus else []
        self.effort = np.asarray(description.effort_limit)
        #: Half the backlash of each servo (the robot file's character), joint rad.
        servos = description.bus.servos if description.bus else ()
        self.half_play = np.array([0.5 * s.backlash for s in servos]) if servos else 0.0

    def _where(self, i: int) -> str:
        model = self.models[i]
        return f"joint {self.description.joint_names[i]!r} (servo id {self.ids[i]}, {model.name})"

    def fold_torque(self, action: NJointAction) -> NJointAction:
        """``action`` with the torque of position-only servos folded into their targets.

        A position servo takes no torque; its feed-forward ``τ`` goes in as a target offset,
        ``kp·(p + τ/kp − q) = kp·(p − q) + τ`` (default gains where the action's are NaN),
        within the joint's range; a servo with backlash (``bus.servos.<joint>.backlash``) gets
        half its play more, towards ``τ``, since its loop pushes only beyond it. Joints with
        current control keep their torque.
        """
        d = self.description
        resolved = action.resolve(d.default_kp, d.default_kd)
        fold = self.position & resolved.pd_mask & (resolved.kp > 0)
        if not fold.any():
            return action
        shifted = (
            resolved.position
            + resolved.torque / np.where(fold, resolved.kp, 1.0)
            + np.sign(resolved.torque) * self.half_play
        )
        target = np.where(fold, np.clip(shifted, d.lower, d.upper), action.position)
        torque = np.where(fold, 0.0, action.torque)
        return NJointAction(torque, target, action.position_kp, action.position_kd, action.velocity)

    def plan(self, action: NJointAction) -> Goals:
        """The goals of ``action`` (its length already checked).

        Raises:
            CommandRefused: see the module docstring.
        """
        n = self.description.dof
        nan = np.full(n, np.nan)
        if action.is_zero:
            zeros = np.zeros(n)
            return Goals(True, nan, zeros, zeros, zeros, zeros, zeros, zeros, zeros)
        resolved = action.resolve(self.description.default_kp, self.description.default_kd)
        position = self.position
        torque_here = position & (resolved.torque != 0)
        if torque_here.any():
            i = int(np.flatnonzero(torque_here)[0])
            raise CommandRefused(
                f"{self._where(i)} has no current control: it cannot add the torque "
                f"{resolved.torque[i]:.4g} N·m of this action; send a Position action (zero "
                "torque) for it, or drive it with a servo that has current control",
                reason="unsupported_by_device",
            )
        untargeted = position & ~resolved.pd_mask
        if untargeted.any():
            i = int(np.flatnonzero(untargeted)[0])
            raise CommandRefused(
                f"{self._where(i)} runs in position mode and needs a target position (NaN "
                "given); give every position joint a target, or send the zero action",
                reason="unsupported_by_device",
            )
        kp, kd = resolved.kp, resolved.kd
        lead = np.where(position & (kp > 0), kd / np.where(kp > 0, kp, 1.0) * resolved.velocity, 0)
        ticks = np.where(position, self.transmissions.to_motor(resolved.position + lead), np.nan)
        low, high = self.tick_range
        outside = position & ((ticks < low - 0.5) | (ticks > high + 0.5))
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            lo, hi = sorted(self.transmissions.to_joint(np.array([low, high]))[:, i])
            raise CommandRefused(
                f"target {resolved.position[i]:.4g} rad of {self._where(i)} lies outside its "
                f"calibrated range [{lo:.4g}, {hi:.4g}] rad (ticks {low[i]:.0f}..{high[i]:.0f}); "
                "command a position inside it, or recalibrate (jointlab calibrate) if the range "
                "is wrong",
                reason="out_of_limits",
            )
        p_raw, d_raw = self.scaling.registers(
            kp, kd, self.transmissions.scale, self.transmissions.torque_ratio
        )
        p_gain, d_gain = np.rint(p_raw), np.rint(d_raw)
        too_big = position & ((p_gain > self.gain_max) | (d_gain > self.gain_max))
        if too_big.any():
            i = int(np.flatnonzero(too_big)[0])
            raise CommandRefused(
                f"gains kp={kp[i]:.4g} N·m/rad, kd={kd[i]:.4g} N·m·s/rad of {self._where(i)} need "
                f"P={p_gain[i]:.0f}, D={d_gain[i]:.0f}, beyond its registers' {self.gain_max[i]}",
                reason="out_of_range",
            )
        current = self.current
        return Goals(
            hold=False,
            ticks=ticks,
            p_gain=np.where(position, p_gain, 0.0),
            d_gain=np.where(position, d_gain, 0.0),
            torque=np.where(current, resolved.torque, 0.0),
            kp=np.where(current, kp, 0.0),
            kd=np.where(current, kd, 0.0),
            target=np.where(current, resolved.position, 0.0),
            velocity=np.where(current, resolved.velocity, 0.0),
        )

    def law(self, goals: Goals, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Joint torques (N·m) of the current joints' host law at state ``q``, ``qd``."""
        tau = goals.torque + goals.kp * (goals.target - q) + goals.kd * (goals.velocity - qd)
        return np.where(self.current, np.clip(tau, -self.effort, self.effort), 0.0)

    def write(
        self, driver: ServoDriver, goals: Goals, state: ArrayState, gains_written: tuple
    ) -> tuple:
        """Write ``goals`` for one bus cycle at ``state``; return the gains now in the servos.

        Position servos get Goal Position (the present position for the zero action) and,
        when they changed, their gain registers; current servos get Goal Current from the
        host law. One Sync Write when every servo is a position servo, else one Bulk Write.
        """
        table, ids, position = self.models[0].table, self.ids, self.position
        ticks = self.goal_ticks(goals, state)
        if not goals.hold:
            gains = (goals.p_gain, goals.d_gain)
            if gains_written[0] is None or not (
                np.array_equal(gains[0], gains_written[0])
                and np.array_equal(gains[1], gains_written[1])
            ):
                subset = [i for i, p in zip(ids, position, strict=True) if p]
                driver.sync_write(table["position_p_gain"], subset, gains[0][position])
                driver.sync_write(table["position_d_gain"], subset, gains[1][position])
                gains_written = gains
        if not self.current.any():
            driver.sync_write(table["goal_position"], ids, ticks)
            return gains_written
        torque = (
            np.zeros(len(ids)) if goals.hold else self.law(goals, state.position, state.velocity)
        )
        amps = self.amps(torque)
        entries = []
        for k, (servo_id, model) in enumerate(zip(ids, self.models, strict=True)):
            if self.current[k]:
                register = model.table["goal_current"]
                limit = model.stall_current / register.unit
                value = int(np.clip(amps[k] / register.unit, -limit, limit))
                entries.append((servo_id, register, value))
            else:
                entries.append((servo_id, model.table["goal_position"], int(ticks[k])))
        driver.bulk_write(entries)
        return gains_written

    def goal_ticks(self, goals: Goals, state: ArrayState) -> np.ndarray:
        """The Goal Position values :meth:`write` sends for ``goals`` at ``state``, shape ``(n,)``.

        Whole ticks; NaN on the joints driven in ``current`` mode (they get Goal Current).
        """
        if goals.hold:
            ticks = np.rint(self.transmissions.to_motor(state.position))
        else:
            ticks = np.rint(goals.ticks)
        return np.where(self.position, ticks, np.nan)

    def amps(self, joint_torque: np.ndarray) -> np.ndarray:
        """Goal currents (A) that make ``joint_torque`` (N·m) at the joints."""
        horn = self.transmissions.torque_to_motor(joint_torque)
        return horn / self.torque_per_amp
