"""Loading a :class:`RobotDescription` into a :class:`World` as one PyBullet multibody.

:class:`RobotBody` holds every PyBullet call about the robot's body except the torque loop:
loading ``description_to_urdf(description)``, the joint-name-to-index map, motor and damping
set-up,
couplings (a ``JOINT_GEAR`` constraint per single-leader dependent joint), brakes, mass
randomisation, resets and link poses. Joint-space arrays are in the description's order.

PyBullet has no joint armature, so the body is loaded from
``description_to_urdf(description, armature=True)``: each
joint's reflected rotor inertia is part of the link it moves (see
:func:`jointlab.robots.inertials.realised_inertial`). On a linear joint that is extra link mass,
whose weight the torque loop cancels (see :meth:`RobotBody._find_weightless`).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np
import pybullet

from jointlab.errors import SimulationError
from jointlab.robots.description import BASE, JointType, RobotDescription
from jointlab.robots.kinematics import forward_kinematics
from jointlab.robots.transforms import homogeneous, quaternion_from_rpy, quaternion_matrix
from jointlab.robots.urdf_io import description_to_urdf
from jointlab.sim.pybullet.friction import contact_friction
from jointlab.sim.scene import link_friction, link_torsional_friction, mounted_elements

__all__ = ["RobotBody"]

#: A brake holds up to this multiple of the joint's effort limit.
BRAKE_TORQUE_FACTOR = 10.0
#: A coupling mechanism transmits up to this multiple of the dependent joint's effort limit.
COUPLING_FORCE_FACTOR = 100.0
#: Position error correction per physics step of coupling constraints (0..1).
COUPLING_ERP = 0.2


@dataclass(frozen=True)
class SoftCoupling:
    """Couplings with several leaders, enforced by a stiff explicit PD on the constraint.

    Row ``k`` is the constraint ``jacobian[k] @ q = offset[k]``, i.e.
    ``q_dep - sum(alpha * q_lead) = alpha_self * home``. The PD force ``lambda`` acts along
    ``jacobian[k]`` (on the dependent joint and, as reaction, on its leaders).
    """

    jacobian: np.ndarray  # (rows, dof)
    offset: np.ndarray  # (rows,)
    stiffness: np.ndarray  # (rows,) N·m/rad or N/m
    damping: np.ndarray  # (rows,) N·m·s/rad or N·s/m

    def torque(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Joint torques, shape ``(dof,)``, that pull ``q`` back onto the couplings."""
        error = (self.jacobian * q).sum(axis=1) - self.offset
        rate = (self.jacobian * qd).sum(axis=1)
        force = -(self.stiffness * error + self.damping * rate)
        return (self.jacobian * force[:, None]).sum(axis=0)


