"""Default camera for ``render_mode="rgb_array"``: frames the robot's workspace."""

from __future__ import annotations

from jointlab.robots.description import RobotDescription

from .tasks.kinematics import workspace_radius

__all__ = ["default_camera"]


def default_camera(description: RobotDescription) -> object:
    """A :class:`jointlab.sim.Camera` looking at the robot from the front-left, above.

    The target is the base raised by a third of the workspace radius; the distance is 2.2
    workspace radii (at least 0.5 m), so the whole reachable space is in view.
    """
    from jointlab.sim import Camera

    radius = max(min(workspace_radius(description), 3.0), 0.2)
    x, y, z = description.base.position
    return Camera(
        target=(float(x), float(y), float(z) + radius / 3.0),
        distance=max(2.2 * radius, 0.5),
        yaw=45.0,
        pitch=-30.0,
    )
