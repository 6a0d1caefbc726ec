"""Goals that identify a position servo: steps and ramps that reverse, at a recording's rate.

A recording identifies stiffness, friction and delay when its goals jump (the response's rise
and settling), ramp at several speeds (friction against speed) and reverse (backlash), over
poses where gravity loads the joints differently (stiffness against droop).
:func:`servo_excitation` makes such goals for every joint at once, seeded; a teleoperator, a
program or ``lerobot-record`` can send them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jointlab.robots import RobotDescription

__all__ = ["servo_excitation"]


def servo_excitation(
    description: RobotDescription,
    fps: float,
    duration: float,
    *,
    amplitude: float = np.radians(15.0),
    centre: Sequence[float] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Goals for every joint, one row per frame: holds, steps and ramps that reverse.

    Args:
        description: The robot (joint limits bound the goals).
        fps: Frames per second.
        duration: Seconds of goals.
        amplitude: Largest excursion from ``centre``, rad.
        centre: The pose to move about, rad (default: home).
        seed: Seed of the segment lengths, targets and speeds.

    Returns:
        ``(n, dof)`` goals, rad; the first frame is ``centre``.
    """
    rng = np.random.default_rng(seed)
    n = max(2, round(duration * fps))
    dof = description.dof
    middle = np.asarray(description.home if centre is None else centre, dtype=np.float64)
    margin = 0.05 * (description.upper - description.lower)
    low = np.maximum(middle - amplitude, description.lower + margin)
    high = np.minimum(middle + amplitude, description.upper - margin)
    goals = np.empty((n, dof))
    for j in range(dof):
        k, value, side = 0, middle[j], rng.choice([-1.0, 1.0])
        while k < n:
            length = int(rng.integers(int(0.4 * fps), int(1.2 * fps) + 1))
            side = -side  # alternate sides: every segment reverses
            target = middle[j] + side * rng.uniform(0.2, 1.0) * amplitude
            target = float(np.clip(target, low[j], high[j]))
            if rng.random() < 0.5:  # a step, then a hold
                segment = np.full(length, target)
            else:  # a ramp at 10-60 °/s, then a hold at the target
                speed = np.radians(rng.uniform(10.0, 60.0)) / fps
                frames = max(1, int(np.ceil(abs(target - value) / speed)))
                ramp = np.linspace(value, target, frames + 1)[1:]
                segment = np.concatenate([ramp, np.full(max(length - frames, 0), target)])
            goals[k : k + len(segment), j] = segment[: n - k]
            k += len(segment)
            value = target
    goals[0] = middle
    return goals
