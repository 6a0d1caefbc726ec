"""A PyBullet world: one physics client, a ground plane, simple objects and a camera.

``jointlab.sim.World(...)`` builds one (``engine="pybullet"`` is the default); its methods
are those of every engine's world (:class:`jointlab.sim.scene.Scene`).

Every PyBullet call made by JointLab names its client explicitly (``physicsClientId``), so
any number of worlds can live in one process. At most one of them may have a GUI (a PyBullet
limit); asking for a second raises :class:`~jointlab.errors.SimulationError`.

Robots loaded into a world (:class:`jointlab.sim.SimRobot`) register a per-physics-step hook,
so :meth:`World.step` always runs their torque loops; ``SimRobot.step()`` on a robot that is
alone in its world runs the same loop inline.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pybullet
import pybullet_data

from jointlab.errors import SimulationError
from jointlab.robots.transforms import matrix_to_rpy, quaternion_from_rpy, quaternion_matrix
from jointlab.sim.pybullet.client import connect_client
from jointlab.sim.pybullet.dynamics import BulletDynamics, bullet_model
from jointlab.sim.pybullet.friction import OBJECT_FRICTION_ANCHOR, contact_friction
from jointlab.sim.pybullet.markers import PybulletMarkers
from jointlab.sim.scene import CONTACT_FRICTION, DEFAULT_RGBA, Attached, Camera, Scene, check_dt
from jointlab.sim.scene import vector as _vector

if TYPE_CHECKING:
    from jointlab.robots.description import RobotDescription
    from jointlab.sim.engine import BatchStep, EngineLoop
    from jointlab.sim.pybullet.body import RobotBody
    from jointlab.sim.pybullet.loop import TorqueLoop

__all__ = ["DEFAULT_RGBA", "Camera", "PybulletWorld", "quaternion_from_rpy"]


class PybulletWorld(Scene):
    """One PyBullet physics client with gravity, an optional ground plane and objects.

    Args:
        dt: Physics time step in seconds.
        gravity: Gravity vector in m/s², world frame.
        gui: Open PyBullet's GUI (one per process) instead of the headless DIRECT mode.
        ground: Load ``plane.urdf`` from ``pybullet_data`` at z = 0.

    Attributes:
        client: The :class:`pybullet_utils.bullet_client.BulletClient` (methods take no
            ``physicsClientId``).
        client_id: The raw PyBullet client id, for ``pybullet.*(..., physicsClientId=...)``.
        ground_id: Body id of the ground plane, or ``None``.
    """

    _gui_owner: ClassVar[PybulletWorld | None] = None
    #: The physics engine of this world.
    engine = "pybullet"

    def __init__(
        self,
        dt: float = 0.001,
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
        gui: bool = False,
        ground: bool = True,
    ) -> None:
        dt = check_dt(dt)
        gravity = _vector("World gravity", gravity)
        if gui and PybulletWorld._gui_owner is not None:
            raise SimulationError(
                "a PyBullet GUI world is already open in this process and PyBullet allows only "
                "one; close it first or create this world with gui=False"
            )
        client = connect_client(gui)
        self.client = client
        self.client_id: int = client._client
        self.dt = dt
        #: Gravity in m/s², world frame, shape ``(3,)``.
        self.gravity = np.array(gravity, dtype=np.float64)
        self.gui = bool(gui)
        if gui:
            PybulletWorld._gui_owner = self
        #: Physics steps taken since the world was created.
        self.steps = 0
        self._robots: list[Attached] = []
        self._markers: PybulletMarkers | None = None
        self._closed = False
        cid = self.client_id
        pybullet.setTimeStep(dt, physicsClientId=cid)
        pybullet.setGravity(*gravity, physicsClientId=cid)
        pybullet.setPhysicsEngineParameter(deterministicOverlappingPairs=1, physicsClientId=cid)
        self.ground_id: int | None = None
        if ground:
            self.ground_id = pybullet.loadURDF(
                os.path.join(pybullet_data.getDataPath(), "plane.urdf"), physicsClientId=cid
            )

    # ---------------------------------------------------------------- objects
    def _add_box(
        self,
        half: tuple[float, ...],
        position: tuple[float, ...],
        orientation: tuple[float, ...],
        mass: float,
        rgba: tuple[float, ...],
    ) -> int:
        cid = self.client_id
        shape = pybullet.createCollisionShape(
            pybullet.GEOM_BOX, halfExtents=half, physicsClientId=cid
        )
        visual = pybullet.createVisualShape(
            pybullet.GEOM_BOX, halfExtents=half, rgbaColor=rgba, physicsClientId=cid
        )
        return self._multibody(mass, shape, visual, position, orientation)

    def _add_sphere(
        self, radius: float, position: tuple[float, ...], mass: float, rgba: tuple[float, ...]
    ) -> int:
        cid = self.client_id
        shape = pybullet.createCollisionShape(
            pybullet.GEOM_SPHERE, radius=radius, physicsClientId=cid
        )
        visual = pybullet.createVisualShape(
            pybullet.GEOM_SPHERE, radius=radius, rgbaColor=rgba, physicsClientId=cid
        )
        return self._multibody(mass, shape, visual, position, (0.0, 0.0, 0.0))

    def _model_folders(self) -> tuple[str, ...]:
        """PyBullet's model library, ``pybullet_data``."""
        return (pybullet_data.getDataPath(),)

    def _add_urdf(
        self, path: str, position: tuple[float, ...], orientation: tuple[float, ...], fixed: bool
    ) -> int:
        cid = self.client_id
        try:
            body = pybullet.loadURDF(
                path,
                basePosition=position,
                baseOrientation=quaternion_from_rpy(orientation),
                useFixedBase=fixed,
                flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                physicsClientId=cid,
            )
        except pybullet.error as exc:
            raise SimulationError(f"{path}: PyBullet cannot load this URDF: {exc}") from exc
        for link in range(-1, pybullet.getNumJoints(body, physicsClientId=cid)):
            pybullet.changeDynamics(body, link, physicsClientId=cid, **OBJECT_FRICTION_ANCHOR)
        return body

    def _multibody(
        self,
        mass: float,
        shape: int,
        visual: int,
        position: tuple[float, ...],
        orientation: tuple[float, ...],
    ) -> int:
        body = pybullet.createMultiBody(
            baseMass=mass,
            baseCollisionShapeIndex=shape,
            baseVisualShapeIndex=visual,
            basePosition=position,
            baseOrientation=quaternion_from_rpy(orientation),
            physicsClientId=self.client_id,
        )
        pybullet.changeDynamics(
            body,
            -1,
            physicsClientId=self.client_id,
            **contact_friction(CONTACT_FRICTION),
            **OBJECT_FRICTION_ANCHOR,
        )
        return body

    def _set_object_dynamics(
        self, body_id: int, mass: float | None, friction: float | None
    ) -> None:
        cid = self.client_id
        try:
            if (
                mass is not None
                and pybullet.getDynamicsInfo(body_id, -1, physicsClientId=cid)[0] <= 0
            ):
                raise SimulationError(f"body {body_id} is static (mass 0); it keeps mass 0")
            options: dict[str, float] = {}
            if mass is not None:
                options["mass"] = mass  # Bullet recomputes the inertia from the shape
            if friction is not None:
                options.update(contact_friction(friction))
            pybullet.changeDynamics(body_id, -1, physicsClientId=cid, **options)
        except pybullet.error as exc:
            raise SimulationError(f"no object {body_id} in this world: {exc}") from exc

    def remove(self, body_id: int) -> None:
        """Remove a body added to this world."""
        self._check_open()
        if self._is_robot(body_id):
            raise SimulationError(f"body {body_id} is a SimRobot; close the robot instead")
        try:
            pybullet.removeBody(int(body_id), physicsClientId=self.client_id)
        except pybullet.error as exc:
            raise SimulationError(f"cannot remove body {body_id}: {exc}") from exc

    @property
    def num_bodies(self) -> int:
        """Number of bodies in the world (ground, robots and objects)."""
        self._check_open()
        return pybullet.getNumBodies(physicsClientId=self.client_id)

    def body_pose(self, body_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Base position (m, shape ``(3,)``) and roll-pitch-yaw (rad, shape ``(3,)``) of a body."""
        self._check_open()
        try:
            position, quaternion = pybullet.getBasePositionAndOrientation(
                int(body_id), physicsClientId=self.client_id
            )
        except pybullet.error as exc:
            raise SimulationError(f"no body {body_id} in this world: {exc}") from exc
        return np.array(position), matrix_to_rpy(quaternion_matrix(quaternion))

    def body_velocity(self, body_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Base linear (m/s) and angular (rad/s) velocity of a body, world frame, ``(3,)`` each."""
        self._check_open()
        linear, angular = pybullet.getBaseVelocity(int(body_id), physicsClientId=self.client_id)
        return np.array(linear), np.array(angular)

    def reset_body(
        self,
        body_id: int,
        position: Sequence[float],
        orientation: Sequence[float] = (0.0, 0.0, 0.0),
    ) -> None:
        """Move a body's base to ``position`` (m) and ``orientation`` (rpy, rad), at rest."""
        self._check_open()
        cid = self.client_id
        pybullet.resetBasePositionAndOrientation(
            int(body_id),
            _vector("reset_body position", position),
            quaternion_from_rpy(_vector("reset_body orientation", orientation)),
            physicsClientId=cid,
        )
        pybullet.resetBaseVelocity(int(body_id), (0, 0, 0), (0, 0, 0), physicsClientId=cid)

    def dynamics_evaluator(self) -> Callable[[RobotDescription, Any], BulletDynamics | None]:
        """Bullet's evaluation of a description's rigid-body model (no world needed)."""
        return bullet_model

    @property
    def markers(self) -> PybulletMarkers:
        """Visual-only markers (goals, targets) for renders and the GUI: no collision, no mass.

        Created on first use, so a world that never shows one has no extra bodies.
        """
        self._check_open()
        if self._markers is None:
            self._markers = PybulletMarkers(self.client_id)
        return self._markers

    def _attach_robot(
        self, description: RobotDescription, dt: float
    ) -> tuple[RobotBody, TorqueLoop]:
        """Load ``description`` as one multibody; its body and torque loop."""
        from jointlab.sim.pybullet.body import RobotBody
        from jointlab.sim.pybullet.loop import TorqueLoop

        body = RobotBody(self, description)
        return body, TorqueLoop(body, dt)

    def _contacts(self, body_id: int) -> list[tuple[int, tuple[float, ...], float]]:
        """PyBullet's contact points of the last step (``getContactPoints``)."""
        points = pybullet.getContactPoints(bodyA=body_id, physicsClientId=self.client_id)
        return [(point[2], point[5], point[9]) for point in points]

    def batch(self, loops: Sequence[EngineLoop]) -> BatchStep | None:
        """The robots' laws on ``(B, dof)`` arrays, PyBullet called in a loop per world.

        PyBullet has no batched step: the worlds are stepped one after the other, with every
        per-world call made through ``map`` (:mod:`jointlab.sim.pybullet.batch`).
        """
        from jointlab.sim.pybullet.batch import PybulletBatch

        return PybulletBatch.of(loops)

    # ---------------------------------------------------------------- stepping
    def _physics_step(self) -> None:
        pybullet.stepSimulation(physicsClientId=self.client_id)

    # ---------------------------------------------------------------- rendering
    def _render(self, width: int, height: int, camera: Camera) -> np.ndarray:
        """PyBullet's TinyRenderer (works headless)."""
        cid = self.client_id
        view = pybullet.computeViewMatrixFromYawPitchRoll(
            cameraTargetPosition=_vector("camera target", camera.target),
            distance=float(camera.distance),
            yaw=float(camera.yaw),
            pitch=float(camera.pitch),
            roll=0.0,
            upAxisIndex=2,
            physicsClientId=cid,
        )
        projection = pybullet.computeProjectionMatrixFOV(
            fov=float(camera.fov),
            aspect=int(width) / int(height),
            nearVal=float(camera.near),
            farVal=float(camera.far),
            physicsClientId=cid,
        )
        _, _, rgba, _, _ = pybullet.getCameraImage(
            int(width),
            int(height),
            viewMatrix=view,
            projectionMatrix=projection,
            renderer=pybullet.ER_TINY_RENDERER,
            physicsClientId=cid,
        )
        pixels = np.asarray(rgba, dtype=np.uint8).reshape(int(height), int(width), 4)
        return np.ascontiguousarray(pixels[:, :, :3])

    # ---------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Disconnect the client and close every robot in it; safe to call twice."""
        if not self._close_robots():
            return
        if PybulletWorld._gui_owner is self:
            PybulletWorld._gui_owner = None
        try:
            self.client.disconnect()
        except pybullet.error:  # already gone (e.g. the GUI window was closed)
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._robots)} robot(s)"
        return f"World(dt={self.dt}, gui={self.gui}, {state})"
