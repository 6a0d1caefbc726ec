"""Where a proportional-only servo loop holds a gravity-loaded joint: its analytic droop.

A servo's position loop with proportional gain only (I = 0, as LeRobot configures the SO-101
and Koch followers) settles where its P term balances the joint's load. At rest the loop's
joint torque is ``k · (goal − q)`` with ``k`` the loop stiffness of the P register
(:mod:`jointlab.hardware.servo.gains`, N·m/rad on the joint side), and the arm is static when
it equals the gravity compensation torque ``g(q)``, so each joint settles at::

    q − goal = −g(q) / k            (rad; the droop, signed)

The joint's static friction (``dynamics.static_friction``, N·m) holds it anywhere within
``±friction / k`` of that point: the band a measured droop may fall in. These figures are the
ceiling any emulator faithful to the firmware (and the real arm) reaches with such gains.

The servo's identified character (``bus.servos.<joint>``: :mod:`jointlab.robots.servo_character`)
enters as the emulated firmware applies it: ``k`` is scaled by its ``stiffness`` factor, and
its ``backlash`` is a dead band the loop does not push inside, so a joint that gravity pushes
against one flank holds ``backlash / 2`` further down; where gravity is within the friction,
the joint may rest anywhere in ``±(friction / k + backlash / 2)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from jointlab.hardware.servo.control_table import ServoModel
from jointlab.hardware.servo.gains import GainScaling
from jointlab.robots.description import RobotDescription
from jointlab.robots.dynamics import DynamicsModel

__all__ = ["HoldingDroop", "holding_droop"]


@dataclass(frozen=True)
class HoldingDroop:
    """The analytic droop of each joint at one pose (arrays of shape ``(dof,)``).

    Attributes:
        stiffness: Loop stiffness of each joint's P register, N·m/rad (joint side).
        gravity: Gravity compensation torque at the pose, N·m.
        droop: ``q − goal`` where the P term balances gravity, rad (``−gravity / stiffness``,
            half the backlash further where gravity outweighs the friction).
        band: Half-width of the band about ``droop`` the joint may rest in, rad: the
            static friction's, and where gravity does not outweigh it, half the backlash too.
    """

    stiffness: np.ndarray
    gravity: np.ndarray
    droop: np.ndarray
    band: np.ndarray


def holding_droop(
    description: RobotDescription,
    models: Sequence[ServoModel],
    p_registers: Sequence[float],
    q: Sequence[float],
) -> HoldingDroop:
    """The droop of each joint held at pose ``q`` by P-only loops with ``p_registers``.

    Args:
        description: The robot (masses, transmissions, static friction, the servos'
            character in its ``bus`` section).
        models: The servo model of each joint, in joint order.
        p_registers: The raw Position P Gain (Dynamixel) / P Coefficient (Feetech) of each.
        q: The pose the arm holds (as settled), joint rad, shape ``(dof,)``.

    Returns:
        The stiffness, gravity torque, droop and friction band of every joint.
    """
    p = np.asarray(p_registers, dtype=np.float64)
    t = description.transmissions
    stiffness, _ = GainScaling.for_models(list(models)).joint_gains(
        p, np.zeros_like(p), t.scale, t.torque_ratio
    )
    servos = description.bus.servos if description.bus is not None else ()
    factor = np.array([s.stiffness for s in servos]) if servos else 1.0
    half_play = 0.5 * np.array([s.backlash for s in servos]) if servos else 0.0
    stiffness = stiffness * factor
    gravity = np.asarray(DynamicsModel(description).gravity_torque(np.asarray(q, float)))
    friction = np.asarray(description.static_friction, dtype=np.float64)
    against_a_flank = np.abs(gravity) > friction
    with np.errstate(divide="ignore", invalid="ignore"):
        droop = np.where(stiffness > 0, -gravity / stiffness, np.inf)
        band = np.where(stiffness > 0, friction / stiffness, np.inf)
    droop = droop - np.where(against_a_flank, np.sign(gravity) * half_play, 0.0)
    band = band + np.where(against_a_flank, 0.0, half_play)
    return HoldingDroop(stiffness=stiffness, gravity=gravity, droop=droop, band=band)
