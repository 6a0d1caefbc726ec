"""Opt-in stall protection on the host: a joint pushing hard without getting there is stopped.

A servo's own overload rule trips late (a Feetech STS after 2 s above 80 % of its torque) or
never (a gripper squeezing an object at 70 % heats until its temperature limit). LeRobot's
owners burn gripper servos so (lerobot#4447, #1809, #1483). :class:`StallGuard` watches every
bus cycle, per joint: the current drawn (as a fraction of the servo's stall current), the
position error (goal − present) and how long both have stayed above their thresholds
(:class:`StallLimits`). When a joint stalls for that long, the robot turns every torque off
and raises a :class:`~jointlab.errors.DeviceFault` (reason ``"stall"``) that stays latched
until the robot is armed again. On by default for grippers (joints named ``*gripper*``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from jointlab.errors import ConfigurationError

__all__ = ["StallGuard", "StallLimits", "stall_limits"]


@dataclass(frozen=True)
class StallLimits:
    """When a joint counts as stalled.

    Attributes:
        current: Current drawn, as a fraction of the servo's stall current, at or above which
            the joint is pushing hard (0.6: 60 %).
        position_error: ``|goal − present|`` at or above which it has not got there, rad.
        seconds: How long both must hold before the guard trips, s.
    """

    current: float = 0.6
    position_error: float = math.radians(2.0)
    seconds: float = 1.0

    def __post_init__(self) -> None:
        for name, low, high in (
            ("current", 0.0, 1.0),
            ("position_error", 0.0, math.pi),
            ("seconds", 0.0, 60.0),
        ):
            value = getattr(self, name)
            if not (math.isfinite(value) and low < value <= high):
                raise ConfigurationError(
                    f"stall protection: {name} must be in ({low:g}, {high:g}], got {value!r}"
                )


def stall_limits(
    joints: list[str], setting: bool | dict[str, StallLimits] | None
) -> dict[int, StallLimits]:
    """Joint index -> its limits, from a robot's ``stall_protection`` argument.

    ``None``: every gripper (a joint whose name contains ``gripper``) with the default limits;
    ``True``: every joint; ``False``: none; a dict: those joints (by name) with those limits.

    Raises:
        ConfigurationError: a joint named in the dict is not the robot's.
    """
    if setting is None:
        return {j: StallLimits() for j, name in enumerate(joints) if "gripper" in name}
    if setting is True:
        return {j: StallLimits() for j in range(len(joints))}
    if setting is False:
        return {}
    unknown = sorted(set(setting) - set(joints))
    if unknown:
        raise ConfigurationError(
            f"stall protection names joints {unknown} the robot does not have; it has {joints}"
        )
    return {joints.index(name): limits for name, limits in setting.items()}


class StallGuard:
    """Per-joint stall timers, stepped once per bus cycle.

    Args:
        limits: Joint index -> limits (joints not named are not watched).
        dof: Number of joints.
        stall_current: Each joint's servo stall current, A.
        dt: Seconds per bus cycle.
    """

    def __init__(
        self, limits: dict[int, StallLimits], dof: int, stall_current: np.ndarray, dt: float
    ) -> None:
        self.watched = np.zeros(dof, dtype=bool)
        self.current = np.full(dof, np.inf)
        self.error = np.full(dof, np.inf)
        self.seconds = np.full(dof, np.inf)
        for j, lim in limits.items():
            self.watched[j] = True
            self.current[j] = lim.current * stall_current[j]
            self.error[j] = lim.position_error
            self.seconds[j] = lim.seconds
        self.dt = float(dt)
        #: Seconds each joint has been stalled.
        self.stalled_for = np.zeros(dof)

    def reset(self) -> None:
        """Every timer back to zero (on arming)."""
        self.stalled_for[:] = 0.0

    def update(self, current: np.ndarray, goal: np.ndarray, position: np.ndarray) -> np.ndarray:
        """One bus cycle; the mask of joints stalled for their time, ``(dof,)``.

        Args:
            current: Current each servo draws, A.
            goal: Each joint's position goal, rad (NaN: none, never stalled).
            position: Present positions, rad.
        """
        if not self.watched.any():
            return self.watched
        with np.errstate(invalid="ignore"):
            pushing = np.abs(current) >= self.current
            behind = np.abs(goal - position) >= self.error
        stalled = self.watched & pushing & behind
        self.stalled_for = np.where(stalled, self.stalled_for + self.dt, 0.0)
        return self.stalled_for >= self.seconds - 1e-9
