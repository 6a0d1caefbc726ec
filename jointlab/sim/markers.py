"""Visual markers: goals and targets drawn in renders and in the GUI, with no physics.

A marker is a body with a visual shape and no collision shape and no mass: the robot and
objects pass through it, it never moves on its own, and a world with markers steps exactly
like one without. Environments draw their task's goals with it (``World.markers``); nothing
else in the simulation sees them. :class:`MarkerSet` is engine-neutral (names, checks,
looks); each engine makes, moves and removes the bodies (``_create``, ``_move``,
``_remove``: :mod:`jointlab.sim.pybullet.markers`, :mod:`jointlab.sim.mujoco.world`).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from jointlab.errors import ConfigurationError

__all__ = ["DISC_HEIGHT", "MARKER_SHAPES", "MarkerLook", "MarkerSet"]

#: ``sphere`` (a point in space) or ``disc`` (a flat circle, e.g. a goal on the ground).
MARKER_SHAPES = ("sphere", "disc")
#: Thickness of a disc, metres.
DISC_HEIGHT = 0.004


@dataclass(frozen=True)
class MarkerLook:
    """How a marker looks: its shape, radius (m) and colour (RGBA in [0, 1])."""

    shape: str
    radius: float
    rgba: tuple[float, float, float, float]


class MarkerSet(abc.ABC):
    """The markers of one world, by name."""

    def __init__(self) -> None:
        self._bodies: dict[str, tuple[int, MarkerLook]] = {}

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the markers shown."""
        return tuple(self._bodies)

    def body_id(self, name: str) -> int:
        """Body id of marker ``name`` in its world."""
        if name not in self._bodies:
            raise ConfigurationError(f"no marker {name!r}; markers: {list(self._bodies)}")
        return self._bodies[name][0]

    def show(
        self,
        name: str,
        position: Sequence[float],
        *,
        radius: float = 0.03,
        rgba: Sequence[float] = (0.1, 0.75, 0.2, 0.6),
        shape: str = "sphere",
    ) -> int:
        """Show marker ``name`` at ``position`` (created on first use, then moved).

        Args:
            name: Any name; showing the same name again moves that marker.
            position: Centre, world frame, metres, shape ``(3,)``.
            radius: Sphere or disc radius, metres.
            rgba: Colour, four numbers in [0, 1].
            shape: One of :data:`MARKER_SHAPES`.

        Returns:
            The marker's body id.
        """
        if shape not in MARKER_SHAPES:
            raise ConfigurationError(f"marker shape must be one of {MARKER_SHAPES}, got {shape!r}")
        centre = np.asarray(position, dtype=np.float64).reshape(-1)
        colour = np.asarray(rgba, dtype=np.float64).reshape(-1)
        if centre.shape != (3,) or not np.isfinite(centre).all():
            raise ConfigurationError(
                f"marker {name!r} position must be 3 finite numbers, got {position!r}"
            )
        if not (np.isfinite(radius) and radius > 0):
            raise ConfigurationError(f"marker {name!r} radius must be > 0 metres, got {radius!r}")
        if colour.shape != (4,) or not ((colour >= 0) & (colour <= 1)).all():
            raise ConfigurationError(
                f"marker {name!r} rgba must be 4 numbers in [0, 1], got {rgba!r}"
            )
        look = MarkerLook(shape, float(radius), (*(float(c) for c in colour),))  # type: ignore[arg-type]
        known = self._bodies.get(name)
        if known is not None and known[1] != look:
            self.hide(name)
            known = None
        if known is None:
            body = self._create(look, centre)
            self._bodies[name] = (body, look)
            return body
        self._move(known[0], centre)
        return known[0]

    def hide(self, name: str) -> None:
        """Remove marker ``name`` (nothing happens when there is none)."""
        known = self._bodies.pop(name, None)
        if known is not None:
            self._remove(known[0])

    def clear(self) -> None:
        """Remove every marker."""
        for name in list(self._bodies):
            self.hide(name)

    @abc.abstractmethod
    def _create(self, look: MarkerLook, centre: np.ndarray) -> int:
        """Engine part: a new marker body of ``look`` at ``centre``; its body id."""

    @abc.abstractmethod
    def _move(self, body: int, centre: np.ndarray) -> None:
        """Engine part: move marker ``body`` to ``centre`` (m, world frame)."""

    @abc.abstractmethod
    def _remove(self, body: int) -> None:
        """Engine part: remove marker ``body``."""
