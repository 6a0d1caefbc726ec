"""Observation layout: named parts with bounds, concatenated into one ``Box``.

The environment's observation is, in this order (each part present when enabled):

=====================  ==========  ============================================================
part                   size        bounds
=====================  ==========  ============================================================
``position``           dof         joint limits widened by 5 % of the range (rad or m)
``velocity``           dof         ``±2 ×`` the velocity limit (rad/s or m/s)
``torque``             dof         ``±`` the effort limit (N·m or N); ``observe_torque=True``
``previous_action``    action dim  the action space (``[-1, 1]``); ``observe_previous_action``
task parts             see task    the task's goal and derived quantities (see each task)
=====================  ==========  ============================================================

Values are clipped into the bounds (so every observation is inside the space); the raw,
unclipped state is in ``info["state"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from jointlab.robots.description import RobotDescription

try:  # np.clip's ufunc without the wrapper (about 1 µs a call)
    from numpy._core.umath import clip as _clip
except ImportError:  # numpy < 2
    from numpy.core.umath import clip as _clip  # type: ignore[no-redef]

__all__ = ["ObservationLayout", "ObservationPart", "joint_parts"]

#: Margin added to each side of the joint position range, as a fraction of the range.
POSITION_MARGIN = 0.05
#: Velocity bound as a multiple of the velocity limit.
VELOCITY_FACTOR = 2.0


@dataclass(frozen=True)
class ObservationPart:
    """One named block of the observation vector."""

    #: Part name, e.g. ``"position"`` or ``"goal"``.
    name: str
    #: Lower bounds, float64 of shape ``(size,)``.
    low: np.ndarray
    #: Upper bounds, float64 of shape ``(size,)``.
    high: np.ndarray
    #: One-line description with units.
    doc: str = ""

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.asarray(self.low).shape[0])


def joint_parts(description: RobotDescription, *, torque: bool = False) -> list[ObservationPart]:
    """Joint-space observation parts (position, velocity and optionally torque)."""
    span = description.upper - description.lower
    parts = [
        ObservationPart(
            "position",
            description.lower - POSITION_MARGIN * span,
            description.upper + POSITION_MARGIN * span,
            "joint positions, rad or m",
        ),
        ObservationPart(
            "velocity",
            -VELOCITY_FACTOR * description.velocity_limit,
            VELOCITY_FACTOR * description.velocity_limit,
            "joint velocities, rad/s or m/s",
        ),
    ]
    if torque:
        parts.append(
            ObservationPart(
                "torque",
                -np.asarray(description.effort_limit),
                np.asarray(description.effort_limit),
                "applied joint torques, N·m or N",
            )
        )
    return parts


class ObservationLayout:
    """Concatenates named parts into a float32 ``Box`` observation.

    Args:
        parts: The parts, in observation order.
    """

    def __init__(self, parts: Sequence[ObservationPart]) -> None:
        self.parts = tuple(parts)
        low = np.concatenate([np.asarray(p.low, dtype=np.float64) for p in self.parts])
        high = np.concatenate([np.asarray(p.high, dtype=np.float64) for p in self.parts])
        self.space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        # Clip against the float32 bounds, so the cast back to float32 stays inside the space.
        self._low = self.space.low.astype(np.float64)
        self._high = self.space.high.astype(np.float64)
        self._low32, self._high32 = self.space.low.copy(), self.space.high.copy()
        self.slices: dict[str, slice] = {}
        start = 0
        for part in self.parts:
            self.slices[part.name] = slice(start, start + part.size)
            start += part.size

    @property
    def names(self) -> tuple[str, ...]:
        """Part names in order."""
        return tuple(p.name for p in self.parts)

    def build(self, values: Sequence[np.ndarray]) -> np.ndarray:
        """Concatenate part values (in part order) and clip them into the space.

        Args:
            values: One array per part, shapes ``(part.size,)``.

        Returns:
            float32 observation of shape ``space.shape``.
        """
        # Cast, then clip against the float32 bounds: the same values as clipping in float64
        # against the same bounds and casting (they are float32 numbers and rounding is
        # monotonic), one array fewer. The clip ufunc (NaN stays NaN, as with maximum and
        # minimum): np.clip's wrapper costs ~1 µs.
        flat = np.concatenate(values, dtype=np.float32)
        return _clip(flat, self._low32, self._high32, out=flat)

    def build_batch(self, values: Sequence[np.ndarray]) -> np.ndarray:
        """:meth:`build` for N environments at once: parts of shape ``(N, part.size)``.

        Returns:
            float32 observations of shape ``(N, *space.shape)``.
        """
        flat = np.concatenate(values, axis=1)
        np.maximum(flat, self._low, out=flat)
        np.minimum(flat, self._high, out=flat)
        return flat.astype(np.float32)

    def split(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        """Split an observation (shape ``(..., n)``) into its named parts."""
        return {name: observation[..., s] for name, s in self.slices.items()}

    def describe(self) -> str:
        """A table of the parts: name, index range and documentation."""
        return "\n".join(
            f"{p.name:<20} [{self.slices[p.name].start}:{self.slices[p.name].stop}] {p.doc}"
            for p in self.parts
        )
