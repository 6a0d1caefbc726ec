"""Gain registers ↔ SI gains: the documented scaling of a servo's position loop.

A servo's position loop outputs a PWM duty from its gain registers; the motor turns the duty
into torque, about ``duty × stall torque`` at stand-still. JointLab models the loop as::

    duty = (P / p_div · e + D / d_div · ė) / pwm_full_scale        e in ticks, ė in ticks/ms
    horn torque = duty × stall torque

* Dynamixel X-series (e-Manual, "Position PID Gain"): ``KPP = P / 128``, ``KPD = D / 16``
  on the pulse error, PWM full scale 885, so ``p_div = 128`` and ``d_div = 16``.
* Feetech STS: ``p_div = 4``, PWM full scale 1000, as Feetech's own actuator model states
  its calibration (``ftservo/ftservo-bam``, ``bam/feetech/actuator.py``: with P = 1, 4000
  ticks of error give 100 % PWM, an error gain of 0.163 per rad), which Rhoban's oscilloscope
  measurement (0.166) and K-Scale's 12 V step tests (0.165) agree with. The D scaling
  (``d_div = 4``) is JointLab's model: no source gives it.

The NJointAction gains of a joint (N·m/rad, N·m·s/rad, joint side) are the horn gains (N·m per
tick, N·m per tick/s) times ``reduction² · ticks_per_rev / 2π`` of its transmission; the backend
writes the nearest register values and the emulated servos use exactly these formulas, so the
emulated arm behaves as the simulated one with the same gains up to the rounding of the
registers. On a real servo the scaling is approximate (the duty-to-torque map is not linear
near stall or at speed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from jointlab.hardware.servo.control_table import ServoModel

__all__ = ["DIVISORS", "GainScaling"]

#: Vendor -> (p_div, d_div, velocity p_div).
DIVISORS = {"dynamixel": (128.0, 16.0, 128.0), "feetech": (4.0, 4.0, 4.0)}


@dataclass(frozen=True)
class GainScaling:
    """Per-servo factors from gain registers to horn gains (arrays of shape ``(n,)``)."""

    #: N·m per tick of error per P count.
    kp_per_count: np.ndarray
    #: N·m per tick/s of speed per D count.
    kd_per_count: np.ndarray
    #: N·m per tick/s of speed error per velocity-P count.
    kv_per_count: np.ndarray

    @classmethod
    def for_models(cls, models: Sequence[ServoModel]) -> GainScaling:
        """The factors of ``models`` (one per servo)."""
        p, d, v = (np.array([DIVISORS[m.vendor][i] for m in models]) for i in range(3))
        torque = np.array([m.stall_torque / m.pwm_full_scale for m in models])
        # ė per millisecond: D / d_div counts per (tick/ms) = D / d_div * 1e-3 per (tick/s).
        return cls(
            kp_per_count=torque / p, kd_per_count=torque / d * 1e-3, kv_per_count=torque / v * 1e-3
        )

    def gains(self, p: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Horn gains (N·m/tick, N·m·s/tick) of P and D register values."""
        return p * self.kp_per_count, d * self.kd_per_count

    def velocity_gain(self, p: np.ndarray) -> np.ndarray:
        """Horn velocity gain (N·m·s/tick) of the velocity-P register values."""
        return p * self.kv_per_count

    def registers(
        self, kp: np.ndarray, kd: np.ndarray, ticks_per_radian: np.ndarray, torque_ratio: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Nearest P and D register values (floats, unrounded) for joint gains ``kp``, ``kd``.

        Args:
            kp: Joint P gains, N·m/rad, shape ``(n,)``.
            kd: Joint D gains, N·m·s/rad.
            ticks_per_radian: Signed ticks per joint radian of each transmission.
            torque_ratio: Joint torque per horn torque of each transmission.
        """
        factor = np.abs(ticks_per_radian * torque_ratio)
        return kp / factor / self.kp_per_count, kd / factor / self.kd_per_count

    def joint_gains(
        self, p: np.ndarray, d: np.ndarray, ticks_per_radian: np.ndarray, torque_ratio: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Joint gains (N·m/rad, N·m·s/rad) of P and D register values."""
        factor = np.abs(ticks_per_radian * torque_ratio)
        kp, kd = self.gains(p, d)
        return kp * factor, kd * factor
