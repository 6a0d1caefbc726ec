"""A MuJoCo world: one model and its data, a ground plane, simple objects and a camera.

The world keeps an ``MjSpec`` and compiles it again whenever something is added or
removed (a robot, a box); MuJoCo's ``recompile`` carries the state of everything already
there over, and every robot rebinds its indices and re-applies its runtime parameters.
Bodies are named by handles (ints), like PyBullet's body ids: the ground is 0, robots and
objects count up from 1 and a handle is never reused.

Options: Euler integration at ``dt`` (MuJoCo's default; joint damping is integrated
implicitly, everything else explicitly, as the NJointAction law is), gravity, the contact
model of :mod:`jointlab.sim.mujoco.contact` (Bullet's hard contacts: ``solref`` five physics
steps, ``solimp`` 0.99-0.999, an elliptic friction cone). ``mj_step`` leaves the poses of the
step's start in ``data.xpos``, so poses are read after ``mj_kinematics`` (or, for free
bodies, straight from ``qpos``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from jointlab.errors import SimulationError
from jointlab.robots.transforms import matrix_to_rpy, quaternion_matrix
from jointlab.sim.markers import DISC_HEIGHT, MarkerSet
from jointlab.sim.mujoco.contact import hard_contacts
from jointlab.sim.mujoco.friction import product_pairs
from jointlab.sim.mujoco.library import import_mujoco
from jointlab.sim.mujoco.mjcf import WORLD_COLLISION, mujoco_quaternion
from jointlab.sim.mujoco.render import Renderer
from jointlab.sim.scene import Attached, Camera, Scene, check_dt, vector

if TYPE_CHECKING:
    from jointlab.robots.description import RobotDescription
    from jointlab.sim.mujoco.body import MujocoBody
    from jointlab.sim.mujoco.loop import MujocoLoop

__all__ = ["MujocoMarkers", "MujocoWorld"]

#: Largest image ``render`` makes (MuJoCo's offscreen buffer), pixels.
OFFSCREEN_SIZE = (1920, 1080)


def _xyzw(wxyz: np.ndarray) -> np.ndarray:
    return np.array([wxyz[1], wxyz[2], wxyz[3], wxyz[0]])


class MujocoWorld(Scene):
    """One MuJoCo model with gravity, an optional ground plane and objects.

    Built by ``World(engine="mujoco", ...)``; the arguments and methods are those of
    every engine's world (:class:`jointlab.sim.scene.Scene`).

    Args:
        dt: Physics time step in seconds.
        gravity: Gravity vector in m/s², world frame.
        gui: Open MuJoCo's interactive viewer (needs a display).
        ground: Add a ground plane at z = 0.

    Attributes:
        model: The compiled ``mujoco.MjModel`` (replaced when the world changes).
        data: Its ``mujoco.MjData``.
        spec: The ``mujoco.MjSpec`` the model is compiled from.
        ground_id: Handle of the ground plane (0), or ``None``.
    """

    engine = "mujoco"

    def __init__(
        self,
        dt: float = 0.001,
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
        gui: bool = False,
        ground: bool = True,
    ) -> None:
        dt = check_dt(dt)
        gravity = vector("World gravity", gravity)
        mujoco = import_mujoco()
        self._mujoco = mujoco
        self.dt = dt
        self.gui = bool(gui)
        #: Gravity in m/s², world frame, shape ``(3,)``.
        self.gravity = np.array(gravity, dtype=np.float64)
        #: Physics steps taken since the world was created.
        self.steps = 0
        self._robots: list[Attached] = []
        self._closed = False
        self._bodies: dict[int, str] = {}  # handle -> body name in the spec (objects, robots)
        self._next_handle = 1
        spec = mujoco.MjSpec()
        spec.modelname = "jointlab"
        spec.compiler.degree = False
        spec.option.timestep = dt
        spec.option.gravity = list(gravity)
        # Island discovery only splits the constraint problem for the solver; with a robot or
        # two it costs ~8 % of a step and changes nothing (bit-identical trajectories).
        spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
        spec.visual.global_.offwidth, spec.visual.global_.offheight = OFFSCREEN_SIZE
        spec.visual.headlight.ambient = [0.45, 0.45, 0.45]
        spec.visual.headlight.diffuse = [0.5, 0.5, 0.5]
        spec.worldbody.add_light(pos=[0.0, 0.0, 3.0], dir=[0.0, 0.0, -1.0], castshadow=False)
        self.ground_id: int | None = None
        if ground:
            spec.add_texture(
                name="ground",
                type=mujoco.mjtTexture.mjTEXTURE_2D,
                builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
                width=256,
                height=256,
                rgb1=[0.92, 0.92, 0.92],
                rgb2=[0.62, 0.72, 0.9],
            )
            material = spec.add_material(name="ground", texrepeat=[2.0, 2.0], texuniform=True)
            material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "ground"
            spec.worldbody.add_geom(
                name="ground",
                type=mujoco.mjtGeom.mjGEOM_PLANE,
                size=[0.0, 0.0, 0.05],
                material="ground",
                contype=WORLD_COLLISION[0],
                conaffinity=WORLD_COLLISION[1],
            )
            self.ground_id = 0
        hard_contacts(spec, dt)  # Bullet's contact dynamics (jointlab.sim.mujoco.contact)
        self.spec = spec
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self._renderer = Renderer(mujoco)
        self._markers: MujocoMarkers | None = None
        self._viewer: Any = None
        if gui:
            self._open_viewer()

    # ---------------------------------------------------------------- model changes
    def _recompile(self) -> None:
        product_pairs(self.spec)  # the product friction rule where priorities cannot do it
        hard_contacts(self.spec, self.dt)  # every new geom and pair: the same contact model
        try:
            self.model, self.data = self.spec.recompile(self.model, self.data)
        except Exception as exc:  # mujoco reports compile errors as ValueError
            raise SimulationError(f"MuJoCo cannot compile the world: {exc}") from exc
        self._renderer.invalidate()
        if self._markers is not None:
            self._markers._restore()
        for robot in self._robots:  # find each robot in the new model again
            robot.body.bind()
            robot.loop.rebind()
        if self._viewer is not None:
            self._viewer.close()
            self._open_viewer()

    def _open_viewer(self) -> None:
        import os
        import sys

        if sys.platform.startswith("linux") and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
        ):
            raise SimulationError(
                "gui=True opens MuJoCo's viewer, which needs a display (neither DISPLAY nor "
                "WAYLAND_DISPLAY is set); render images headless with World.render or "
                "render_mode='rgb_array'"
            )
        try:
            import mujoco.viewer

            self._viewer = mujoco.viewer.launch_passive(self.model, self.data)
        except Exception as exc:
            raise SimulationError(
                f"cannot open MuJoCo's viewer (gui=True needs a display): {exc}"
            ) from exc

    def _new_handle(self, name: str) -> int:
        handle = self._next_handle
        self._next_handle += 1
        self._bodies[handle] = name
        return handle

    def _attach_robot(
        self, description: RobotDescription, dt: float
    ) -> tuple[MujocoBody, MujocoLoop]:
        """Load ``description`` (see :class:`~jointlab.sim.mujoco.body.MujocoBody`)."""
        from jointlab.sim.mujoco.body import MujocoBody
        from jointlab.sim.mujoco.loop import MujocoLoop

        self._check_open()
        handle = self._next_handle
        body = MujocoBody(self, description, prefix=f"r{handle}:")
        self._new_handle(body.base_name)
        body.body_id = handle
        return body, MujocoLoop(body, dt)

    # ---------------------------------------------------------------- objects
    def _add_box(
        self,
        half: tuple[float, ...],
        position: tuple[float, ...],
        orientation: tuple[float, ...],
        mass: float,
        rgba: tuple[float, ...],
    ) -> int:
        return self._add_object(
            self._mujoco.mjtGeom.mjGEOM_BOX, list(half), position, orientation, mass, rgba
        )

    def _add_sphere(
        self, radius: float, position: tuple[float, ...], mass: float, rgba: tuple[float, ...]
    ) -> int:
        return self._add_object(
            self._mujoco.mjtGeom.mjGEOM_SPHERE,
            [radius, 0.0, 0.0],
            position,
            (0.0, 0.0, 0.0),
            mass,
            rgba,
        )

    def _add_object(
        self,
        kind: Any,
        size: list[float],
        position: tuple[float, ...],
        orientation: tuple[float, ...],
        mass: float,
        rgba: tuple[float, ...],
    ) -> int:
        name = f"object{self._next_handle}"
        body = self.spec.worldbody.add_body(
            name=name, pos=list(position), quat=list(mujoco_quaternion(orientation))
        )
        if mass > 0:
            body.add_freejoint(name=name)
        geom = body.add_geom(
            type=kind,
            size=size,
            rgba=list(rgba),
            contype=WORLD_COLLISION[0],
            conaffinity=WORLD_COLLISION[1],
        )
        if mass > 0:
            geom.mass = mass
        self._recompile()
        return self._new_handle(name)

    def _model_folders(self) -> tuple[str, ...]:
        """``pybullet_data``'s models (MuJoCo ships none), so a scene loads on both engines.

        ``pybullet_data`` is files only, installed with the runtime dependency ``pybullet``.
        """
        import pybullet_data

        return (pybullet_data.getDataPath(),)

    def _add_urdf(
        self, path: str, position: tuple[float, ...], orientation: tuple[float, ...], fixed: bool
    ) -> int:
        """MuJoCo's own URDF importer reads the file."""
        try:
            child = self._mujoco.MjSpec.from_file(path)
        except Exception as exc:
            raise SimulationError(f"{path}: MuJoCo cannot load this URDF: {exc}") from exc
        roots = [b for b in child.worldbody.bodies if b.parent.name == "world"]
        if not roots:
            raise SimulationError(f"{path}: the URDF has no links MuJoCo keeps as bodies")
        name = f"object{self._next_handle}"
        quaternion = list(mujoco_quaternion(orientation))
        frame = self.spec.worldbody.add_frame(pos=list(position), quat=quaternion)
        if not fixed:
            roots[0].add_freejoint()
        attached = frame.attach_body(roots[0], f"{name}/", "")
        try:
            self._recompile()
        except SimulationError as exc:
            self.spec.delete(attached)
            raise SimulationError(f"{path}: {exc}") from exc
        return self._new_handle(attached.name)

    def _set_object_dynamics(
        self, body_id: int, mass: float | None, friction: float | None
    ) -> None:
        """Changes the compiled model in place and the spec alike (kept on a recompile)."""
        body = self._body(body_id)
        geoms = self.spec.body(self._bodies[body_id]).geoms
        model = self.model
        if mass is not None:
            if self._free_joint(body) is None or len(geoms) != 1:
                raise SimulationError(
                    f"body {body_id} is not a movable box or sphere; its mass stays as it is"
                )
            model.body_inertia[body.id] *= mass / model.body_mass[body.id]
            model.body_mass[body.id] = mass
            geoms[0].mass = mass
            self._mujoco.mj_setConst(model, self.data)
        if friction is not None:
            first = int(body.geomadr[0])
            ids = slice(first, first + int(body.geomnum[0]))
            model.geom_friction[ids, 0] = friction
            model.geom_priority[ids] = 1  # this geom's coefficient wins over the other's
            for geom in geoms:
                geom.friction[0] = friction
                geom.priority = 1
            if product_pairs(self.spec, model):
                self._recompile()

    def remove(self, body_id: int) -> None:
        """Remove an object added to this world."""
        self._check_open()
        if self._is_robot(body_id):
            raise SimulationError(f"body {body_id} is a SimRobot; close the robot instead")
        name = self._bodies.pop(int(body_id), None)
        if name is None:
            raise SimulationError(f"cannot remove body {body_id}: no such body in this world")
        self.spec.delete(self.spec.body(name))
        self._recompile()

    @property
    def markers(self) -> MujocoMarkers:
        """Visual-only markers (goals, targets) for renders and the viewer: no collision, no mass.

        Each is a static body whose geom collides with nothing; showing a new one recompiles
        the model, moving one does not.
        """
        self._check_open()
        if self._markers is None:
            self._markers = MujocoMarkers(self)
        return self._markers

    def _remove_robot_body(self, name: str, handle: int) -> None:
        self._bodies.pop(handle, None)
        self.spec.delete(self.spec.body(name))
        self._recompile()

    @property
    def num_bodies(self) -> int:
        """Number of bodies in the world (ground, robots and objects)."""
        self._check_open()
        return len(self._bodies) + (self.ground_id is not None)

    def _body(self, body_id: int) -> Any:
        name = self._bodies.get(int(body_id))
        if name is None:
            raise SimulationError(f"no body {body_id} in this world")
        return self.model.body(name)

    def _free_joint(self, body: Any) -> int | None:
        model = self.model
        if body.jntnum[0] == 1 and model.jnt_type[body.jntadr[0]] == 0:  # mjJNT_FREE
            return int(body.jntadr[0])
        return None

    def body_pose(self, body_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Base position (m, shape ``(3,)``) and roll-pitch-yaw (rad, shape ``(3,)``) of a body."""
        self._check_open()
        body = self._body(body_id)
        joint = self._free_joint(body)
        if joint is not None:
            address = self.model.jnt_qposadr[joint]
            pose = self.data.qpos[address : address + 7]
            return np.array(pose[:3]), matrix_to_rpy(quaternion_matrix(_xyzw(pose[3:])))
        self._mujoco.mj_kinematics(self.model, self.data)
        return (
            np.array(self.data.xpos[body.id]),
            matrix_to_rpy(self.data.xmat[body.id].reshape(3, 3)),
        )

    def body_velocity(self, body_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Base linear (m/s) and angular (rad/s) velocity of a body, world frame, ``(3,)`` each."""
        self._check_open()
        body = self._body(body_id)
        joint = self._free_joint(body)
        if joint is None:
            return np.zeros(3), np.zeros(3)
        address = self.model.jnt_dofadr[joint]
        velocity = self.data.qvel[address : address + 6]
        quaternion = self.data.qpos[self.model.jnt_qposadr[joint] + 3 :][:4]
        # MuJoCo's free-joint angular velocity is in the body frame.
        return np.array(velocity[:3]), quaternion_matrix(_xyzw(quaternion)) @ velocity[3:]

    def reset_body(
        self,
        body_id: int,
        position: Sequence[float],
        orientation: Sequence[float] = (0.0, 0.0, 0.0),
    ) -> None:
        """Move a body's base to ``position`` (m) and ``orientation`` (rpy, rad), at rest."""
        self._check_open()
        body = self._body(body_id)
        position_v = vector("reset_body position", position)
        quaternion = mujoco_quaternion(vector("reset_body orientation", orientation))
        joint = self._free_joint(body)
        if joint is None:
            self.model.body_pos[body.id] = position_v
            self.model.body_quat[body.id] = quaternion
            return
        qpos, dof = self.model.jnt_qposadr[joint], self.model.jnt_dofadr[joint]
        self.data.qpos[qpos : qpos + 7] = [*position_v, *quaternion]
        self.data.qvel[dof : dof + 6] = 0.0
        self.data.qacc_warmstart[dof : dof + 6] = 0.0

    def _handle_of(self, body: int) -> int:
        """The world handle of the body tree a model body belongs to (the ground's: 0)."""
        root = int(self.model.body_rootid[body])
        if root == 0:
            return 0 if self.ground_id is not None else -1
        name = self.model.body(root).name
        for handle, known in self._bodies.items():
            if known == name:
                return handle
        return -1

    def _contacts(self, body_id: int) -> list[tuple[int, np.ndarray, float]]:
        """MuJoCo's active contacts of the last step (``data.contact``, ``mj_contactForce``)."""
        model, data = self.model, self.data
        mujoco = self._mujoco
        found = []
        wrench = np.zeros(6)
        for i in range(int(data.ncon)):
            contact = data.contact[i]
            bodies = [self._handle_of(int(model.geom_bodyid[g])) for g in contact.geom]
            if body_id not in bodies or bodies[0] == bodies[1]:
                continue
            mujoco.mj_contactForce(model, data, i, wrench)
            other = bodies[1] if bodies[0] == body_id else bodies[0]
            found.append((other, np.array(contact.pos), float(wrench[0])))
        return found

    def batch(self, loops: Sequence[Any]) -> Any:
        """Robots in separate MuJoCo worlds stepped by one call (:mod:`.batch`), or None."""
        from jointlab.sim.mujoco.batch import MujocoBatch

        return MujocoBatch.of(loops)

    # ---------------------------------------------------------------- stepping
    def _physics_step(self) -> None:
        self._mujoco.mj_step(self.model, self.data)
        self._sync_viewer()

    def _sync_viewer(self) -> None:
        if self._viewer is not None:
            self._viewer.sync()

    # ---------------------------------------------------------------- rendering
    def _render(self, width: int, height: int, camera: Camera) -> np.ndarray:
        """MuJoCo's offscreen renderer (EGL or OSMesa headless).

        Raises:
            SimulationError: no OpenGL backend (the message says which and how to get one).
        """
        return self._renderer.render(self.model, self.data, width, height, camera)

    # ---------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Release the model, renderer and viewer and close every robot; safe to call twice."""
        if not self._close_robots():
            return
        self._renderer.close()
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._robots)} robot(s)"
        return f"World(engine='mujoco', dt={self.dt}, gui={self.gui}, {state})"


