"""The robot drawn in a viser scene: one node per element, capsules along its links.

Descriptions carry geometry, not meshes, so every link is a capsule (a cylinder and two
spheres, viser has no capsule) from its moving frame's origin to its end, and every joint a
short drum along its axis (rotary) or a bar (linear). Frames follow
:func:`jointlab.robots.kinematics.forward_kinematics`: world frame, metres.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from jointlab.robots.description import JointType, RobotDescription
from jointlab.robots.kinematics import forward_kinematics

__all__ = ["LinkShape", "RobotScene", "link_shapes"]

_LINK_RGB = (150, 160, 175)
_ROTARY_RGB = (230, 140, 40)
_LINEAR_RGB = (60, 140, 220)
_TOOL_RGB = (40, 170, 90)


@dataclass(frozen=True)
class LinkShape:
    """A capsule in an element's moving frame: from its origin to ``end`` (m), ``radius`` m."""

    element: str
    end: np.ndarray
    radius: float
    kind: JointType
    axis: np.ndarray


def link_shapes(description: RobotDescription) -> tuple[LinkShape, ...]:
    """One capsule per element; the radius is 7 % of the robot's median link length."""
    lengths = np.array([spec.length for spec in description.actuators], dtype=np.float64)
    positive = lengths[lengths > 0]
    typical = float(np.median(positive)) if positive.size else 0.1
    radius = float(np.clip(0.07 * typical, 0.006, 0.05))
    shapes = []
    for spec in description.actuators:
        end = Rotation.from_euler("xyz", spec.orientation).apply([spec.length, 0.0, 0.0])
        shapes.append(
            LinkShape(
                spec.name,
                np.asarray(end),
                radius,
                spec.type,
                np.asarray(spec.axis, dtype=np.float64),
            )
        )
    return tuple(shapes)


def _z_to(direction: np.ndarray) -> np.ndarray:
    """Quaternion ``wxyz`` turning +z onto ``direction`` (viser cylinders run along z)."""
    norm = float(np.linalg.norm(direction))
    if norm < 1e-12:
        return np.array([1.0, 0.0, 0.0, 0.0])
    rotation, _ = Rotation.align_vectors([direction / norm], [[0.0, 0.0, 1.0]])
    return rotation.as_quat(scalar_first=True)


class RobotScene:
    """Nodes under ``/robot`` in ``server.scene``; :meth:`update` moves them to ``q``."""

    def __init__(self, server: Any, description: RobotDescription) -> None:
        self.description = description
        self._scene = server.scene
        self._shapes = link_shapes(description)
        self._frames = []
        scene = self._scene
        reach = max(float(sum(spec.length for spec in description.actuators)), 0.1)
        base = np.asarray(description.base.position, dtype=np.float64)
        size = float(np.ceil(2.0 * reach * 10.0) / 10.0)
        scene.add_grid(
            "/ground",
            width=size,
            height=size,
            cell_size=0.05 if reach < 1 else 0.1,
            section_size=0.25 if reach < 1 else 0.5,
            position=(base[0], base[1], 0.0),
        )
        centre = base + np.array([0.0, 0.0, 0.35 * reach])
        server.initial_camera.up = (0.0, 0.0, 1.0)
        server.initial_camera.look_at = tuple(centre)
        server.initial_camera.position = tuple(centre + reach * np.array([1.2, -1.2, 0.75]))
        radius = self._shapes[0].radius if self._shapes else 0.02
        scene.add_box(
            "/robot/base",
            color=(90, 90, 100),
            dimensions=(6 * radius,) * 2 + (radius,),
            position=tuple(description.base.position),
        )
        tools = {name[: -len("_tool")] for name in description.tool_names}
        for index, shape in enumerate(self._shapes):
            node = f"/robot/e{index}"
            self._frames.append(scene.add_frame(node, show_axes=False))
            length = float(np.linalg.norm(shape.end))
            if length > 1e-9:
                scene.add_cylinder(
                    f"{node}/link",
                    radius=shape.radius,
                    height=length,
                    color=_LINK_RGB,
                    wxyz=_z_to(shape.end),
                    position=tuple(0.5 * shape.end),
                )
                scene.add_icosphere(
                    f"{node}/tip", radius=shape.radius, color=_LINK_RGB, position=tuple(shape.end)
                )
            if shape.kind is JointType.ROTARY:
                scene.add_cylinder(
                    f"{node}/joint",
                    radius=1.5 * shape.radius,
                    height=2.6 * shape.radius,
                    color=_ROTARY_RGB,
                    wxyz=_z_to(shape.axis),
                )
            elif shape.kind is JointType.LINEAR:
                scene.add_cylinder(
                    f"{node}/joint",
                    radius=0.8 * shape.radius,
                    height=6.0 * shape.radius,
                    color=_LINEAR_RGB,
                    wxyz=_z_to(shape.axis),
                )
            if shape.element in tools:
                scene.add_icosphere(
                    f"{node}/tool",
                    radius=1.3 * shape.radius,
                    color=_TOOL_RGB,
                    position=tuple(shape.end),
                )
        self._markers: dict[str, Any] = {}

    def update(self, q: np.ndarray) -> None:
        """Move every element to joint positions ``q`` (rad or m, shape ``(dof,)``)."""
        q = self.description.apply_coupling(np.asarray(q, dtype=np.float64))
        frames = forward_kinematics(self.description, q).frames
        positions = frames[:, :3, 3]
        quaternions = Rotation.from_matrix(frames[:, :3, :3]).as_quat(scalar_first=True)
        for handle, position, wxyz in zip(self._frames, positions, quaternions, strict=True):
            handle.position = position
            handle.wxyz = wxyz

    def show_markers(self, markers: list[Any]) -> None:
        """Show task markers (:class:`~jointlab.envs.tasks.base.Marker`); hide the others."""
        wanted = {marker.name for marker in markers}
        for name, handle in self._markers.items():
            handle.visible = name in wanted
        for marker in markers:
            handle = self._markers.get(marker.name)
            if handle is None:
                rgb = tuple(int(255 * c) for c in marker.rgba[:3])
                handle = self._scene.add_icosphere(
                    f"/markers/{marker.name}",
                    radius=marker.radius,
                    color=rgb,
                    opacity=float(marker.rgba[3]),
                )
                self._markers[marker.name] = handle
            handle.position = np.asarray(marker.position, dtype=np.float64)
            handle.visible = True

    def show_contacts(self, points: np.ndarray) -> None:
        """Contact points (m, shape ``(n, 3)``) as a red point cloud."""
        points = np.asarray(points, dtype=np.float32).reshape(-1, 3)
        self._scene.add_point_cloud(
            "/contacts",
            points=points,
            colors=np.tile(np.uint8([220, 30, 30]), (len(points), 1)),
            point_size=0.01,
        )
