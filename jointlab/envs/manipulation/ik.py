"""Inverse kinematics of a gripper pose: damped least squares, analytic Jacobian.

A grasp pose is a point held between the jaws (the *grasp point*, a fixed point of the wrist
frame) and the direction in which the jaws close (the wrist's z axis, horizontal); the
approach direction (the wrist's x axis, along the fixed jaw) is asked to point down, with a
small weight, so an arm whose wrist cannot point straight down at a target tilts it.
:meth:`GraspIK.solve` finds joint positions for it with ``Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e`` on
the analytic Jacobian of the chain (each joint's world axis from one pass of
:meth:`~jointlab.envs.tasks.kinematics.ChainKinematics.chain_frames`), freezing joints pushed
against their limits, warm-started from the present joints, so an environment step can
afford a few iterations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.robots.description import RobotDescription

from ..tasks.kinematics import ChainKinematics

__all__ = ["GraspIK", "IKSolution"]

_DOWN = np.array([0.0, 0.0, -1.0])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of ``a`` ``(n, 3)`` with ``b`` ``(..., n, 3)``, shape of ``b``."""
    out = np.empty(b.shape)
    out[..., 0] = a[:, 1] * b[..., 2] - a[:, 2] * b[..., 1]
    out[..., 1] = a[:, 2] * b[..., 0] - a[:, 0] * b[..., 2]
    out[..., 2] = a[:, 0] * b[..., 1] - a[:, 1] * b[..., 0]
    return out


@dataclass(frozen=True)
class IKSolution:
    """The outcome of one IK solve."""

    #: Joint positions, rad, shape ``(dof,)`` (the joints the IK does not use unchanged).
    q: np.ndarray
    #: Remaining distance of the grasp point from its target, metres.
    position_error: float
    #: Angle between the jaws' closing direction and its target, radians.
    closing_error: float
    #: Tilt of the approach direction from straight down, radians.
    tilt: float

    def reached(self, position_tolerance: float = 2e-3, angle_tolerance: float = 0.05) -> bool:
        """True when the point and the closing direction are within the tolerances (m, rad)."""
        return self.position_error <= position_tolerance and self.closing_error <= angle_tolerance


class GraspIK:
    """IK of a point fixed in a frame of the robot (a grasp point in the wrist frame).

    Args:
        description: The robot.
        frame: The element whose end frame carries the point (the wrist).
        point: The point in that frame, metres, shape ``(3,)``.
        joints: Indices of the joints the IK may move (the arm, not the gripper).
        closing_weight: Weight of the closing direction's error against the position's, m.
        approach_weight: Weight of the approach direction's tilt from straight down, m.
    """

    def __init__(
        self,
        description: RobotDescription,
        frame: str,
        point: np.ndarray,
        joints: np.ndarray,
        closing_weight: float = 0.1,
        approach_weight: float = 0.01,
    ) -> None:
        self.description = description
        self.kinematics = ChainKinematics(description, frame)
        self.point = np.append(np.asarray(point, dtype=np.float64), 1.0)
        self.joints = np.asarray(joints, dtype=np.intp)
        self.weight = float(closing_weight)
        self.approach_weight = float(approach_weight)
        self._column = {int(j): k for k, j in enumerate(self.joints)}
        self._columns_cache: dict[bytes, np.ndarray] = {}
        self.lower = np.asarray(description.soft_lower)[self.joints]
        self.upper = np.asarray(description.soft_upper)[self.joints]

    def pose(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World position of the point (m, ``(3,)``) and the frame's rotation (``(3, 3)``)."""
        m = self.kinematics.matrix(q)
        return (m @ self.point)[:3], m[:3, :3]

    def _linearise(
        self, q: np.ndarray, target: np.ndarray, closing: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The weighted error ``(9,)`` and its analytic Jacobian ``(9, len(joints))``."""
        frames, axes, joints = self.kinematics.chain_frames(q)
        m = frames[-1]
        position = m[:3] @ self.point
        x_axis, z_axis = m[:3, 0], m[:3, 2]
        error = np.concatenate(
            [
                target - position,
                self.weight * (closing - z_axis),
                self.approach_weight * (_DOWN - x_axis),
            ]
        )
        moving = joints >= 0
        a = axes[moving]
        # The three groups of rows in one pass: each axis crossed with its lever arm, the
        # frame's z axis and its x axis, shape (3, n, 3).
        b = np.empty((3, a.shape[0], 3))
        b[0] = position - frames[:-1][moving][:, :3, 3]
        b[1] = z_axis
        b[2] = x_axis
        crossed = _cross(a, b)
        crossed[1] *= self.weight
        crossed[2] *= self.approach_weight
        jac = np.zeros((9, self.joints.size))
        jac[:, self._columns_of(joints[moving])] = crossed.transpose(1, 0, 2).reshape(-1, 9).T
        return error, jac

    def _columns_of(self, joints: np.ndarray) -> np.ndarray:
        """Jacobian columns of the chain's joints (every chain joint must be an IK joint)."""
        key = joints.tobytes()
        columns = self._columns_cache.get(key)
        if columns is None:
            columns = np.array([self._column[int(j)] for j in joints], dtype=np.intp)
            self._columns_cache[key] = columns
        return columns

    def _step(
        self, jac: np.ndarray, error: np.ndarray, q: np.ndarray, damping: float
    ) -> np.ndarray:
        """A damped least-squares step; joints at a limit and pushed beyond it are frozen."""
        free = np.ones(q.size, dtype=bool)
        eye = damping**2 * np.eye(jac.shape[0])
        for _ in range(q.size):
            used = jac * free
            step = used.T @ np.linalg.solve(used @ used.T + eye, error)
            blocked = ((q <= self.lower + 1e-9) & (step < 0)) | (
                (q >= self.upper - 1e-9) & (step > 0)
            )
            if not np.any(blocked & free):
                return step * free
            free &= ~blocked
        return np.zeros(q.size)

    def solve(
        self,
        target: np.ndarray,
        closing: np.ndarray,
        q0: np.ndarray,
        *,
        iterations: int = 40,
        damping: float = 2e-3,
        max_step: float = 0.3,
        tolerance: float = 1e-4,
    ) -> IKSolution:
        """Joint positions putting the point at ``target``, the jaws closing along ``closing``.

        Args:
            target: World position of the grasp point, metres, shape ``(3,)``.
            closing: Unit vector, world frame, of the jaws' closing direction, shape ``(3,)``.
            q0: Start (and the value of the joints not moved), rad, shape ``(dof,)``.
            iterations: Iteration limit.
            damping: ``λ`` of the least-squares step.
            max_step: Largest change of one joint per iteration, rad.
            tolerance: Stop when the step is smaller than this (rad).
        """
        q = np.array(q0, dtype=np.float64)
        joints = self.joints
        error, jac = self._linearise(q, target, closing)
        for _ in range(iterations):
            step = self._step(jac, error, q[joints], damping)
            largest = np.max(np.abs(step))
            if largest > max_step:
                step *= max_step / largest
            q[joints] = np.clip(q[joints] + step, self.lower, self.upper)
            error, jac = self._linearise(q, target, closing)
            if largest < tolerance:
                break
        m = self.kinematics.matrix(q)
        return IKSolution(
            q,
            float(np.linalg.norm(error[:3])),
            float(np.arccos(np.clip(np.dot(closing, m[:3, 2]), -1.0, 1.0))),
            float(np.arccos(np.clip(-m[2, 0], -1.0, 1.0))),
        )
