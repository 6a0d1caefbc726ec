"""Visual markers: goals and targets drawn in renders and in the GUI, with no physics.

A marker is a PyBullet body with a visual shape and no collision shape and no mass: the
robot and objects pass through it, it never moves on its own, and a world with markers
steps exactly like one without. Environments draw their task's goals with it
(``World.markers``); nothing else in the simulation sees them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pybullet

from jointlab.errors import ConfigurationError

__all__ = ["MARKER_SHAPES", "MarkerSet"]

#: ``sphere`` (a point in space) or ``disc`` (a flat circle, e.g. a goal on the ground).
MARKER_SHAPES = ("sphere", "disc")
#: Thickness of a disc, metres.
DISC_HEIGHT = 0.004


@dataclass(frozen=True)
class _Look:
    shape: str
    radius: float
    rgba: tuple[float, float, float, float]


class MarkerSet:
    """The markers of one PyBullet client, by name.

    Args:
        client_id: The PyBullet client id of the world.
    """

    def __init__(self, client_id: int) -> None:
        self._cid = client_id
        self._bodies: dict[str, tuple[int, _Look]] = {}

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the markers shown."""
        return tuple(self._bodies)

    def body_id(self, name: str) -> int:
        """PyBullet body id of marker ``name``."""
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
            raise ConfigurationError(f"marker {name!r} position must be 3 finite numbers, "
                                     f"got {position!r}")  # fmt: skip
        if not (np.isfinite(radius) and radius > 0):
            raise ConfigurationError(f"marker {name!r} radius must be > 0 metres, got {radius!r}")
        if colour.shape != (4,) or not ((colour >= 0) & (colour <= 1)).all():
            raise ConfigurationError(f"marker {name!r} rgba must be 4 numbers in [0, 1], "
                                     f"got {rgba!r}")  # fmt: skip
        look = _Look(shape, float(radius), (*(float(c) for c in colour),))  # type: ignore[arg-type]
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

    def _move(self, body: int, centre: np.ndarray) -> None:
        pybullet.resetBasePositionAndOrientation(
            body, centre.tolist(), (0.0, 0.0, 0.0, 1.0), physicsClientId=self._cid
        )

    def _remove(self, body: int) -> None:
        pybullet.removeBody(body, physicsClientId=self._cid)

    def clear(self) -> None:
        """Remove every marker."""
        for name in list(self._bodies):
            self.hide(name)

    def _create(self, look: _Look, centre: np.ndarray) -> int:
        if look.shape == "sphere":
            visual = pybullet.createVisualShape(
                pybullet.GEOM_SPHERE, radius=look.radius, rgbaColor=look.rgba,
                physicsClientId=self._cid,
            )  # fmt: skip
        else:
            visual = pybullet.createVisualShape(
                pybullet.GEOM_CYLINDER, radius=look.radius, length=DISC_HEIGHT,
                rgbaColor=look.rgba, physicsClientId=self._cid,
            )  # fmt: skip
        return pybullet.createMultiBody(
            baseMass=0.0,
            baseCollisionShapeIndex=-1,
            baseVisualShapeIndex=visual,
            basePosition=centre.tolist(),
            physicsClientId=self._cid,
        )
