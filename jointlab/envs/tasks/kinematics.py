"""Fast forward kinematics of one frame, for per-step rewards and observations.

:func:`jointlab.robots.forward_kinematics` computes every frame of the tree; a task needs one
(the tool) at every environment step, so :class:`ChainKinematics` precompiles the chain from
the base to that frame and evaluates it with a handful of vectorised numpy calls. It follows
the geometry convention of docs/robot-files.md exactly (tests compare it with
``forward_kinematics``).
"""

from __future__ import annotations

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.robots.description import BASE, JointType, RobotDescription
from jointlab.robots.transforms import pose_matrix, rpy_matrix

__all__ = ["ChainKinematics", "workspace_radius"]


def workspace_radius(description: RobotDescription) -> float:
    """Upper bound of the distance from the base to any frame, in metres.

    The sum of every element's link length plus the travel of linear joints.
    """
    total = sum(abs(a.length) for a in description.actuators)
    linear = description.is_linear
    travel = np.maximum(np.abs(description.lower), np.abs(description.upper))
    return float(total + np.sum(travel[linear]))


class ChainKinematics:
    """World pose of one frame as a function of the joint positions.

    Args:
        description: The robot.
        frame: A tool frame name (``"<last actuator>_tool"``, the end frame of that actuator)
            or an element name (that element's end frame). Default: the first tool.
    """

    def __init__(self, description: RobotDescription, frame: str | None = None) -> None:
        frame = description.tool_names[0] if frame is None else frame
        element = frame[: -len("_tool")] if frame.endswith("_tool") else frame
        if element not in description.element_names:
            raise ConfigurationError(
                f"robot {description.name!r} has no frame {frame!r}; tools: "
                f"{list(description.tool_names)}, elements: {list(description.element_names)}"
            )
        self.description = description
        self.frame = frame
        chain = []
        name = element
        while name != BASE:
            spec = description.actuator(name)
            chain.append(spec)
            name = spec.parent
        chain.reverse()
        joint_index = {n: i for i, n in enumerate(description.joint_names)}
        offsets = []
        for spec in chain:
            rotation = rpy_matrix(np.array(spec.orientation))
            offsets.append(pose_matrix(rotation @ np.array([spec.length, 0.0, 0.0]),
                                       spec.orientation))  # fmt: skip
        self._offsets = np.array(offsets).reshape(len(chain), 4, 4)
        self._base = pose_matrix(description.base.position, description.base.orientation)
        kinds = [spec.type for spec in chain]
        self._rotary = np.array([k is JointType.ROTARY for k in kinds], dtype=np.float64)
        self._linear = np.array([k is JointType.LINEAR for k in kinds], dtype=np.float64)
        self._any_rotary = bool(self._rotary.any())
        self._any_linear = bool(self._linear.any())
        self._joints = np.array([joint_index.get(s.name, 0) for s in chain], dtype=np.intp)
        axes = np.array([s.axis for s in chain], dtype=np.float64).reshape(len(chain), 3)
        self._axes = axes
        # Rodrigues: R(q) = I + sin(q) K + (1 - cos(q)) K² = A0 + sin(q) A1 + cos(q) A2 with
        # K the axis' cross-product matrix, A0 = I + K², A1 = K, A2 = -K² (q = 0 gives I, so
        # fixed and linear elements use q = 0). Folding in the constant offset O:
        # R(q) O[:3] = [1, sin q, cos q] @ B with B[b] = A_b O[:3] (a 3x4 block flattened).
        k = np.zeros((len(chain), 3, 3))
        k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -axes[:, 2], axes[:, 1], -axes[:, 0]
        k[:, 1, 0], k[:, 2, 0], k[:, 2, 1] = axes[:, 2], -axes[:, 1], axes[:, 0]
        k2 = k @ k
        basis = np.stack([np.eye(3) + k2, k, -k2], axis=1)  # (n, 3, 3, 3)
        top = self._offsets[:, None, :3, :]  # (n, 1, 3, 4)
        self._blocks = (basis @ top).reshape(len(chain), 3, 12)
        self._coeffs = np.ones((len(chain), 1, 3))

    def matrix(self, q: np.ndarray) -> np.ndarray:
        """World transform of the frame, 4x4, for joint positions ``q`` of shape ``(dof,)``."""
        values = np.asarray(q, dtype=np.float64)[self._joints]
        mats = self._offsets.copy()
        if self._any_rotary:
            angle = values * self._rotary
            coeffs = self._coeffs.copy()
            coeffs[:, 0, 1] = np.sin(angle)
            coeffs[:, 0, 2] = np.cos(angle)
            mats[:, :3, :] = (coeffs @ self._blocks).reshape(-1, 3, 4)
        if self._any_linear:
            mats[:, :3, 3] += (values * self._linear)[:, None] * self._axes
        frame = self._base
        for mat in mats:
            frame = frame @ mat
        return frame

    def position(self, q: np.ndarray) -> np.ndarray:
        """World position of the frame in metres, shape ``(3,)``."""
        return self.matrix(q)[:3, 3]

    def positions(self, q: np.ndarray) -> np.ndarray:
        """World positions of the frame for N configurations: ``q`` ``(N, dof)``, result ``(N, 3)``.

        The same arithmetic as :meth:`matrix`, each 4x4 product done for the N at once.
        """
        values = np.asarray(q, dtype=np.float64)[:, self._joints]  # (N, n)
        count, n = values.shape
        mats = np.broadcast_to(self._offsets, (count, n, 4, 4)).copy()
        if self._any_rotary:
            angle = values * self._rotary
            coeffs = np.ones((count, n, 1, 3))
            coeffs[:, :, 0, 1] = np.sin(angle)
            coeffs[:, :, 0, 2] = np.cos(angle)
            mats[:, :, :3, :] = (coeffs @ self._blocks).reshape(count, n, 3, 4)
        if self._any_linear:
            mats[:, :, :3, 3] += (values * self._linear)[:, :, None] * self._axes
        frame = np.broadcast_to(self._base, (count, 4, 4))
        for k in range(n):
            frame = frame @ mats[:, k]
        return frame[:, :3, 3]
