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

#: ``[1, sin q, cos q]`` at ``q = 0``: the coefficients of elements that do not rotate.
_AT_ZERO = np.array([[1.0, 0.0, 1.0]])


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
            offsets.append(
                pose_matrix(rotation @ np.array([spec.length, 0.0, 0.0]), spec.orientation)
            )
        n = len(chain)
        self._offsets = np.array(offsets).reshape(n, 4, 4)
        self._base = pose_matrix(description.base.position, description.base.orientation)
        kinds = [spec.type for spec in chain]
        rotary = np.array([k is JointType.ROTARY for k in kinds], dtype=bool)
        linear = np.array([k is JointType.LINEAR for k in kinds], dtype=bool)
        self._rotary = rotary.astype(np.float64)
        self._linear = linear.astype(np.float64)
        self._any_rotary = bool(rotary.any())
        self._any_linear = bool(linear.any())
        #: Every element of the chain is rotary: the angles are the joint values themselves.
        self._all_rotary = bool(rotary.all())
        self._joints = np.array([joint_index.get(s.name, 0) for s in chain], dtype=np.intp)
        #: The chain is every joint in description order: ``q`` needs no gather.
        self._all_joints = n == description.dof and bool(np.array_equal(self._joints, np.arange(n)))
        axes = np.array([s.axis for s in chain], dtype=np.float64).reshape(n, 3)
        self._axes = axes
        # Rodrigues: R(q) = I + sin(q) K + (1 - cos(q)) K² = A0 + sin(q) A1 + cos(q) A2 with
        # K the axis' cross-product matrix, A0 = I + K², A1 = K, A2 = -K² (q = 0 gives I, so
        # fixed and linear elements use q = 0). Folding in the constant offset O:
        # R(q) O[:3] = [1, sin q, cos q] @ B with B[b] = A_b O[:3] (a 3x4 block flattened).
        # The base pose is folded into the first element's blocks (its rotation multiplies
        # every block, its translation adds to the constant one), so a chain of n elements
        # is a product of n matrices.
        k = np.zeros((n, 3, 3))
        k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -axes[:, 2], axes[:, 1], -axes[:, 0]
        k[:, 1, 0], k[:, 2, 0], k[:, 2, 1] = axes[:, 2], -axes[:, 1], axes[:, 0]
        k2 = k @ k
        basis = np.stack([np.eye(3) + k2, k, -k2], axis=1)  # (n, 3, 3, 3)
        top = self._offsets[:, None, :3, :]  # (n, 1, 3, 4)
        blocks = basis @ top  # (n, 3, 3, 4)
        if n:
            blocks[0] = self._base[:3, :3] @ blocks[0]
            blocks[0, 0, :, 3] += self._base[:3, 3]
        self._blocks = blocks.reshape(n, 3, 12)
        # Preallocated per-call buffers: [1, sin q, cos q] per element (q = 0 where fixed),
        # the n element matrices (last rows stay [0, 0, 0, 1]) and a (n, 1, 12) view of
        # their top rows.
        self._coeffs = np.tile(_AT_ZERO, (n, 1, 1))
        self._mats = np.zeros((n, 4, 4))
        self._mats[:, 3, 3] = 1.0
        self._tops = self._mats.reshape(n, 16)[:, None, :12]
        self._plan = _Plan(self._mats, self._coeffs) if n and not self._any_linear else None
        #: :meth:`positions`' buffers by batch size: coefficients, matrices, their top rows.
        self._batch_buffers: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _elements(
        self, values: np.ndarray, coeffs: np.ndarray, mats: np.ndarray, tops: np.ndarray
    ) -> None:
        """Fill ``mats`` (``(..., n, 4, 4)``) with the element transforms for ``values``."""
        if self._any_rotary:
            angle = values if self._all_rotary else values * self._rotary
            np.sin(angle, out=coeffs[..., 0, 1])
            np.cos(angle, out=coeffs[..., 0, 2])
        np.matmul(coeffs, self._blocks, out=tops)
        if self._any_linear:
            shift = (values * self._linear)[..., None] * self._axes
            if values.shape[-1]:
                shift[..., 0, :] = shift[..., 0, :] @ self._base[:3, :3].T
            mats[..., :3, 3] += shift

    def matrix(self, q: np.ndarray) -> np.ndarray:
        """World transform of the frame, 4x4, for joint positions ``q`` of shape ``(dof,)``."""
        values = np.asarray(q, dtype=np.float64)[self._joints]
        if not values.shape[0]:
            return self._base.copy()
        mats = self._mats
        self._elements(values, self._coeffs, mats, self._tops)
        return _product(mats)

    def chain_frames(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every element's joint frame along the chain, for joint Jacobians.

        Args:
            q: Joint positions, rad or m, shape ``(dof,)``.

        Returns:
            ``(before, axes, joints)``: ``before`` ``(n + 1, 4, 4)``, the world frame at the
            start of each element (``before[0]`` the base) and, last, the frame itself;
            ``axes`` ``(n, 3)``, each element's axis in the world frame; ``joints`` ``(n,)``,
            each element's joint index (-1 for fixed elements).
        """
        values = np.asarray(q, dtype=np.float64)[self._joints]
        n = values.shape[0]
        frames = np.empty((n + 1, 4, 4))
        frames[0] = self._base
        if n:
            self._elements(values, self._coeffs, self._mats, self._tops)
            # mats[0] has the base folded in: it maps the first element's frame to the world.
            frames[1] = self._mats[0]
            for i in range(1, n):
                frames[i + 1] = frames[i] @ self._mats[i]
        axes = np.einsum("nij,nj->ni", frames[:n, :3, :3], self._axes)
        joints = np.where(self._rotary + self._linear > 0, self._joints, -1)
        return frames, axes, joints

    def position(self, q: np.ndarray) -> np.ndarray:
        """World position of the frame in metres, shape ``(3,)``.

        Seven numpy calls for six elements: one ``sin``, one ``cos``, one batched product
        for the n element transforms, then their chain in a tree of batched products.
        """
        values = q if self._all_joints else np.asarray(q, dtype=np.float64)[self._joints]
        plan = self._plan
        if plan is None:  # linear elements, or no element at all
            if not values.shape[0]:
                return self._base[:3, 3].copy()
            self._elements(values, self._coeffs, self._mats, self._tops)
            return _translation(self._mats)
        # _elements and _translation for rotary and fixed elements, on precomputed views.
        angle = values if self._all_rotary else values * self._rotary
        np.sin(angle, out=plan.sin)
        np.cos(angle, out=plan.cos)
        np.matmul(self._coeffs, self._blocks, out=self._tops)
        for left, right, out, rest in plan.stages:
            np.matmul(left, right, out=out)
            if rest is not None:
                np.copyto(*rest)
        column = plan.column
        for matrix, out in plan.chain:
            column = np.dot(matrix, column, out=out)
        return column[:3].copy() if plan.first is None else np.dot(plan.first, column)[:3]

    def positions(self, q: np.ndarray) -> np.ndarray:
        """World positions of the frame for N configurations: ``q`` ``(N, dof)``, result ``(N, 3)``.

        The same arithmetic as :meth:`position`, each product done for the N at once, so each
        row equals :meth:`position` of that configuration exactly.
        """
        values = np.asarray(q, dtype=np.float64)
        if not self._all_joints:
            values = values[:, self._joints]  # (N, n)
        count, n = values.shape
        if not n:
            return np.repeat(self._base[None, :3, 3], count, axis=0)
        buffers = self._batch_buffers.get(count)
        if buffers is None:  # per batch size, as the single-configuration buffers
            if len(self._batch_buffers) >= 8:  # sizes vary while episodes end out of step
                self._batch_buffers.clear()
            coeffs = np.tile(_AT_ZERO, (count, n, 1, 1))
            mats = np.zeros((count, n, 4, 4))
            mats[..., 3, 3] = 1.0
            buffers = coeffs, mats, mats.reshape(count, n, 16)[..., None, :12]
            self._batch_buffers[count] = buffers
        coeffs, mats, tops = buffers
        self._elements(values, coeffs, mats, tops)
        return _translation(mats)


class _Plan:
    """Preallocated views for :meth:`ChainKinematics.position` (no slicing per call).

    The same products as :func:`_translation` of the element matrices ``mats`` (``(n, 4,
    4)``), in the same order and on operands of the same shapes, so the result is the same
    to the bit: ``stages`` are the pairwise products of :func:`_reduce` (``(left, right,
    out, rest)``, ``rest`` the ``copyto`` arguments of an odd matrix carried over), then
    ``chain`` multiplies the last matrix's translation column by the others from the last
    backwards (``(matrix, out)``), the first of them (``first``) into a new array. Those
    matrix-vector products use ``np.dot`` (half the call cost of ``matmul``; the same
    arithmetic: tests compare them with :meth:`ChainKinematics.positions`, which uses
    ``matmul``, bit for bit).
    """

    def __init__(self, mats: np.ndarray, coeffs: np.ndarray) -> None:
        self.sin = coeffs[:, 0, 1]
        self.cos = coeffs[:, 0, 2]
        self.stages: list[tuple[np.ndarray, np.ndarray, np.ndarray, tuple | None]] = []
        while mats.shape[0] > 3:
            k = mats.shape[0]
            even = k - k % 2
            reduced = np.zeros((even // 2 + k - even, 4, 4))
            rest = (reduced[even // 2 :], mats[even:]) if k > even else None
            self.stages.append((mats[0:even:2], mats[1:even:2], reduced[: even // 2], rest))
            mats = reduced
        k = mats.shape[0]
        self.column = mats[k - 1, :, 3]
        self.chain = [(mats[i], np.zeros(4)) for i in range(k - 2, 0, -1)]
        self.first = mats[0] if k > 1 else None


def _reduce(mats: np.ndarray) -> np.ndarray:
    """Pairwise products of ``(..., k, 4, 4)`` until at most 3 matrices are left (in order)."""
    while mats.shape[-3] > 3:
        k = mats.shape[-3]
        even = k - k % 2
        paired = mats[..., 0:even:2, :, :] @ mats[..., 1:even:2, :, :]
        mats = paired if k == even else np.concatenate((paired, mats[..., even:, :, :]), axis=-3)
    return mats


def _product(mats: np.ndarray) -> np.ndarray:
    """The ordered product of ``(..., k, 4, 4)`` matrices, shape ``(..., 4, 4)``."""
    mats = _reduce(mats)
    result = mats[..., 0, :, :].copy()
    for i in range(1, mats.shape[-3]):
        result = result @ mats[..., i, :, :]
    return result


def _translation(mats: np.ndarray) -> np.ndarray:
    """Translation of the ordered product of ``(..., k, 4, 4)`` matrices, shape ``(..., 3)``."""
    mats = _reduce(mats)
    k = mats.shape[-3]
    column = mats[..., k - 1, :, 3:]  # (t, 1) of the last matrix, as a (4, 1) column
    for i in range(k - 2, -1, -1):  # from the last matrix backwards
        column = mats[..., i, :, :] @ column
    return column[..., :3, 0].copy()
