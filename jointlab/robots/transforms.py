"""Rigid transforms in numpy, batched over leading dimensions.

Conventions: ``RPY(r, p, y) = Rz(y) · Ry(p) · Rx(r)`` (URDF's fixed-axis roll-pitch-yaw);
homogeneous transforms are 4x4; angles in radians, lengths in metres.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def rpy_matrix(rpy: np.ndarray) -> np.ndarray:
    """Rotation matrices for roll-pitch-yaw angles, shape ``(..., 3)`` -> ``(..., 3, 3)``."""
    rpy = np.asarray(rpy, dtype=np.float64)
    r, p, y = rpy[..., 0], rpy[..., 1], rpy[..., 2]
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    out = np.empty((*rpy.shape[:-1], 3, 3))
    out[..., 0, 0] = cy * cp
    out[..., 0, 1] = cy * sp * sr - sy * cr
    out[..., 0, 2] = cy * sp * cr + sy * sr
    out[..., 1, 0] = sy * cp
    out[..., 1, 1] = sy * sp * sr + cy * cr
    out[..., 1, 2] = sy * sp * cr - cy * sr
    out[..., 2, 0] = -sp
    out[..., 2, 1] = cp * sr
    out[..., 2, 2] = cp * cr
    return out


def matrix_to_rpy(matrix: np.ndarray) -> np.ndarray:
    """Roll-pitch-yaw of rotation matrices, ``(..., 3, 3)`` -> ``(..., 3)`` (inverse of RPY)."""
    m = np.asarray(matrix, dtype=np.float64)
    pitch = np.arcsin(np.clip(-m[..., 2, 0], -1.0, 1.0))
    near_lock = np.abs(m[..., 2, 0]) > 1.0 - 1e-12
    roll = np.where(near_lock, 0.0, np.arctan2(m[..., 2, 1], m[..., 2, 2]))
    yaw = np.where(
        near_lock,
        np.arctan2(-m[..., 0, 1], m[..., 1, 1]),
        np.arctan2(m[..., 1, 0], m[..., 0, 0]),
    )
    return np.stack([roll, pitch, yaw], axis=-1)


def axis_angle_matrix(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation about unit ``axis`` (shape ``(3,)``) by ``angle`` (shape ``(...)``).

    Returns matrices of shape ``(..., 3, 3)``.
    """
    axis = np.asarray(axis, dtype=np.float64)
    angle = np.asarray(angle, dtype=np.float64)
    x, y, z = axis
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    out = np.empty((*angle.shape, 3, 3))
    out[..., 0, 0] = t * x * x + c
    out[..., 0, 1] = t * x * y - s * z
    out[..., 0, 2] = t * x * z + s * y
    out[..., 1, 0] = t * x * y + s * z
    out[..., 1, 1] = t * y * y + c
    out[..., 1, 2] = t * y * z - s * x
    out[..., 2, 0] = t * x * z - s * y
    out[..., 2, 1] = t * y * z + s * x
    out[..., 2, 2] = t * z * z + c
    return out


def homogeneous(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """Build ``(..., 4, 4)`` transforms from ``(..., 3, 3)`` rotations and ``(..., 3)`` offsets."""
    rotation = np.asarray(rotation, dtype=np.float64)
    translation = np.asarray(translation, dtype=np.float64)
    shape = np.broadcast_shapes(rotation.shape[:-2], translation.shape[:-1])
    out = np.zeros((*shape, 4, 4))
    out[..., :3, :3] = rotation
    out[..., :3, 3] = translation
    out[..., 3, 3] = 1.0
    return out


def pose_matrix(position: np.ndarray, rpy: np.ndarray) -> np.ndarray:
    """``T(position) · RPY(rpy)`` as a 4x4 transform."""
    return homogeneous(rpy_matrix(rpy), position)


def quaternion_matrix(quaternion: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion in PyBullet order ``(x, y, z, w)``."""
    q = np.asarray(quaternion, dtype=np.float64)
    x, y, z, w = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def rotation_angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle in radians of ``a^T b`` for rotation matrices ``(..., 3, 3)``.

    Uses the rotation vector (not the trace), so it stays accurate for tiny angles.
    """
    from scipy.spatial.transform import Rotation

    relative = np.swapaxes(a, -1, -2) @ b
    flat = relative.reshape(-1, 3, 3)
    angles = Rotation.from_matrix(flat).magnitude()
    return angles.reshape(relative.shape[:-2])


def quaternion_from_rpy(rpy: Sequence[float]) -> tuple[float, float, float, float]:
    """Quaternion ``(x, y, z, w)`` (PyBullet's order) of roll-pitch-yaw ``Rz·Ry·Rx`` (rad)."""
    r, p, y = (0.5 * float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return (
        float(sr * cp * cy - cr * sp * sy),
        float(cr * sp * cy + sr * cp * sy),
        float(cr * cp * sy - sr * sp * cy),
        float(cr * cp * cy + sr * sp * sy),
    )
