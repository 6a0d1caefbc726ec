"""Hard stops as an engine realises them: a joint resting on its stop reads a hair beyond it.

A physics engine holds a joint at its limit with a stiff constraint that yields a little
(contact penetration), and an encoder rounds: an arm that settled limp onto its stops, or was
logged pushing one, reports positions up to :data:`STOP_TOLERANCE` beyond the robot file's
limits. Such a state is a normal state: resets, replays and fits take it as lying on the stop.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["STOP_TOLERANCE", "onto_the_stops"]

#: How far beyond a limit (rad or m) a joint still counts as resting on that stop.
STOP_TOLERANCE = 1e-3


def onto_the_stops(
    q: Sequence[float] | np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> np.ndarray:
    """``q`` with values within :data:`STOP_TOLERANCE` beyond a limit put on that limit.

    Args:
        q: Joint positions, rad or m, shape ``(dof,)``.
        lower: Lower limits, shape ``(dof,)``.
        upper: Upper limits, shape ``(dof,)``.

    Returns:
        A new array; values farther outside are left as they are (for the caller to refuse).
    """
    q = np.array(q, dtype=np.float64)
    near = (q >= lower - STOP_TOLERANCE) & (q <= upper + STOP_TOLERANCE)
    return np.where(near, np.clip(q, lower, upper), q)