class MujocoMarkers(MarkerSet):
    """:class:`jointlab.sim.markers.MarkerSet` on a MuJoCo world (markers are world handles)."""

    def __init__(self, world: MujocoWorld) -> None:
        super().__init__()
        self._world = world
        self._positions: dict[int, np.ndarray] = {}  # where each was moved (recompiles forget)

    def _create(self, look: Any, centre: np.ndarray) -> int:
        world = self._world
        mujoco = world._mujoco
        name = f"marker{world._next_handle}"
        body = world.spec.worldbody.add_body(name=name, pos=centre.tolist())
        if look.shape == "sphere":
            kind, size = mujoco.mjtGeom.mjGEOM_SPHERE, [look.radius, 0.0, 0.0]
        else:
            kind, size = mujoco.mjtGeom.mjGEOM_CYLINDER, [look.radius, DISC_HEIGHT / 2, 0.0]
        body.add_geom(type=kind, size=size, rgba=list(look.rgba), contype=0, conaffinity=0)
        world._recompile()
        return world._new_handle(name)

    def _move(self, body: int, centre: np.ndarray) -> None:
        self._positions[body] = np.array(centre)
        self._world.model.body_pos[self._world._body(body).id] = centre

    def _remove(self, body: int) -> None:
        self._positions.pop(body, None)
        self._world.remove(body)

    def _restore(self) -> None:
        """Put moved markers back where they were (after the world recompiled)."""
        for body, centre in self._positions.items():
            self._world.model.body_pos[self._world._body(body).id] = centre
