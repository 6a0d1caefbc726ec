"""Rigid-body dynamics from the description's inertials, in numpy (no PyBullet).

Runs beside hardware as well as in simulation. Frames follow the geometry convention exactly
(the same chain as :func:`jointlab.robots.kinematics.forward_kinematics`); each element's
link inertial (mass, centre of gravity, inertia) lives in its moving frame ``F_i · M_i(q_i)``.

* :meth:`DynamicsModel.gravity_torque` — the Newton–Euler gravity terms, vectorised: for
  joint ``i`` with world axis ``u_i`` through ``o_i`` and the set ``S(i)`` of links it moves,
  the torque gravity exerts is ``u_i · Σ_{e∈S(i)} (c_e − o_i) × m_e g`` (rotary) or
  ``u_i · Σ m_e g`` (linear). Compensation is its negative. One chain of 4x4 products plus
  a few vector operations per call, cheap enough for every control tick.
* :meth:`DynamicsModel.mass_matrix` — the joint-space inertia ``M(q)``, reflected rotor
  inertia (``dynamics.armature``) included on its diagonal.
* :meth:`DynamicsModel.inverse_dynamics` — full recursive Newton–Euler ``τ(q, q̇, q̈)``
  (gravity, Coriolis/centrifugal and inertial terms, armature included), for feed-forward
  and checks.

The armature is the rotor's inertia seen through the gearbox: it adds ``armature · q̈`` to
its own joint's torque and nothing else (it has no weight and no coupling to other joints).
Friction and damping are not modelled here (they are joint-level, not rigid-body, terms).
Dependent (coupled) joints get the torque their own axis carries, like any other joint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jointlab.robots.description import BASE, JointType, RobotDescription
from jointlab.robots.transforms import pose_matrix

__all__ = ["AGREEMENT", "GRAVITY", "DynamicsModel", "rigid_body_model"]

#: Standard gravity in the world frame, m/s².
GRAVITY = (0.0, 0.0, -9.81)


def _skew(v: np.ndarray) -> np.ndarray:
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


#: ``(a @ _LEVI_CIVITA).reshape(3, 3)`` is ``skew(a)ᵀ``, so ``r @ skew(a)ᵀ = a x r`` for rows r.
_LEVI_CIVITA = np.stack([_skew(e).T for e in np.eye(3)]).reshape(3, 9)


class DynamicsModel:
    """Mass properties and kinematic tree of a description, prepared for fast evaluation.

    Args:
        description: The robot.
        gravity: Gravity vector in the world frame, m/s², shape ``(3,)``.
    """

    def __init__(self, description: RobotDescription, gravity: Any = GRAVITY) -> None:
        self.description = description
        self.gravity = np.asarray(gravity, dtype=np.float64).reshape(3)
        names = description.element_names
        index = {name: i for i, name in enumerate(names)}
        joint_index = {name: i for i, name in enumerate(description.joint_names)}
        n = len(names)
        order: list[int] = []
        pending = list(range(n))
        while pending:  # parents before children (validated descriptions have no cycles)
            ready = [
                e
                for e in pending
                if description.actuators[e].parent == BASE
                or index[description.actuators[e].parent] in order
            ]
            order.extend(ready)
            pending = [e for e in pending if e not in ready]
        self._order = order
        self._parent = [
            -1 if spec.parent == BASE else index[spec.parent] for spec in description.actuators
        ]
        self._plan = [(e, self._parent[e]) for e in order]
        self._joint_of_any = np.array(  # fixed elements read any joint: their terms are zero
            [joint_index.get(name, 0) for name in names], dtype=int
        )
        self._joint_of = np.array([joint_index.get(name, description.dof) for name in names])
        self._element_of_joint = np.array([index[name] for name in description.joint_names])
        a4 = np.zeros((n, 4, 4))
        b4 = np.zeros((n, 4, 4))
        c4 = np.zeros((n, 4, 4))
        d4 = np.zeros((n, 4, 4))
        self._rotary = np.zeros(n, dtype=bool)
        self._axis = np.zeros((n, 3))
        offsets_inv = np.zeros((n, 4, 4))
        for e, spec in enumerate(description.actuators):
            rotation = pose_matrix(np.zeros(3), np.array(spec.orientation))
            offset = pose_matrix(
                rotation[:3, :3] @ np.array([spec.length, 0.0, 0.0]), np.array(spec.orientation)
            )
            offsets_inv[e] = np.linalg.inv(offset)
            a4[e] = offset
            axis = np.array(spec.axis, dtype=np.float64)
            self._axis[e] = axis
            if spec.type is JointType.ROTARY:
                k4 = np.zeros((4, 4))
                k4[:3, :3] = _skew(axis)
                b4[e] = k4 @ offset
                c4[e] = k4 @ k4 @ offset
                self._rotary[e] = True
            elif spec.type is JointType.LINEAR:
                e4 = np.zeros((4, 4))
                e4[:3, 3] = axis
                d4[e] = e4 @ offset
        self._a4 = a4
        self._bcd = np.stack([b4, c4, d4], axis=1).reshape(n, 3, 16)
        self._base = pose_matrix(
            np.array(description.base.position), np.array(description.base.orientation)
        )
        # Mass properties, in each element's moving frame and its end frame.
        self.mass = np.array([s.link.mass if s.link else 0.0 for s in description.actuators])
        self._com_moving = np.array(
            [s.link.center_of_gravity if s.link else (0.0, 0.0, 0.0) for s in description.actuators]
        )
        self._inertia = np.array(
            [s.link.inertia if s.link else np.zeros((3, 3)) for s in description.actuators]
        )
        com_h = np.concatenate([self._com_moving, np.ones((n, 1))], axis=1)
        self._com_end = np.einsum("eij,ej->ei", offsets_inv, com_h)[:, :3]
        self._origin_end = offsets_inv[:, :3, 3]  # moving-frame origin seen from the end frame
        self._axis_end = np.einsum("eji,ej->ei", a4[:, :3, :3], self._axis)
        self._offsets_inv = offsets_inv
        # subtree[i, e]: element e moves with joint i.
        subtree = np.zeros((description.dof, n))
        for e in range(n):
            a = e
            while a >= 0:
                j = self._joint_of[a]
                if j < description.dof:
                    subtree[j, e] = 1.0
                a = self._parent[a]
        self._subtree = subtree
        self._subtree_mass = subtree @ self.mass
        joint_elements = self._element_of_joint
        self._joint_rotary = self._rotary[joint_elements]
        points = np.zeros((n, 4, 3))
        points[:, :3, 0] = self._com_end
        points[:, 3, 0] = 1.0
        points[:, :3, 1] = self._origin_end
        points[:, 3, 1] = 1.0
        points[:, :3, 2] = self._axis_end  # a direction: homogeneous 0
        self._points = points
        self._weighted_subtree = subtree * self.mass
        self._skew_gravity = _skew(self.gravity)
        #: Reflected rotor inertia per joint, kg·m² or kg, shape ``(dof,)``.
        self.armature = np.array(description.armature)
        self._armature_matrix = np.diag(self.armature)
        self._sqrt_mass = np.sqrt(self.mass)[:, None, None]
        self._moves = self._subtree.T[:, :, None]
        self._rotary_3 = self._joint_rotary[None, :, None]
        # The per-tick path works on transposed frames F_eᵀ, so that one product turns the
        # three points of every element into rows: rows[e] = pointsᵀ[e] @ F_eᵀ, (n, 3, 4).
        self._a4_t = np.ascontiguousarray(a4.transpose(0, 2, 1))
        bcd_t = np.stack([b4, c4, d4], axis=1).transpose(0, 1, 3, 2)
        self._bcd_t = np.ascontiguousarray(bcd_t).reshape(n, 3, 16)
        self._base_t = np.ascontiguousarray(self._base.T)
        self._points_t = np.ascontiguousarray(points.transpose(0, 2, 1))
        self._offsets_inv_rotation = np.ascontiguousarray(offsets_inv[:, :3, :3])
        self._same_order = bool(
            np.array_equal(self._joint_of_any, np.arange(n)) and n == description.dof
        )
        # gravity_torque as two products on the flattened rows: lever_i = Σ_e m_e c_e − M_i o_i
        # (its homogeneous entry is 0), and the torque about each axis is u_i · (g x lever_i).
        self._origin_rows = 3 * joint_elements + 1
        self._axis_rows = 3 * joint_elements + 2
        lever_map = np.zeros((description.dof, 3 * n))
        lever_map[:, 0::3] = self._weighted_subtree
        lever_map[np.arange(description.dof), self._origin_rows] -= self._subtree_mass
        self._lever_map = lever_map
        turn = np.zeros((4, 4))
        turn[:3, :3] = -self._skew_gravity  # lever @ turn == g x lever == −(lever x g)
        self._turn = turn
        self._all_rotary = bool(self._joint_rotary.all())

    # ------------------------------------------------------------------ kinematics
    def end_frames(self, q: Any) -> np.ndarray:
        """End frame ``F_end`` of every element for joint positions ``q`` (shape ``(dof,)``).

        Returns:
            World transforms, shape ``(n_elements, 4, 4)``, in element (file) order.
        """
        return self._frames_t(q).transpose(0, 2, 1)

    def _frames_t(self, q: Any) -> np.ndarray:
        """The end frames transposed, ``F_eᵀ``, shape ``(n_elements, 4, 4)``."""
        q = np.asarray(q, dtype=np.float64)
        qe = q if self._same_order else q[self._joint_of_any]
        coef = np.empty((qe.shape[0], 1, 3))
        np.sin(qe, out=coef[:, 0, 0])
        np.subtract(1.0, np.cos(qe), out=coef[:, 0, 1])
        coef[:, 0, 2] = qe
        local = (coef @ self._bcd_t).reshape(-1, 4, 4)
        local += self._a4_t
        locals_ = list(local)
        frames: list[Any] = [None] * len(locals_)
        base = self._base_t
        for e, p in self._plan:  # 2-D dot on a list: cheaper than matmul or writes in place
            frames[e] = locals_[e].dot(base if p < 0 else frames[p])
        return np.array(frames)

    # ------------------------------------------------------------------ gravity
    def gravity_torque(self, q: Any) -> np.ndarray:
        """Joint torques that hold the robot still against gravity at ``q``.

        Args:
            q: Joint positions, rad or m, shape ``(dof,)``.

        Returns:
            Compensation torques in N·m (N for linear joints), shape ``(dof,)``.
        """
        return self._gravity(self._rows(self._frames_t(q)))

    def gravity_and_mass_matrix(self, q: Any) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`gravity_torque` and :meth:`mass_matrix` at ``q`` from one kinematics pass.

        Args:
            q: Joint positions, rad or m, shape ``(dof,)``.

        Returns:
            Compensation torques, shape ``(dof,)``, and ``M(q)``, shape ``(dof, dof)``.
        """
        frames_t = self._frames_t(q)
        rows = self._rows(frames_t)
        return self._gravity(rows), self._joint_space(*self._jacobians_from(frames_t, rows))

    def _rows(self, frames_t: np.ndarray) -> np.ndarray:
        """Each element's centre of gravity, joint origin and joint axis in the world frame.

        One batched product of the homogeneous points (constant in each end frame): rows
        ``3e``, ``3e + 1``, ``3e + 2`` of the result, shape ``(3 n, 4)``.
        """
        return (self._points_t @ frames_t).reshape(-1, 4)

    def _gravity(self, rows: np.ndarray) -> np.ndarray:
        """Compensation torques from the world rows of :meth:`_rows`, shape ``(dof,)``."""
        axis = rows[self._axis_rows]
        lever = self._lever_map.dot(rows)
        # compensation = −u · (lever x g) = u · (g x lever), summed over the joint's subtree
        compensation = np.add.reduce(axis * lever.dot(self._turn), axis=1)
        if self._all_rotary:
            return compensation
        return np.where(
            self._joint_rotary, compensation, -(axis[:, :3] @ self.gravity) * self._subtree_mass
        )

    # ------------------------------------------------------------------ inertia
    def _jacobians(self, q: Any) -> tuple[np.ndarray, ...]:
        """World centres of gravity ``(n, 3)``, inertias ``(n, 3, 3)`` and CoG Jacobians."""
        frames_t = self._frames_t(q)
        rows = self._rows(frames_t)
        com = rows[0::3, :3]
        return (com, *self._jacobians_from(frames_t, rows))

    def _jacobians_from(
        self, frames_t: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World inertias ``(n, 3, 3)`` and the CoG Jacobians ``Jv``, ``Jω`` ``(n, dof, 3)``."""
        return (self._world_inertias(frames_t), *self._cog_jacobians(rows))

    def _cog_jacobians(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The CoG Jacobians ``Jv``, ``Jω`` ``(n, dof, 3)`` from the world rows."""
        com = rows[0::3, :3]
        origin = rows[self._origin_rows, :3]
        axis = rows[self._axis_rows, :3]
        r = com[None, :, :] - origin[:, None, :]  # (dof, n, 3)
        # axis_j x r: r @ skew(axis_j)ᵀ, the skew matrices from one product with Levi-Civita
        skew_t = (axis @ _LEVI_CIVITA).reshape(-1, 3, 3)
        cross = (r @ skew_t).transpose(1, 0, 2)  # (n, dof, 3)
        moves = self._moves
        if self._all_rotary:
            return cross * moves, axis[None] * moves
        jv = np.where(self._rotary_3, cross, axis[None]) * moves
        jw = self._rotary_3 * axis[None] * moves
        return jv, jw

    def _world_inertias(self, frames_t: np.ndarray) -> np.ndarray:
        """Each element's inertia tensor in the world frame, ``(n, 3, 3)``."""
        rotation = frames_t[:, :3, :3].transpose(0, 2, 1) @ self._offsets_inv_rotation
        return rotation @ self._inertia @ np.swapaxes(rotation, 1, 2)

    def mass_matrix(self, q: Any) -> np.ndarray:
        """Joint-space inertia matrix ``M(q)``, shape ``(dof, dof)`` (kg·m², kg, kg·m).

        ``M = Σ_links m Jvᵀ Jv + Jωᵀ I Jω + diag(armature)`` with each link's centre-of-gravity
        Jacobians built from the world axes and origins of the joints that move it (vectorised).
        The base is held fixed (see :meth:`joint_inertia` for a floating one).
        """
        _, inertia, jv, jw = self._jacobians(q)
        return self._joint_space(inertia, jv, jw)

    def _joint_space(self, inertia: np.ndarray, jv: np.ndarray, jw: np.ndarray) -> np.ndarray:
        """``Σ_e m_e Jv_eᵀ Jv_e + Jω_eᵀ I_e Jω_e + diag(armature)`` as two matrix products.

        ``jv``, ``jw``: ``(n, dof, 3)``; ``inertia``: ``(n, 3, 3)`` (world frame).
        """
        dof = jv.shape[1]
        linear = (jv * self._sqrt_mass).transpose(1, 0, 2).reshape(dof, -1)
        turned = (jw @ inertia).transpose(1, 0, 2).reshape(dof, -1)
        angular = jw.transpose(1, 0, 2).reshape(dof, -1)
        return linear @ linear.T + turned @ angular.T + self._armature_matrix

    def joint_inertia(self, q: Any) -> np.ndarray:
        """The inertia the joint motors drive, shape ``(dof, dof)``: ``M(q)`` with the base free.

        For a fixed base this is :meth:`mass_matrix`. A floating base moves in reaction to the
        joints, so they drive less: the Schur complement ``M_qq − M_qbᵀ·M_bb⁻¹·M_qb`` of the
        base's six degrees of freedom (the base body is a solid of ``base.mass`` with inertia
        ``base.mass·base.radius²/2`` about each axis, as in the exported URDF). Ground contact
        lies between the two; the free base is the lighter, so the safer one to tune for.
        """
        com, inertia, jv, jw = self._jacobians(q)
        mqq = self._joint_space(inertia, jv, jw)
        base = self.description.base
        if base.fixed:
            return mqq
        # Base twist (v, w) at the base origin moves CoG e by v + w x r_e: Jv_b = [1, -[r_e]x].
        r = com - self._base[:3, 3]
        n = r.shape[0]
        jvb = np.zeros((n, 3, 6))
        jvb[:, :, :3] = np.eye(3)
        jvb[:, :, 3:] = -np.stack([_skew(v) for v in r])
        jwb = np.zeros((n, 3, 6))
        jwb[:, :, 3:] = np.eye(3)
        mbb = np.einsum("exi,e,exj->ij", jvb, self.mass, jvb) + np.einsum(
            "exi,exy,eyj->ij", jwb, inertia, jwb
        )
        mbb[:3, :3] += base.mass * np.eye(3)
        mbb[3:, 3:] += base.mass * base.radius**2 / 2.0 * np.eye(3)
        mbq = np.einsum("exi,e,ejx->ij", jvb, self.mass, jv) + np.einsum(
            "exi,exy,ejy->ij", jwb, inertia, jw
        )
        return mqq - mbq.T @ np.linalg.solve(mbb, mbq)

    # ------------------------------------------------------------------ full dynamics
    def inverse_dynamics(self, q: Any, qd: Any, qdd: Any) -> np.ndarray:
        """Recursive Newton–Euler: the joint torques that produce ``qdd`` at ``(q, qd)``.

        Args:
            q: Joint positions, rad or m, shape ``(dof,)``.
            qd: Joint velocities, rad/s or m/s, shape ``(dof,)``.
            qdd: Joint accelerations, rad/s² or m/s², shape ``(dof,)``.

        Returns:
            Torques in N·m (N for linear joints), shape ``(dof,)``, gravity included.
        """
        dof = self.description.dof
        qd_e = np.append(np.asarray(qd, dtype=np.float64), 0.0)[self._joint_of]
        qdd_e = np.append(np.asarray(qdd, dtype=np.float64), 0.0)[self._joint_of]
        ends = self.end_frames(q)
        moving = ends @ self._offsets_inv
        n = len(self._order)
        omega = np.zeros((n, 3))
        alpha = np.zeros((n, 3))
        acc_origin = np.zeros((n, 3))
        origin = moving[:, :3, 3]
        axis = np.einsum("eij,ej->ei", moving[:, :3, :3], self._axis)
        com = np.einsum("eij,ej->ei", moving[:, :3, :3], self._com_moving) + origin
        base_origin = self._base[:3, 3]
        is_joint = self._joint_of < dof
        for e in self._order:
            p = self._parent[e]
            w_p = np.zeros(3) if p < 0 else omega[p]
            al_p = np.zeros(3) if p < 0 else alpha[p]
            a_p = -self.gravity if p < 0 else acc_origin[p]
            o_p = base_origin if p < 0 else origin[p]
            r = origin[e] - o_p
            a_o = a_p + np.cross(al_p, r) + np.cross(w_p, np.cross(w_p, r))
            w, al = w_p, al_p
            if is_joint[e] and self._rotary[e]:
                w = w_p + axis[e] * qd_e[e]
                al = al_p + axis[e] * qdd_e[e] + np.cross(w_p, axis[e] * qd_e[e])
            elif is_joint[e]:
                a_o = a_o + 2 * np.cross(w_p, axis[e] * qd_e[e]) + axis[e] * qdd_e[e]
            omega[e], alpha[e], acc_origin[e] = w, al, a_o
        force = np.zeros((n, 3))
        moment = np.zeros((n, 3))  # about each element's moving-frame origin
        tau = self.armature * np.asarray(qdd, dtype=np.float64)
        for e in reversed(self._order):
            r_c = com[e] - origin[e]
            a_c = (
                acc_origin[e]
                + np.cross(alpha[e], r_c)
                + np.cross(omega[e], np.cross(omega[e], r_c))
            )
            rot = moving[e, :3, :3]
            inertia = rot @ self._inertia[e] @ rot.T
            f = self.mass[e] * a_c + force[e]
            m = (
                inertia @ alpha[e]
                + np.cross(omega[e], inertia @ omega[e])
                + np.cross(r_c, self.mass[e] * a_c)
                + moment[e]
            )
            if is_joint[e]:
                j = self._joint_of[e]
                tau[j] += axis[e] @ (m if self._rotary[e] else f)
            p = self._parent[e]
            if p >= 0:
                force[p] += f
                moment[p] += m + np.cross(origin[e] - origin[p], f)
        return tau


# ====================================================================== evaluators
#: Largest difference from the numpy model :func:`rigid_body_model` accepts of an evaluator,
#: relative to the largest entry of ``M`` (and of ``g``, plus 1e-9 N·m).
AGREEMENT = 1e-5


def _agrees(fast: Any, reference: DynamicsModel) -> bool:
    """Whether ``fast`` gives the reference's ``g`` and ``M`` at two configurations."""
    description = reference.description
    lower, upper = description.lower, description.upper
    middle = np.where(np.isfinite(lower) & np.isfinite(upper), 0.5 * (lower + upper), 0.0)
    spread = np.where(np.isfinite(upper - lower), 0.3 * (upper - lower), 0.5)
    for q in (description.home, middle + spread * np.sin(1.0 + np.arange(description.dof))):
        gravity, mass = reference.gravity_and_mass_matrix(q)
        fast_gravity, fast_mass = fast.gravity_and_mass_matrix(q)
        if not (
            np.abs(fast_gravity - gravity).max(initial=0.0)
            <= AGREEMENT * np.abs(gravity).max(initial=0.0) + 1e-9
            and np.abs(fast_mass - mass).max(initial=0.0)
            <= AGREEMENT * np.abs(mass).max(initial=0.0)
        ):
            return False
    return True


def rigid_body_model(
    description: RobotDescription,
    gravity: Any = GRAVITY,
    evaluator: Callable[[RobotDescription, Any], Any] | None = None,
) -> Any:
    """The rigid-body model of ``description``: ``evaluator``'s where it agrees, else numpy's.

    Args:
        description: The robot.
        gravity: Gravity in the world frame, m/s², shape ``(3,)``.
        evaluator: A faster exact evaluator of the same model, ``evaluator(description,
            gravity)`` giving an object with :class:`DynamicsModel`'s dynamics methods
            (``gravity_torque``, ``mass_matrix``, ``gravity_and_mass_matrix``,
            ``inverse_dynamics``) or None when it cannot (an engine offers one: see
            ``Robot.dynamics_model``; PyBullet's is ``jointlab.sim.pybullet.bullet_model``).

    Returns:
        The evaluator's model when its ``g`` and ``M`` agree with :class:`DynamicsModel`
        within :data:`AGREEMENT` at two configurations; the numpy :class:`DynamicsModel`
        otherwise (no evaluator given, or it cannot or does not agree).
    """
    reference = DynamicsModel(description, gravity)
    if evaluator is None:
        return reference
    fast = evaluator(description, gravity)
    if fast is not None and _agrees(fast, reference):
        return fast
    return reference