class RobotBody:
    """A description loaded into a world. Not part of the public API; see ``SimRobot``."""

    def __init__(self, world: Any, description: RobotDescription) -> None:
        """Load ``description`` into ``world`` (the ``PybulletWorld`` that makes this body)."""
        self.world = world
        self.description = description
        self.client_id = cid = world.client_id
        base = description.base
        with tempfile.TemporaryDirectory(prefix="jointlab-") as folder:
            path = os.path.join(folder, "robot.urdf")  # never a path derived from a name
            with open(path, "w") as handle:
                handle.write(description_to_urdf(description, armature=True))
            try:
                self.body_id = pybullet.loadURDF(
                    path,
                    basePosition=base.position,
                    baseOrientation=quaternion_from_rpy(base.orientation),
                    useFixedBase=bool(base.fixed),
                    flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                    physicsClientId=cid,
                )
            except pybullet.error as exc:
                raise SimulationError(
                    f"PyBullet cannot load robot {description.name!r}: {exc}"
                ) from exc
        body = self.body_id
        names = [
            pybullet.getJointInfo(body, j, physicsClientId=cid)[1].decode()
            for j in range(pybullet.getNumJoints(body, physicsClientId=cid))
        ]
        #: PyBullet link index of every element, tool frame and ``"base"`` (-1).
        self.links = {name: index for index, name in enumerate(names)}
        for tool in description.tool_names:
            self.links[tool] = names.index(f"{tool}_joint")
        self.links["base"] = -1
        #: PyBullet joint indices in joint-space order.
        self.indices = [self.links[name] for name in description.joint_names]
        dof = description.dof
        # Default velocity motors off, once: the torque loop never uses motor modes.
        pybullet.setJointMotorControlArray(
            body,
            self.indices,
            pybullet.VELOCITY_CONTROL,
            forces=[0.0] * dof,
            physicsClientId=cid,
        )
        # No hidden damping: joint damping comes from the description (URDF <dynamics>).
        self.link_indices = [-1] + [self.links[s.name] for s in description.actuators]
        self.nominal_mass = []
        self.nominal_inertia = []
        for link, friction, torsional in zip(
            self.link_indices,
            link_friction(description),
            link_torsional_friction(description),
            strict=True,
        ):
            pybullet.changeDynamics(
                body, link, linearDamping=0.0, angularDamping=0.0, physicsClientId=cid
            )
            # A call of its own: given with linearDamping, PyBullet sets the friction of the
            # base, not of the link (the links kept Bullet's 0.5 that way).
            pybullet.changeDynamics(
                body, link, physicsClientId=cid, **contact_friction(friction, torsional)
            )
            info = pybullet.getDynamicsInfo(body, link, physicsClientId=cid)
            self.nominal_mass.append(info[0])
            self.nominal_inertia.append(info[2])
        # PyBullet clamps every joint's speed at 100 rad/s (or m/s) by default, one value per
        # body (set through the base): allow ten times the fastest joint's velocity limit (a
        # dribbler runs at 200 rad/s), as a guard against blow-ups only.
        fastest = float(np.max(description.velocity_limit, initial=0.0))
        pybullet.changeDynamics(
            body, -1, maxJointVelocity=max(100.0, 10.0 * fastest), physicsClientId=cid
        )
        self._find_weightless()
        self._unmount_from_ground()
        self._brake_mask = np.zeros(dof, dtype=bool)
        self.gears: list[int] = []
        self.soft_coupling: SoftCoupling | None = None
        self._make_couplings()

    def _unmount_from_ground(self) -> None:
        """No collisions between the ground plane and a fixed base's mounted links.

        See :func:`jointlab.sim.scene.mounted_elements`; PyBullet filters the pairs with
        ``setCollisionFilterPair``.
        """
        ground = self.world.ground_id
        if ground is None or not self.description.base.fixed:
            return
        for link in [-1, *(self.links[n] for n in mounted_elements(self.description))]:
            pybullet.setCollisionFilterPair(
                ground, self.body_id, -1, link, enableCollision=0, physicsClientId=self.client_id
            )

    def _find_weightless(self) -> None:
        """Sort the linear joints whose link carries its armature as mass (it must not weigh).

        When nothing above such a link can turn it (a fixed base and only linear or fixed
        elements up the chain), its weight loads each joint by a constant joint force: the
        torque loop cancels that with a constant term (:attr:`weightless_torque`). Otherwise
        an upward force at the link's centre of mass cancels it every physics step
        (:attr:`weightless`).
        """
        description = self.description
        specs = {s.name: s for s in description.actuators}
        home = forward_kinematics(description, description.apply_coupling(description.home))
        #: (position in ``link_indices``, PyBullet link index, armature in kg), lifted per step.
        self.weightless: list[tuple[int, int, float]] = []
        #: (position in ``link_indices``, armature in kg, ``(dof, 3)`` map from a world force
        #: on the link to joint forces), cancelled by a constant torque.
        self.weightless_torque: list[tuple[int, float, np.ndarray]] = []
        for k, spec in enumerate(description.actuators):
            if spec.type is not JointType.LINEAR or spec.dynamics.armature <= 0:
                continue
            chain, name = [], spec.name
            while name != BASE:
                chain.append(specs[name])
                name = specs[name].parent
            if not description.base.fixed or any(a.type is JointType.ROTARY for a in chain):
                self.weightless.append((k + 1, self.links[spec.name], spec.dynamics.armature))
                continue
            transfer = np.zeros((description.dof, 3))
            for element in chain:
                if element.is_joint:
                    rotation = home.frame(element.name)[:3, :3]
                    transfer[description.joint_names.index(element.name)] = rotation @ np.array(
                        element.axis
                    )
            self.weightless_torque.append((k + 1, spec.dynamics.armature, transfer))

    # ---------------------------------------------------------------- couplings
    def _make_couplings(self) -> None:
        description = self.description
        cid, body = self.client_id, self.body_id
        rows = []
        for i, spec in enumerate(description.joints):
            if spec.coupling is None:
                continue
            offset = spec.coupling.alpha_self * spec.home
            leaders = spec.coupling.alpha_leading
            if len(leaders) == 1:
                ((leader, alpha),) = leaders
                gear = pybullet.createConstraint(
                    body,
                    self.indices[i],
                    body,
                    self.links[leader],
                    jointType=pybullet.JOINT_GEAR,
                    jointAxis=(1, 0, 0),
                    parentFramePosition=(0, 0, 0),
                    childFramePosition=(0, 0, 0),
                    physicsClientId=cid,
                )
                # The gear constraint holds q_dep + ratio * q_lead = relativePositionTarget.
                pybullet.changeConstraint(
                    gear,
                    gearRatio=-float(alpha),
                    relativePositionTarget=float(offset),
                    maxForce=COUPLING_FORCE_FACTOR * spec.limits.effort,
                    erp=COUPLING_ERP,
                    physicsClientId=cid,
                )
                self.gears.append(gear)
                continue
            row = np.zeros(description.dof)
            row[i] = 1.0
            for leader, alpha in leaders:
                row[description.joint_names.index(leader)] -= alpha
            rows.append((row, offset))
        if rows:
            jacobian = np.array([r for r, _ in rows])
            self.soft_coupling = SoftCoupling(
                jacobian, np.array([o for _, o in rows]), np.zeros(len(rows)), np.zeros(len(rows))
            )

    def tune(self, dt: float) -> np.ndarray:
        """Effective joint inertias at home, shape ``(dof,)``; retunes the soft couplings.

        The inertia is the diagonal of the joint-space mass matrix (kg·m² or kg), armature
        included; with a floating base, of its Schur complement (the base moves in reaction,
        as in :meth:`jointlab.robots.dynamics.DynamicsModel.joint_inertia`). Soft couplings
        get a stiffness ``0.3 m/dt²`` and damping ``0.8 m/dt`` along each constraint
        (``m = 1/(J M⁻¹ Jᵀ)``), which settles an isolated constraint in a few physics steps.
        """
        description = self.description
        order = np.argsort(self.indices)
        positions = np.asarray(description.apply_coupling(description.home))[order]
        matrix = np.array(
            pybullet.calculateMassMatrix(
                self.body_id, positions.tolist(), physicsClientId=self.client_id
            )
        )
        base = matrix.shape[0] - description.dof  # a floating base's 6 dofs come first
        if base:
            coupling = matrix[:base, base:]
            matrix = matrix[base:, base:] - coupling.T @ np.linalg.solve(
                matrix[:base, :base], coupling
            )
        inverse_order = np.empty_like(order)
        inverse_order[order] = np.arange(order.size)
        matrix = matrix[np.ix_(inverse_order, inverse_order)]
        #: PyBullet's joint-space inertia at home (armature included), ``(dof, dof)``.
        self.home_mass_matrix = matrix
        if self.soft_coupling is not None:
            jac = self.soft_coupling.jacobian
            mass = 1.0 / np.einsum("ij,jk,ik->i", jac, np.linalg.inv(matrix), jac)
            self.soft_coupling = SoftCoupling(
                jac, self.soft_coupling.offset, 0.3 * mass / dt**2, 0.8 * mass / dt
            )
        return np.diag(matrix).copy()

    # ---------------------------------------------------------------- state
    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions and velocities, shape ``(dof,)`` each."""
        positions, velocities, _, _ = zip(
            *pybullet.getJointStates(self.body_id, self.indices, physicsClientId=self.client_id),
            strict=True,
        )
        return np.array(positions), np.array(velocities)

    def reset(self, q: np.ndarray, qd: np.ndarray) -> None:
        """Put the joints at ``q``/``qd`` and the base back at its pose, at rest.

        A fixed base is put back too: a physics step that diverged (NaN) leaves even a fixed
        base's pose NaN, and everything computed from it after the reset would be NaN again.
        """
        cid, body = self.client_id, self.body_id
        base = self.description.base
        pybullet.resetBasePositionAndOrientation(
            body, base.position, quaternion_from_rpy(base.orientation), physicsClientId=cid
        )
        pybullet.resetBaseVelocity(body, (0, 0, 0), (0, 0, 0), physicsClientId=cid)
        pybullet.resetJointStatesMultiDof(
            body,
            self.indices,
            targetValues=[[v] for v in q.tolist()],
            targetVelocities=[[v] for v in qd.tolist()],
            physicsClientId=cid,
        )

    # ---------------------------------------------------------------- parameters
    def set_damping(self, damping: np.ndarray) -> None:
        """Viscous joint damping (PyBullet's native joint damping), shape ``(dof,)``."""
        for index, value in zip(self.indices, damping.tolist(), strict=True):
            pybullet.changeDynamics(
                self.body_id, index, jointDamping=value, physicsClientId=self.client_id
            )

    def set_mass_scale(self, scale: np.ndarray) -> None:
        """Scale every link's nominal mass and inertia (base first, then elements)."""
        for link, mass, inertia, factor in zip(
            self.link_indices,
            self.nominal_mass,
            self.nominal_inertia,
            scale.tolist(),
            strict=True,
        ):
            pybullet.changeDynamics(
                self.body_id,
                link,
                mass=mass * factor,
                localInertiaDiagonal=[v * factor for v in inertia],
                physicsClientId=self.client_id,
            )

    # ---------------------------------------------------------------- brakes
    def set_brakes(self, mask: np.ndarray, positions: np.ndarray) -> None:
        """Lock the joints in ``mask`` at ``positions``; release the others that were locked.

        A brake is a PyBullet position motor (implicit, so it holds without drift) limited to
        ``BRAKE_TORQUE_FACTOR`` times the effort limit; released joints get their motor
        switched off again (force 0), leaving the torque loop alone.
        """
        cid, body = self.client_id, self.body_id
        indices = np.asarray(self.indices)
        release = self._brake_mask & ~mask
        if release.any():
            pybullet.setJointMotorControlArray(
                body,
                indices[release].tolist(),
                pybullet.VELOCITY_CONTROL,
                forces=[0.0] * int(release.sum()),
                physicsClientId=cid,
            )
        if mask.any():
            effort = np.asarray(self.description.effort_limit)[mask] * BRAKE_TORQUE_FACTOR
            pybullet.setJointMotorControlArray(
                body,
                indices[mask].tolist(),
                pybullet.POSITION_CONTROL,
                targetPositions=positions[mask].tolist(),
                targetVelocities=[0.0] * int(mask.sum()),
                forces=effort.tolist(),
                physicsClientId=cid,
            )
        self._brake_mask = mask.copy()

    # ---------------------------------------------------------------- geometry
    def link_index(self, name: str) -> int:
        """PyBullet link index of an element, a ``<leaf>_tool`` frame or ``"base"`` (-1)."""
        if name not in self.links or name.endswith("_tool_joint"):
            known = [*self.description.element_names, *self.description.tool_names, "base"]
            raise SimulationError(
                f"robot {self.description.name!r} has no link {name!r}; known: {known}"
            )
        return self.links[name]

    #: No engine frame positions for tasks (``SimRobot.frame_locator``): ``getLinkState``
    #: costs about what the numpy kinematics of a tool does (3-4 µs against 6.5 µs for arm6,
    #: warm, before the tuple it returns is read), and its positions come from the URDF's
    #: rounded numbers (1e-8 m off the description's).
    cheap_kinematics = False

    def link_pose(self, name: str) -> np.ndarray:
        """World pose (4x4) of an element's moving frame, a tool frame or the base frame."""
        link = self.link_index(name)
        cid = self.client_id
        if link < 0:
            position, quaternion = pybullet.getBasePositionAndOrientation(
                self.body_id, physicsClientId=cid
            )
        else:
            state = pybullet.getLinkState(
                self.body_id, link, computeForwardKinematics=True, physicsClientId=cid
            )
            position, quaternion = state[4], state[5]
        return homogeneous(quaternion_matrix(quaternion), np.array(position))

    def centre_of_mass(self, link: int) -> tuple[float, float, float]:
        """World position of a link's centre of mass (``-1`` for the base), metres."""
        cid = self.client_id
        if link < 0:
            return pybullet.getBasePositionAndOrientation(self.body_id, physicsClientId=cid)[0]
        return pybullet.getLinkState(
            self.body_id, link, computeForwardKinematics=True, physicsClientId=cid
        )[0]

    def remove(self) -> None:
        """Remove the body (and its constraints) from the world."""
        cid = self.client_id
        for gear in self.gears:
            pybullet.removeConstraint(gear, physicsClientId=cid)
        self.gears.clear()
        pybullet.removeBody(self.body_id, physicsClientId=cid)
