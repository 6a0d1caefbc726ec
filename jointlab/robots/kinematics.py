"""Forward kinematics of a description, exactly per the geometry convention (robot-files.md).

For element ``i`` with parent end frame ``F_i`` and joint value ``q_i``::

    moving_i = F_i · M_i(q_i)                 (the URDF child-link frame of joint i)
    F_end(i) = moving_i · RPY(orientation_i) · T(length_i · x̂)

with ``M_i(q) = Rot(axis_i, q)`` (rotary), ``T(q · axis_i)`` (linear) or identity (fixed), and
``F_base = T(base.position) · RPY(base.orientation)`` as the parent of each chain's first
element. All frames are 4x4 homogeneous transforms in the world frame, metres and radians.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from jointlab.errors import DescriptionError
from jointlab.robots.description import BASE, JointType, RobotDescription
from jointlab.robots.transforms import axis_angle_matrix, pose_matrix, rpy_matrix


@dataclass(frozen=True)
class _Step:
    element: int
    parent: int  # element index of the parent, -1 for the base
    joint: int  # joint-space index, -1 for fixed elements
    kind: JointType
    axis: np.ndarray
    offset: np.ndarray  # RPY(orientation) · T(length · x̂)


@lru_cache(maxsize=64)
def _plan(description: RobotDescription) -> tuple[_Step, ...]:
    index = {name: i for i, name in enumerate(description.element_names)}
    joint_index = {name: i for i, name in enumerate(description.joint_names)}
    steps: list[_Step] = []
    done: set[int] = set()
    pending = list(range(len(description.actuators)))
    while pending:
        remaining = []
        for e in pending:
            spec = description.actuators[e]
            parent = -1 if spec.parent == BASE else index[spec.parent]
            if parent >= 0 and parent not in done:
                remaining.append(e)
                continue
            rotation = rpy_matrix(np.array(spec.orientation))
            offset = pose_matrix(rotation @ np.array([spec.length, 0.0, 0.0]), spec.orientation)
            steps.append(
                _Step(
                    e,
                    parent,
                    joint_index.get(spec.name, -1),
                    spec.type,
                    np.array(spec.axis),
                    offset,
                )
            )
            done.add(e)
        if len(remaining) == len(pending):  # a cycle; validation normally catches it first
            raise DescriptionError(f"robot {description.name!r}: parent cycle among {remaining}")
        pending = remaining
    return tuple(steps)


@dataclass(frozen=True)
class Kinematics:
    """Result of :func:`forward_kinematics`; arrays have the batch shape of ``q`` in front."""

    #: Element names, in the order of ``frames``.
    names: tuple[str, ...]
    #: Moving frame ``F_i · M_i(q_i)`` of every element, shape ``(..., n_elements, 4, 4)``.
    frames: np.ndarray
    #: End frame ``F_end(i)`` of every element, shape ``(..., n_elements, 4, 4)``.
    ends: np.ndarray
    #: Tool frame of each chain (``<last actuator>_tool``), each ``(..., 4, 4)``.
    tools: dict[str, np.ndarray]

    def frame(self, name: str) -> np.ndarray:
        """Moving frame of element ``name``, or a tool frame by its ``_tool`` name."""
        if name in self.tools:
            return self.tools[name]
        try:
            return self.frames[..., self.names.index(name), :, :]
        except ValueError as exc:
            raise DescriptionError(
                f"no frame {name!r}; known: {list(self.names) + list(self.tools)}"
            ) from exc


def forward_kinematics(description: RobotDescription, q: np.ndarray) -> Kinematics:
    """Frames of every element and tool for joint positions ``q``.

    Args:
        description: The robot.
        q: Joint positions in rad or m, shape ``(dof,)`` or a batch ``(..., dof)``.

    Returns:
        :class:`Kinematics` with world-frame 4x4 transforms.
    """
    q = np.asarray(q, dtype=np.float64)
    if q.ndim == 0 or q.shape[-1] != description.dof:
        raise DescriptionError(
            f"forward_kinematics: q has shape {q.shape}, expected (..., {description.dof}) "
            f"for robot {description.name!r}"
        )
    batch = q.shape[:-1]
    n = len(description.actuators)
    frames = np.empty((*batch, n, 4, 4))
    ends = np.empty((*batch, n, 4, 4))
    base = np.broadcast_to(
        pose_matrix(description.base.position, description.base.orientation), (*batch, 4, 4)
    )
    for step in _plan(description):
        parent_end = base if step.parent < 0 else ends[..., step.parent, :, :]
        if step.kind is JointType.ROTARY:
            motion = np.zeros((*batch, 4, 4))
            motion[..., :3, :3] = axis_angle_matrix(step.axis, q[..., step.joint])
            motion[..., 3, 3] = 1.0
            moving = parent_end @ motion
        elif step.kind is JointType.LINEAR:
            moving = parent_end.copy()
            moving[..., :3, 3] += (parent_end[..., :3, :3] @ step.axis) * q[..., step.joint, None]
        else:
            moving = parent_end
        frames[..., step.element, :, :] = moving
        ends[..., step.element, :, :] = moving @ step.offset
    tools = {
        name: ends[..., description.element_names.index(name[: -len("_tool")]), :, :]
        for name in description.tool_names
    }
    return Kinematics(names=description.element_names, frames=frames, ends=ends, tools=tools)


def tool_positions(description: RobotDescription, q: np.ndarray) -> np.ndarray:
    """Tool-frame origins in metres, shape ``(..., n_tools, 3)`` in ``tool_names`` order."""
    kin = forward_kinematics(description, q)
    return np.stack([kin.tools[name][..., :3, 3] for name in description.tool_names], axis=-2)


def position_jacobian(
    description: RobotDescription, q: np.ndarray, tool: str, eps: float = 1e-7
) -> np.ndarray:
    """Numerical Jacobian of a tool (or element) origin w.r.t. ``q``: shape ``(3, dof)``, m/rad.

    Central differences evaluated as one batched FK call.
    """
    q = np.asarray(q, dtype=np.float64)
    offsets = np.eye(description.dof) * eps
    batch = np.concatenate([q + offsets, q - offsets])
    positions = forward_kinematics(description, batch).frame(tool)[..., :3, 3]
    return ((positions[: description.dof] - positions[description.dof :]) / (2 * eps)).T
