"""What ``rgb_array`` and GUI renders show: a camera that frames the robot, and the goals.

The environment owns no physics: markers are drawn through the simulated robot's
:class:`~jointlab.sim.World` (``world.markers``, visual-only bodies), from the task's
:meth:`~jointlab.envs.tasks.Task.markers`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jointlab.robots.description import RobotDescription
from jointlab.robots.kinematics import forward_kinematics

from .tasks.base import Marker

__all__ = ["default_camera", "draw_markers"]


def default_camera(description: RobotDescription, fov: float = 50.0) -> Any:
    """A :class:`jointlab.sim.Camera` that frames where the robot works.

    The region is the box spanned by every link end over home and configurations within
    30 % of the soft ranges around home (where Reach samples its goals; the whole range
    for flat, planar robots); the camera looks at its centre from the front-left and from
    above (steeper for planar robots), from the distance at which the box fills about 90 %
    of a 4:3 image.
    """
    from jointlab.sim import Camera

    points = _workspace_points(description)
    extent = np.ptp(points, axis=0)
    flat = extent[2] < 0.25 * float(extent[:2].max())
    if flat:  # planar robots: their tasks use the whole plane, shown from above
        points = _workspace_points(description, fraction=1.0)
    low, high = points.min(axis=0), points.max(axis=0)
    centre = 0.5 * (low + high)
    extent = np.maximum(high - low, 0.05)
    pitch = -55.0 if flat else -25.0
    # Half sizes as seen by the camera: the footprint's diagonal across, its depth
    # foreshortened by the pitch plus the height upwards.
    across = 0.5 * float(np.hypot(extent[0], extent[1]))
    upward = 0.5 * (
        float(extent[2]) * np.cos(np.radians(pitch)) + across * np.sin(np.radians(-pitch))
    )
    tan_v = np.tan(np.radians(fov) / 2.0)
    tan_h = tan_v * 4.0 / 3.0  # the default 320x240 image
    distance = max(across / tan_h, upward / tan_v) / 0.9
    return Camera(
        target=tuple(float(c) for c in centre),
        distance=float(min(max(distance, 0.25), 8.0)),
        yaw=50.0,
        pitch=pitch,
        fov=fov,
    )


def _workspace_points(
    description: RobotDescription, fraction: float = 0.3, samples: int = 64
) -> np.ndarray:
    """Link ends (m, shape ``(n, 3)``) over home and configurations near it, above the ground."""
    d = description
    rng = np.random.default_rng(0)
    corners = rng.uniform(d.soft_lower, d.soft_upper, size=(samples, d.dof))
    q = np.vstack([d.home, d.home + fraction * (corners - d.home)])
    q = np.array([d.apply_coupling(row) for row in q])
    ends = forward_kinematics(d, q).ends[..., :3, 3].reshape(-1, 3)
    points = np.vstack([ends, np.asarray(d.base.position, dtype=np.float64)[None, :]])
    points[:, 2] = np.maximum(points[:, 2], 0.0)
    return points


def draw_markers(world: Any, markers: list[Marker]) -> None:
    """Show ``markers`` in ``world`` (a :class:`jointlab.sim.World`); hide the others."""
    wanted = {marker.name for marker in markers}
    for name in world.markers.names:
        if name not in wanted:
            world.markers.hide(name)
    for marker in markers:
        world.markers.show(
            marker.name, marker.position, radius=marker.radius, rgba=marker.rgba, shape=marker.shape
        )
