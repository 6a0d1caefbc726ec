"""A PyBullet world: one physics client, a ground plane, simple objects and a camera.

Every PyBullet call made by JointLab names its client explicitly (``physicsClientId``), so
any number of worlds can live in one process. At most one of them may have a GUI (a PyBullet
limit); asking for a second raises :class:`~jointlab.errors.SimulationError`.

Robots loaded into a world (:class:`jointlab.sim.SimRobot`) register a per-physics-step hook,
so :meth:`World.step` always runs their torque loops; ``SimRobot.step()`` on a robot that is
alone in its world runs the same loop inline.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pybullet
import pybullet_data

from jointlab.errors import ConfigurationError, SimulationError
from jointlab.robots.transforms import matrix_to_rpy, quaternion_matrix
from jointlab.sim.client import connect_client
from jointlab.sim.markers import MarkerSet

if TYPE_CHECKING:
    from jointlab.sim.robot import SimRobot

__all__ = ["Camera", "World"]

#: Default RGBA colour of objects added without one.
DEFAULT_RGBA = (0.8, 0.5, 0.2, 1.0)


@dataclass(frozen=True)
class Camera:
    """A look-at camera for :meth:`World.render` (PyBullet's yaw/pitch/distance form)."""

    #: Point looked at, world frame, metres.
    target: tuple[float, float, float] = (0.0, 0.0, 0.3)
    #: Distance from the target, metres.
    distance: float = 1.6
    #: Yaw about the world z axis, degrees.
    yaw: float = 45.0
    #: Pitch, degrees (negative looks down).
    pitch: float = -30.0
    #: Vertical field of view, degrees.
    fov: float = 60.0
    #: Near and far clipping planes, metres.
    near: float = 0.01
    far: float = 20.0


def quaternion_from_rpy(rpy: Sequence[float]) -> tuple[float, float, float, float]:
    """PyBullet quaternion ``(x, y, z, w)`` of roll-pitch-yaw ``Rz(y)·Ry(p)·Rx(r)`` (rad)."""
    r, p, y = (0.5 * float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return (
        float(sr * cp * cy - cr * sp * sy),
        float(cr * sp * cy + sr * cp * sy),
        float(cr * cp * sy - sr * sp * cy),
        float(cr * cp * cy + sr * sp * sy),
    )


def _vector(name: str, value: Sequence[float], size: int = 3) -> tuple[float, ...]:
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    if array.shape != (size,) or not np.all(np.isfinite(array)):
        raise ConfigurationError(f"{name} must be {size} finite numbers, got {value!r}")
    return tuple(float(v) for v in array)


class World:
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

    _gui_owner: ClassVar[World | None] = None

    def __init__(
        self,
        dt: float = 0.001,
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
        gui: bool = False,
        ground: bool = True,
    ) -> None:
        dt = float(dt)
        if not np.isfinite(dt) or dt <= 0:
            raise ConfigurationError(f"World dt must be a positive number of seconds, got {dt!r}")
        gravity = _vector("World gravity", gravity)
        if gui and World._gui_owner is not None:
            raise SimulationError(
                "a PyBullet GUI world is already open in this process and PyBullet allows only "
                "one; close it first or create this world with gui=False"
            )
        client = connect_client(gui)
        self.client = client
        self.client_id: int = client._client
        self.dt = dt
        self.gui = bool(gui)
        if gui:
            World._gui_owner = self
        #: Physics steps taken since the world was created.
        self.steps = 0
        self._robots: list[SimRobot] = []
        self._markers: MarkerSet | None = None
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
    def _check_open(self) -> None:
        if self._closed:
            raise SimulationError("this World is closed")

    def add_box(
        self,
        half_extents: Sequence[float],
        position: Sequence[float],
        orientation: Sequence[float] = (0.0, 0.0, 0.0),
        mass: float = 0.0,
        rgba: Sequence[float] | None = None,
    ) -> int:
        """Add a box; ``mass`` 0 makes it static. Returns its body id.

        Args:
            half_extents: Half sizes along x, y, z in metres, shape ``(3,)``.
            position: Centre position, world frame, metres.
            orientation: Roll, pitch, yaw in radians.
            mass: Mass in kg (0 for a static box).
            rgba: Colour, four numbers in [0, 1].
        """
        self._check_open()
        half = _vector("add_box half_extents", half_extents)
        if min(half) <= 0:
            raise ConfigurationError(f"add_box half_extents must be > 0, got {half_extents!r}")
        cid = self.client_id
        shape = pybullet.createCollisionShape(
            pybullet.GEOM_BOX, halfExtents=half, physicsClientId=cid
        )
        visual = pybullet.createVisualShape(
            pybullet.GEOM_BOX, halfExtents=half, rgbaColor=self._rgba(rgba), physicsClientId=cid
        )
        return self._multibody(mass, shape, visual, position, orientation)

    def add_sphere(
        self,
        radius: float,
        position: Sequence[float],
        mass: float = 0.0,
        rgba: Sequence[float] | None = None,
    ) -> int:
        """Add a sphere of ``radius`` metres at ``position``; ``mass`` 0 makes it static."""
        self._check_open()
        if not np.isfinite(radius) or radius <= 0:
            raise ConfigurationError(f"add_sphere radius must be > 0 metres, got {radius!r}")
        cid = self.client_id
        shape = pybullet.createCollisionShape(
            pybullet.GEOM_SPHERE, radius=float(radius), physicsClientId=cid
        )
        visual = pybullet.createVisualShape(
            pybullet.GEOM_SPHERE,
            radius=float(radius),
            rgbaColor=self._rgba(rgba),
            physicsClientId=cid,
        )
        return self._multibody(mass, shape, visual, position, (0.0, 0.0, 0.0))

    def add_urdf(
        self,
        path: str | os.PathLike[str],
        position: Sequence[float],
        orientation: Sequence[float] = (0.0, 0.0, 0.0),
        fixed: bool = True,
    ) -> int:
        """Load a URDF file (absolute, relative, or relative to ``pybullet_data``).

        Returns its body id.
        """
        self._check_open()
        text = os.fspath(path)
        candidates = [text, os.path.join(pybullet_data.getDataPath(), text)]
        found = next((c for c in candidates if os.path.isfile(c)), None)
        if found is None:
            raise SimulationError(f"{text}: URDF file not found (also looked in pybullet_data)")
        try:
            return pybullet.loadURDF(
                found,
                basePosition=_vector("add_urdf position", position),
                baseOrientation=quaternion_from_rpy(_vector("add_urdf orientation", orientation)),
                useFixedBase=bool(fixed),
                flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                physicsClientId=self.client_id,
            )
        except pybullet.error as exc:
            raise SimulationError(f"{found}: PyBullet cannot load this URDF: {exc}") from exc

    def _rgba(self, rgba: Sequence[float] | None) -> tuple[float, ...]:
        return DEFAULT_RGBA if rgba is None else _vector("rgba", rgba, 4)

    def _multibody(
        self,
        mass: float,
        shape: int,
        visual: int,
        position: Sequence[float],
        orientation: Sequence[float],
    ) -> int:
        if not np.isfinite(mass) or mass < 0:
            raise ConfigurationError(f"object mass must be >= 0 kg, got {mass!r}")
        return pybullet.createMultiBody(
            baseMass=float(mass),
            baseCollisionShapeIndex=shape,
            baseVisualShapeIndex=visual,
            basePosition=_vector("position", position),
            baseOrientation=quaternion_from_rpy(_vector("orientation", orientation)),
            physicsClientId=self.client_id,
        )

    def remove(self, body_id: int) -> None:
        """Remove a body added to this world."""
        self._check_open()
        if any(robot.body_id == body_id for robot in self._robots):
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

    @property
    def markers(self) -> MarkerSet:
        """Visual-only markers (goals, targets) for renders and the GUI: no collision, no mass.

        Created on first use, so a world that never shows one has no extra bodies.
        """
        self._check_open()
        if self._markers is None:
            self._markers = MarkerSet(self.client_id)
        return self._markers

    # ---------------------------------------------------------------- stepping
    def _register(self, robot: SimRobot) -> None:
        self._robots.append(robot)

    def _unregister(self, robot: SimRobot) -> None:
        if robot in self._robots:
            self._robots.remove(robot)

    def step(self) -> None:
        """Advance one physics step of ``dt`` seconds, running every robot's torque loop."""
        self._check_open()
        robots = self._robots
        for robot in robots:
            robot._before_physics()
        pybullet.stepSimulation(physicsClientId=self.client_id)
        self.steps += 1
        for robot in robots:
            robot._after_physics()

    @property
    def time(self) -> float:
        """Simulated seconds since the world was created (``steps * dt``)."""
        return self.steps * self.dt

    # ---------------------------------------------------------------- rendering
    def render(
        self, width: int = 320, height: int = 240, camera: Camera | None = None
    ) -> np.ndarray:
        """Render an RGB image with PyBullet's TinyRenderer (works headless).

        Returns:
            Pixels, shape ``(height, width, 3)``, dtype ``uint8``.
        """
        self._check_open()
        if int(width) <= 0 or int(height) <= 0:
            raise ConfigurationError(f"render size must be positive, got {width}x{height}")
        camera = camera or Camera()
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
    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    def close(self) -> None:
        """Disconnect the client and close every robot in it; safe to call twice."""
        if self._closed:
            return
        for robot in list(self._robots):
            robot._world_closing()
        self._robots.clear()
        self._closed = True
        if World._gui_owner is self:
            World._gui_owner = None
        try:
            self.client.disconnect()
        except pybullet.error:  # already gone (e.g. the GUI window was closed)
            pass

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._robots)} robot(s)"
        return f"World(dt={self.dt}, gui={self.gui}, {state})"
