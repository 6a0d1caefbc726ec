"""The description's rigid-body dynamics evaluated by Bullet's algorithms (no simulation).

:class:`BulletDynamics` is the same model as the numpy :class:`~jointlab.robots.dynamics.
DynamicsModel` (base held fixed, the description's link inertials, the armature on ``M``'s
diagonal), computed by Bullet's Featherstone implementation in C++ through PyBullet's
``calculateInverseDynamics`` and ``calculateMassMatrix``, in about a tenth of the numpy
model's time for ``g(q)`` and for ``g(q)`` with ``M(q)`` (every built-in robot, measured
side by side; the numpy model's cost is its many small array operations, not arithmetic).
That is what lets a 1 kHz controller evaluate its model at every tick within its budget.

No world is stepped: the robot is a body in a private ``DIRECT`` PyBullet client (one per
process, shared by the models), used only as a dynamics library. Bullet's inverse dynamics
holds a fixed base at the origin unturned, so the body stands on its base frame with gravity
turned into that frame (the client's gravity is set to a model's before its inverse dynamics
when another model's is set; models of the same description share one body). It is loaded from the
description's URDF with the file's inertials; tool frames and links without an inertial
weigh nothing here (the simulator gives tools a tiny mass, the model does not).

The PyBullet world offers it (``PybulletWorld.dynamics_evaluator``), so a simulated
robot's ``dynamics_model()`` is a :class:`BulletDynamics` where it agrees with the numpy
model (:func:`jointlab.robots.dynamics.rigid_body_model` checks it once, at two
configurations: PyBullet diagonalises inertia tensors, which keeps ``M`` within about 1e-7
of it, and zeroes a tensor it finds non-physical, which the description's check allows
within 1e-9 of the triangle inequality). Elsewhere pass it explicitly:
``rigid_body_model(description, evaluator=bullet_model)``. ``robots/`` itself never imports
PyBullet.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, ClassVar

import numpy as np

from jointlab.robots.description import RobotDescription
from jointlab.robots.dynamics import GRAVITY
from jointlab.robots.transforms import rpy_matrix
from jointlab.robots.urdf_io import description_to_urdf
from jointlab.sim.quiet import quiet_output

__all__ = ["BulletDynamics", "bullet_model"]


class _ModelClient:
    """This process's PyBullet ``DIRECT`` client for the models, and what it holds."""

    #: The client id, or None before the first model (or after it was disconnected).
    client: ClassVar[int | None] = None
    #: The gravity vector (base frame, m/s²) the client is set to: one of :attr:`keys`.
    gravity: ClassVar[tuple[float, ...] | None] = None
    #: Canonical gravity tuples, so that a model checks the one set by identity.
    keys: ClassVar[dict[tuple[float, ...], tuple[float, ...]]] = {}
    #: Body of each model URDF. None is ever removed: PyBullet reuses a removed body's id and
    #: keeps its inverse-dynamics tree under that id.
    bodies: ClassVar[dict[str, int]] = {}


def _loaded(
    description: RobotDescription, gravity: np.ndarray
) -> tuple[int, int, tuple[float, ...]]:
    """The client, ``description``'s body in it and the model's gravity key (base frame)."""
    import os
    import tempfile

    import pybullet

    held = _ModelClient
    if held.client is None or not pybullet.isConnected(physicsClientId=held.client):
        # one client (about 28 MB) for every model of the process; no banner (the Commander
        # loads this model on every backend, so its output would reach every run)
        with quiet_output():
            held.client, held.gravity = pybullet.connect(pybullet.DIRECT), None
        held.bodies.clear()
    # Bullet's inverse dynamics holds the base at the origin, unturned: the robot stands on
    # its base frame, with gravity turned into it (the base position does not matter)
    base_gravity = rpy_matrix(np.array(description.base.orientation)).T @ gravity
    key = tuple(float(g) for g in base_gravity)
    key = held.keys.setdefault(key, key)
    urdf = _model_urdf(description)
    body = held.bodies.get(urdf)
    if body is None:
        with tempfile.TemporaryDirectory(prefix="jointlab-model-") as folder:
            path = os.path.join(folder, "model.urdf")
            with open(path, "w") as handle:
                handle.write(urdf)
            with quiet_output():  # Bullet's URDF importer prints its warnings to stdout
                body = pybullet.loadURDF(
                    path,
                    useFixedBase=True,
                    flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                    physicsClientId=held.client,
                )
        held.bodies[urdf] = body
    return held.client, body, key


def _model_urdf(description: RobotDescription) -> str:
    """The description's URDF with massless tool frames and links (the model's masses)."""
    root = ET.fromstring(description_to_urdf(description))
    for link in root.iter("link"):
        if link.get("name") == "base_link":
            continue
        inertial = link.find("inertial")
        if link.get("name", "").endswith("_tool") and inertial is not None:
            link.remove(inertial)
            inertial = None
        if inertial is None:
            inertial = ET.SubElement(link, "inertial")
            ET.SubElement(inertial, "origin", xyz="0 0 0", rpy="0 0 0")
            ET.SubElement(inertial, "mass", value="0")
            ET.SubElement(inertial, "inertia", ixx="0", ixy="0", ixz="0", iyy="0", iyz="0", izz="0")
    return ET.tostring(root, encoding="unicode")


