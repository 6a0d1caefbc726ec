"""Rigid-body joint torques for many samples at once (batched recursive Newton–Euler).

The same model as :meth:`jointlab.controllers.DynamicsModel.inverse_dynamics` (links'
mass, centre of gravity and inertia from the description, gravity, Coriolis and
centrifugal terms, frames by :func:`jointlab.robots.forward_kinematics`), evaluated for a
whole log at once: the recursion runs over the robot's elements, each step a numpy
operation over every sample. The controllers' version evaluates one state per call, which
suits a control tick but would take minutes over the thousands of samples a fit uses.

Joint-level terms (friction, damping, reflected rotor inertia) are not in it: they are what
identification estimates on top of it.
"""

from __future__ import annotations

import numpy as np

from jointlab.controllers.dynamics import GRAVITY
from jointlab.robots import JointType, RobotDescription, forward_kinematics
from jointlab.robots.description import BASE

__all__ = ["rigid_body", "rigid_body_torque"]


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of ``(T, 3)`` arrays (cheaper than ``np.cross`` for 3-vectors)."""
    return np.stack(
        [
            a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
            a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
            a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0],
        ],
        axis=1,
    )


def rigid_body_torque(
    description: RobotDescription,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    gravity: np.ndarray | tuple[float, float, float] = GRAVITY,
) -> np.ndarray:
    """Joint torques that produce ``qdd`` at ``(q, qd)``, sample by sample.

    Args:
        description: The robot (fixed base).
        q: Joint positions, rad or m, shape ``(T, dof)``.
        qd: Joint velocities, rad/s or m/s, shape ``(T, dof)``.
        qdd: Joint accelerations, rad/s² or m/s², shape ``(T, dof)``.
        gravity: Gravity in the world frame, m/s².

    Returns:
        Torques in N·m (N for linear joints), shape ``(T, dof)``, gravity included.
    """
    return rigid_body(description, q, qd, qdd, gravity)[0]


def rigid_body(
    description: RobotDescription,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    gravity: np.ndarray | tuple[float, float, float] = GRAVITY,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rigid_body_torque`, and each moved link's acceleration along its joint axis.

    The second array, shape ``(T, dof)``, is ``u·α`` for a rotary joint (the angular
    acceleration of the link it moves, about its axis ``u``; rad/s²) and ``u·a`` for a
    linear one (the acceleration of the link's centre of gravity along ``u``; m/s²). It
    equals ``qdd`` when only that joint moves, and adds the parent joints' accelerations
    about parallel axes otherwise: what an inertia about the axis carried by the link (a
    rotor modelled as part of it) costs the joint.
    """
    q, qd, qdd = (np.atleast_2d(np.asarray(a, dtype=np.float64)) for a in (q, qd, qdd))
    samples, dof = q.shape
    frames = forward_kinematics(description, q).frames  # (T, n, 4, 4) moving frames
    names = description.element_names
    index = {name: e for e, name in enumerate(names)}
    joint_of = {name: j for j, name in enumerate(description.joint_names)}
    n = len(names)
    order: list[int] = []
    pending = list(range(n))
    while pending:  # parents before children
        ready = [
            e
            for e in pending
            if description.actuators[e].parent == BASE
            or index[description.actuators[e].parent] in order
        ]
        order.extend(ready)
        pending = [e for e in pending if e not in ready]
    parent = [-1 if spec.parent == BASE else index[spec.parent] for spec in description.actuators]
    rotation = frames[:, :, :3, :3]
    origin = frames[:, :, :3, 3]
    zero = np.zeros((samples, 3))
    omega = [zero] * n
    alpha = [zero] * n
    accel = [zero] * n
    axis = [zero] * n
    base_origin = np.asarray(description.base.position, dtype=np.float64)
    minus_g = np.broadcast_to(-np.asarray(gravity, dtype=np.float64), (samples, 3))
    for e in order:
        spec = description.actuators[e]
        p = parent[e]
        w_p, al_p = (zero, zero) if p < 0 else (omega[p], alpha[p])
        a_p = minus_g if p < 0 else accel[p]
        r = origin[:, e] - (base_origin if p < 0 else origin[:, p])
        a_o = a_p + _cross(al_p, r) + _cross(w_p, _cross(w_p, r))
        w, al = w_p, al_p
        if spec.is_joint:
            j = joint_of[spec.name]
            u = rotation[:, e] @ np.asarray(spec.axis, dtype=np.float64)
            axis[e] = u
            rate = u * qd[:, j, None]
            if spec.type is JointType.ROTARY:
                w = w_p + rate
                al = al_p + u * qdd[:, j, None] + _cross(w_p, rate)
            else:
                a_o = a_o + 2 * _cross(w_p, rate) + u * qdd[:, j, None]
        omega[e], alpha[e], accel[e] = w, al, a_o
    force = [zero] * n
    moment = [zero] * n  # about each element's moving-frame origin
    tau = np.zeros((samples, dof))
    along = np.zeros((samples, dof))
    for e in reversed(order):
        spec = description.actuators[e]
        f, m = force[e], moment[e]
        if spec.link is not None:
            mass = spec.link.mass
            r_c = rotation[:, e] @ np.asarray(spec.link.center_of_gravity, dtype=np.float64)
            a_c = accel[e] + _cross(alpha[e], r_c) + _cross(omega[e], _cross(omega[e], r_c))
            inertia = (
                rotation[:, e] @ np.asarray(spec.link.inertia) @ np.swapaxes(rotation[:, e], 1, 2)
            )
            i_alpha = np.einsum("tij,tj->ti", inertia, alpha[e])
            i_omega = np.einsum("tij,tj->ti", inertia, omega[e])
            f = f + mass * a_c
            m = m + i_alpha + _cross(omega[e], i_omega) + _cross(r_c, mass * a_c)
        if spec.is_joint:
            j = joint_of[spec.name]
            rotary = spec.type is JointType.ROTARY
            tau[:, j] = np.einsum("ti,ti->t", axis[e], m if rotary else f)
            moved = alpha[e] if rotary else accel[e]
            if not rotary and spec.link is not None:
                moved = a_c
            along[:, j] = np.einsum("ti,ti->t", axis[e], moved)
        p = parent[e]
        if p >= 0:
            force[p] = force[p] + f
            moment[p] = moment[p] + m + _cross(origin[:, e] - origin[:, p], f)
    return tau, along
