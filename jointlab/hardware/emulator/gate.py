"""What the device firmware checks before it accepts a frame: refusals and their order.

:class:`Refusal` is how a handler says "answer this frame with NACK ``reason``".
:class:`MotionGate` holds power, arming and brakes and refuses motion in the order every
JointLab backend uses (``unpowered`` > ``disarmed`` > ``braked``, docs/protocol.md
section 8). The value checks (:func:`check_joint`, :func:`check_vector`, ...) come first in
a handler, as section 8 orders them: BAD_LENGTH, UNKNOWN_JOINT, INVALID_VALUE, then the
gate, then OUT_OF_LIMITS.
"""

from __future__ import annotations

import numpy as np

from jointlab.hardware.protocol import NackReason

__all__ = [
    "MotionGate",
    "Refusal",
    "check_finite",
    "check_joint",
    "check_vector",
    "check_within",
]


class Refusal(Exception):
    """A check failed: the frame is answered with NACK ``reason`` (internal to the device)."""

    def __init__(self, reason: NackReason, detail: int = -1) -> None:
        super().__init__(reason.text)
        self.reason = reason
        self.detail = detail


class MotionGate:
    """Power, arming and brakes of the device, and the motion check built on them.

    Args:
        has_brakes: Whether any actuator has brakes (without, BRAKES 1 refuses nothing).
    """

    def __init__(self, has_brakes: bool) -> None:
        self.has_brakes = bool(has_brakes)
        self.power_up()

    def power_up(self) -> None:
        """The power-up state: powered, disarmed, brakes released."""
        self.powered, self.armed, self.brakes_requested = True, False, False

    @property
    def braked(self) -> bool:
        """True when motion commands are refused with BRAKED."""
        return self.brakes_requested and self.has_brakes

    def check(self) -> None:
        """Refuse motion: UNPOWERED, then DISARMED, then BRAKED."""
        if not self.powered:
            raise Refusal(NackReason.UNPOWERED)
        if not self.armed:
            raise Refusal(NackReason.DISARMED)
        if self.braked:
            raise Refusal(NackReason.BRAKED)


def check_joint(joint: int, dof: int, allow_all: bool = False) -> None:
    """UNKNOWN_JOINT unless ``0 <= joint < dof`` (or ``-1`` where every joint is allowed)."""
    if not (0 <= joint < dof or (allow_all and joint == -1)):
        raise Refusal(NackReason.UNKNOWN_JOINT, joint)


def check_vector(values: np.ndarray, dof: int) -> np.ndarray:
    """BAD_LENGTH unless ``dof`` values, INVALID_VALUE at the first non-finite one; float64."""
    if values.shape[0] != dof:
        raise Refusal(NackReason.BAD_LENGTH, dof)
    bad = ~np.isfinite(values)
    if bad.any():
        raise Refusal(NackReason.INVALID_VALUE, int(np.flatnonzero(bad)[0]))
    return values.astype(np.float64)


def check_finite(value: float, joint: int) -> float:
    """INVALID_VALUE (detail: the joint) unless ``value`` is finite."""
    if not np.isfinite(value):
        raise Refusal(NackReason.INVALID_VALUE, joint)
    return float(value)


def check_within(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
    """OUT_OF_LIMITS at the first joint outside ``[low, high]``, shapes ``(dof,)``."""
    outside = (values < low) | (values > high)
    if outside.any():
        raise Refusal(NackReason.OUT_OF_LIMITS, int(np.flatnonzero(outside)[0]))