class BulletDynamics:
    """Gravity torque, ``M(q)`` and inverse dynamics of a description, computed by Bullet.

    The interface of :class:`~jointlab.robots.dynamics.DynamicsModel`'s dynamics methods, in
    joint-space order (the description's ``joint_names``). Prefer
    :func:`jointlab.robots.dynamics.rigid_body_model`, which checks the agreement first.

    Args:
        description: The robot.
        gravity: Gravity vector in the world frame, m/s², shape ``(3,)``.
    """

    def __init__(self, description: RobotDescription, gravity: Any = GRAVITY) -> None:
        import pybullet

        self.description = description
        self.gravity = np.asarray(gravity, dtype=np.float64).reshape(3)
        client, body, self._gravity_key = _loaded(description, self.gravity)
        self._client, self._body = client, body
        self._set_gravity = pybullet.setGravity
        infos = [
            pybullet.getJointInfo(body, j, physicsClientId=client)
            for j in range(pybullet.getNumJoints(body, physicsClientId=client))
        ]
        movable = [info[1].decode() for info in infos if info[2] != pybullet.JOINT_FIXED]
        # Bullet numbers the degrees of freedom depth first; the description, in file order.
        order = np.array([description.joint_names.index(name) for name in movable], dtype=int)
        self._order = order
        self._inverse = np.argsort(order)
        self._identity = bool(np.array_equal(order, np.arange(description.dof)))
        self._zeros = [0.0] * description.dof
        #: Reflected rotor inertia per joint, kg·m² or kg, shape ``(dof,)``.
        self.armature = np.array(description.armature, dtype=np.float64)
        self._armature_matrix = np.diag(self.armature)
        self._inverse_dynamics = pybullet.calculateInverseDynamics
        self._mass_matrix = pybullet.calculateMassMatrix

    def _positions(self, q: Any) -> list[float]:
        q = np.asarray(q, dtype=np.float64)
        return (q if self._identity else q[self._order]).tolist()

    def _joint_order(self, values: Any) -> np.ndarray:
        result = np.array(values)
        return result if self._identity else result[self._inverse]

    def _use_gravity(self) -> None:
        """Set the shared client's gravity to this model's, if another model's is set."""
        if _ModelClient.gravity is not self._gravity_key:
            self._set_gravity(*self._gravity_key, physicsClientId=self._client)
            _ModelClient.gravity = self._gravity_key

    def gravity_torque(self, q: Any) -> np.ndarray:
        """Torques (N·m, N for linear joints) that hold the robot still against gravity at ``q``.

        Args:
            q: Joint positions, rad or m, shape ``(dof,)``.
        """
        self._use_gravity()
        zeros = self._zeros
        return self._joint_order(
            self._inverse_dynamics(
                self._body, self._positions(q), zeros, zeros, physicsClientId=self._client
            )
        )

    def mass_matrix(self, q: Any) -> np.ndarray:
        """Joint-space inertia ``M(q)`` with the armature on its diagonal, ``(dof, dof)``."""
        mass = np.array(
            self._mass_matrix(self._body, self._positions(q), physicsClientId=self._client)
        )
        if not self._identity:
            mass = mass[np.ix_(self._inverse, self._inverse)]
        return mass + self._armature_matrix

    def gravity_and_mass_matrix(self, q: Any) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`gravity_torque` and :meth:`mass_matrix` at ``q``."""
        return self.gravity_torque(q), self.mass_matrix(q)

    def rigid_torque_at_rest(self, q: Any, qdd: Any) -> np.ndarray:
        """``g(q) + M_rigid(q)·q̈`` at ``q̇ = 0``: the links' torques, without the armature.

        One inverse dynamics, about the cost of :meth:`gravity_torque` alone: a controller's
        model feed-forward with ``M(q)`` at this very ``q`` (the armature's ``armature·q̈``
        is the caller's, a product it can fold into its other per-joint terms).

        Args:
            q: Joint positions, rad or m, shape ``(dof,)``.
            qdd: Joint accelerations, rad/s² or m/s², shape ``(dof,)``.
        """
        self._use_gravity()
        return self._joint_order(
            self._inverse_dynamics(
                self._body,
                self._positions(q),
                self._zeros,
                self._positions(qdd),
                physicsClientId=self._client,
            )
        )

    def inverse_dynamics(self, q: Any, qd: Any, qdd: Any) -> np.ndarray:
        """Torques that produce ``qdd`` at ``(q, qd)`` (gravity and armature included).

        Args:
            q: Joint positions, rad or m, shape ``(dof,)``.
            qd: Joint velocities, rad/s or m/s, shape ``(dof,)``.
            qdd: Joint accelerations, rad/s² or m/s², shape ``(dof,)``.
        """
        qdd = np.asarray(qdd, dtype=np.float64)
        self._use_gravity()
        rigid = self._joint_order(
            self._inverse_dynamics(
                self._body,
                self._positions(q),
                self._positions(qd),
                self._positions(qdd),
                physicsClientId=self._client,
            )
        )
        return rigid + self.armature * qdd


def bullet_model(description: RobotDescription, gravity: Any = GRAVITY) -> BulletDynamics | None:
    """Bullet's evaluation of ``description``'s model, or None where PyBullet cannot load it.

    An evaluator for :func:`~jointlab.robots.dynamics.rigid_body_model`, which uses it where
    it agrees with the numpy model.
    """
    import pybullet

    try:
        return BulletDynamics(description, gravity)
    except pybullet.error:
        return None
