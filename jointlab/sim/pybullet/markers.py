"""Markers on PyBullet: visual-only multibodies (no collision shape, no mass)."""

from __future__ import annotations

import numpy as np
import pybullet

from jointlab.sim.markers import DISC_HEIGHT, MarkerLook, MarkerSet

__all__ = ["PybulletMarkers"]


class PybulletMarkers(MarkerSet):
    """:class:`jointlab.sim.markers.MarkerSet` on one PyBullet client.

    Args:
        client_id: The PyBullet client id of the world.
    """

    def __init__(self, client_id: int) -> None:
        super().__init__()
        self._cid = client_id

    def _create(self, look: MarkerLook, centre: np.ndarray) -> int:
        if look.shape == "sphere":
            visual = pybullet.createVisualShape(
                pybullet.GEOM_SPHERE,
                radius=look.radius,
                rgbaColor=look.rgba,
                physicsClientId=self._cid,
            )
        else:
            visual = pybullet.createVisualShape(
                pybullet.GEOM_CYLINDER,
                radius=look.radius,
                length=DISC_HEIGHT,
                rgbaColor=look.rgba,
                physicsClientId=self._cid,
            )
        return pybullet.createMultiBody(
            baseMass=0.0,
            baseCollisionShapeIndex=-1,
            baseVisualShapeIndex=visual,
            basePosition=centre.tolist(),
            physicsClientId=self._cid,
        )

    def _move(self, body: int, centre: np.ndarray) -> None:
        pybullet.resetBasePositionAndOrientation(
            body, centre.tolist(), (0.0, 0.0, 0.0, 1.0), physicsClientId=self._cid
        )

    def _remove(self, body: int) -> None:
        pybullet.removeBody(body, physicsClientId=self._cid)
