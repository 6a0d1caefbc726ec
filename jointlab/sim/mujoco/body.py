"""A :class:`RobotDescription` loaded into a :class:`MujocoWorld`: indices and parameters.

:class:`MujocoBody` is the MuJoCo counterpart of :class:`jointlab.sim.pybullet.body.RobotBody`: it
attaches the description's MJCF (:mod:`jointlab.sim.mujoco.mjcf`) to the world under a name
prefix, finds its joints, actuators, equalities, bodies and sites in the compiled model,
and sets the runtime parameters (damping, friction, masses, brakes). Joint-space arrays are
in the description's order. After the world recompiles (something was added or removed),
:meth:`bind` finds everything again and re-applies the parameters, which the compiled model
does not keep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from jointlab.errors import SimulationError
from jointlab.robots.description import RobotDescription
from jointlab.sim.mujoco.mjcf import dc_joints, description_to_mjcf
from jointlab.sim.scene import mounted_elements

if TYPE_CHECKING:
    from jointlab.sim.actuators import ActuatorArray

__all__ = ["LinkRef", "MujocoBody"]


@dataclass(frozen=True)
class LinkRef:
    """Where a named frame lives in the model: a body, or a site on a body (tool frames)."""

    name: str
    body: int
    site: int | None


class MujocoBody:
    """A description attached to a MuJoCo world. Not public API; see ``SimRobot``."""

    #: No explicit coupling torques: couplings are exact MuJoCo equality constraints.
    soft_coupling = None
    #: :meth:`frame_position` is cheaper than the numpy kinematics of the same frame
    #: (``mj_kinematics`` in C: about 1 µs for arm6 against 6.5 µs, warm).
    cheap_kinematics = True

    def __init__(self, world: Any, description: RobotDescription, prefix: str) -> None:
        """Attach ``description`` to ``world`` (the ``MujocoWorld`` that makes this body)."""
        self.world = world
        self.description = description
        self.prefix = prefix
        self.base_name = f"{prefix}base_link"
        #: World handle of the robot (set by the world).
        self.body_id = -1
        mujoco = world._mujoco
        self._mujoco = mujoco
        text = description_to_mjcf(description, world.dt)  # refuses what MuJoCo cannot express
        try:
            child = mujoco.MjSpec.from_string(text)
        except Exception as exc:
            raise SimulationError(f"MuJoCo cannot load robot {description.name!r}: {exc}") from exc
        world.spec.attach(child, prefix=prefix, frame=world.spec.worldbody.add_frame())
        if world.ground_id is not None:  # the ground is the world body's plane
            for name in mounted_elements(description):
                world.spec.add_exclude(bodyname1="world", bodyname2=f"{prefix}{name}_link")
        dof = description.dof
        self._mass_scale = np.ones(1 + len(description.actuators))
        self._damping = np.array(description.damping)
        self._friction = np.array(description.static_friction)
        self._brake_mask = np.zeros(dof, dtype=bool)
        self._brake_position = np.zeros(dof)
        world._recompile()
        self.bind()

    # ---------------------------------------------------------------- indices
    def bind(self) -> None:
        """Find the robot in the world's current model and re-apply its parameters."""
        model = self.world.model
        self.model, self.data = model, self.world.data
        p, d = self.prefix, self.description
        joints = [model.joint(p + name) for name in d.joint_names]
        #: qpos and qvel addresses of the joints, shape ``(dof,)``.
        self.qpos = np.array([j.qposadr[0] for j in joints], dtype=np.int64)
        self.dofs = np.array([j.dofadr[0] for j in joints], dtype=np.int64)
        #: Drive actuator ids (one per joint) and the dc_high/dc_low pairs (some joints).
        self.drive = np.array([model.actuator(p + n).id for n in d.joint_names], dtype=np.int64)
        actuators = self.actuators_model()
        self.dc = dc_joints(actuators)
        names = [d.joint_names[i] for i in self.dc.tolist()]
        self.dc_high, self.dc_low = (
            np.array([model.actuator(f"{p}{n}/{end}").id for n in names], dtype=np.int64)
            for end in ("dc_high", "dc_low")
        )
        ids = np.concatenate([self.drive, self.dc_high, self.dc_low])
        #: The robot's actuators in one block (drives, dc_high, dc_low): a slice of ``ctrl``.
        self.actuator_block = slice(int(ids[0]), int(ids[0]) + ids.size)
        if not np.array_equal(ids, np.arange(ids[0], ids[0] + ids.size)):
            raise SimulationError(f"robot {d.name!r}: MuJoCo reordered its actuators")
        #: Brake equality id per joint (-1 where the joint has no brake).
        self.brake = np.array(
            [
                model.equality(f"{p}{n}/brake").id if spec.has_brakes else -1
                for n, spec in zip(d.joint_names, d.joints, strict=True)
            ],
            dtype=np.int64,
        )
        self.base = model.body(self.base_name).id
        self.link_bodies = np.array(
            [self.base] + [model.body(f"{p}{s.name}_link").id for s in d.actuators], dtype=np.int64
        )
        self.nominal_mass = np.array(model.body_mass[self.link_bodies])
        self.nominal_inertia = np.array(model.body_inertia[self.link_bodies])
        self.free_qpos: int | None = None
        self.free_dof: int | None = None
        if not d.base.fixed:
            free = model.joint(p + "base")
            self.free_qpos, self.free_dof = int(free.qposadr[0]), int(free.dofadr[0])
        #: Every dof of the robot (the free base's included), for warm-start resets.
        self.all_dofs = (
            self.dofs
            if self.free_dof is None
            else np.concatenate([np.arange(self.free_dof, self.free_dof + 6), self.dofs])
        )
        self.links: dict[str, LinkRef] = {"base": LinkRef("base", self.base, None)}
        for spec in d.actuators:
            self.links[spec.name] = LinkRef(spec.name, model.body(f"{p}{spec.name}_link").id, None)
        for tool in d.tool_names:
            site = model.site(p + tool)
            self.links[tool] = LinkRef(tool, int(site.bodyid[0]), site.id)
        #: Frame name -> its position row in ``data`` (a view), filled by frame_position.
        self._frame_rows: dict[str, np.ndarray] = {}
        self._kinematics = self._mujoco.mj_kinematics
        self._inertia: np.ndarray | None = None
        self._apply_parameters()

    def actuators_model(self) -> ActuatorArray:
        """The description's actuator arrays (as the law uses them)."""
        from jointlab.sim.actuators import ActuatorArray

        return ActuatorArray.from_description(self.description)

    def _apply_parameters(self) -> None:
        self.model.body_mass[self.link_bodies] = self.nominal_mass * self._mass_scale
        self.model.body_inertia[self.link_bodies] = self.nominal_inertia * self._mass_scale[:, None]
        self.model.dof_damping[self.dofs] = self._damping
        self.model.dof_frictionloss[self.dofs] = self._friction
        self._set_constants()
        self.set_brakes(self._brake_mask, self._brake_position)

    def _set_constants(self) -> None:
        """Recompute the model's derived constants (after mass changes); keeps the state."""
        data = self.data
        saved = [np.array(a) for a in (data.qpos, data.qvel, data.act, data.qacc_warmstart)]
        time = data.time
        self._mujoco.mj_setConst(self.model, data)
        data.qpos[:], data.qvel[:], data.act[:], data.qacc_warmstart[:] = saved
        data.time = time

    # ---------------------------------------------------------------- state
    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions and velocities, shape ``(dof,)`` each (fresh arrays)."""
        return self.data.qpos[self.qpos], self.data.qvel[self.dofs]

    def reset(self, q: np.ndarray, qd: np.ndarray) -> None:
        """Put the joints at ``q``/``qd`` and a floating base back at its pose, at rest."""
        data = self.data
        data.qpos[self.qpos] = q
        data.qvel[self.dofs] = qd
        if self.free_qpos is not None:
            from jointlab.sim.mujoco.mjcf import mujoco_quaternion

            base = self.description.base
            data.qpos[self.free_qpos : self.free_qpos + 7] = [
                *base.position,
                *mujoco_quaternion(base.orientation),
            ]
            data.qvel[self.free_dof : self.free_dof + 6] = 0.0
        # The solver's warm start and pushes of the previous episode must not leak into this.
        data.qacc_warmstart[self.all_dofs] = 0.0
        data.xfrc_applied[self.link_bodies] = 0.0

    # ---------------------------------------------------------------- parameters
    def set_damping(self, damping: np.ndarray) -> None:
        """Viscous joint damping (MuJoCo's native ``damping``), shape ``(dof,)``."""
        self._damping = np.array(damping, dtype=np.float64)
        self.model.dof_damping[self.dofs] = self._damping

    def set_friction(self, static: np.ndarray) -> None:
        """Coulomb friction (MuJoCo's native ``frictionloss``), N·m or N, shape ``(dof,)``."""
        self._friction = np.array(static, dtype=np.float64)
        self.model.dof_frictionloss[self.dofs] = self._friction

    def set_mass_scale(self, scale: np.ndarray) -> None:
        """Scale every link's nominal mass and inertia (base first, then elements)."""
        scale = np.asarray(scale, dtype=np.float64)
        if np.array_equal(scale, self._mass_scale):
            return
        self._mass_scale = np.array(scale)
        self.model.body_mass[self.link_bodies] = self.nominal_mass * scale
        self.model.body_inertia[self.link_bodies] = self.nominal_inertia * scale[:, None]
        self._set_constants()

    def tune(self, dt: float) -> np.ndarray:
        """Effective joint inertias at home, shape ``(dof,)`` (the mass-matrix diagonal).

        Informational on MuJoCo: friction and couplings are native, nothing is tuned. Computed
        once per compiled model, at the nominal masses.
        """
        if self._inertia is not None:
            return self._inertia
        mujoco = self._mujoco
        scratch = mujoco.MjData(self.model)
        scratch.qpos[:] = self.data.qpos
        scratch.qpos[self.qpos] = self.description.apply_coupling(self.description.home)
        mujoco.mj_kinematics(self.model, scratch)
        mujoco.mj_comPos(self.model, scratch)
        mujoco.mj_makeM(self.model, scratch)
        full = np.zeros((self.model.nv, self.model.nv))
        mujoco.mj_fullM(self.model, scratch, full)
        self._inertia = np.diag(full)[self.dofs].copy()
        return self._inertia

    # ---------------------------------------------------------------- brakes
    def set_brakes(self, mask: np.ndarray, positions: np.ndarray) -> None:
        """Lock the joints in ``mask`` at ``positions`` (rad or m); release the others.

        A brake is a joint equality ``q = position`` switched on with ``data.eq_active``:
        a stiff constraint (time constant two physics steps) with no torque limit.
        """
        mask = np.asarray(mask, dtype=bool)
        self._brake_mask = mask.copy()
        self._brake_position = np.array(positions, dtype=np.float64)
        ids = self.brake
        fitted = ids >= 0
        if not fitted.any():
            return
        self.model.eq_data[ids[mask & fitted], 0] = self._brake_position[mask & fitted]
        self.data.eq_active[ids[fitted]] = mask[fitted]

    # ---------------------------------------------------------------- geometry
    def link_index(self, name: str) -> LinkRef:
        """Where an element, a ``<leaf>_tool`` frame or ``"base"`` lives in the model."""
        if name not in self.links:
            known = [*self.description.element_names, *self.description.tool_names, "base"]
            raise SimulationError(
                f"robot {self.description.name!r} has no link {name!r}; known: {known}"
            )
        return self.links[name]

    def link_pose(self, name: str) -> np.ndarray:
        """World pose (4x4) of an element's moving frame, a tool frame or the base frame."""
        ref = self.link_index(name)
        data = self.data
        self._mujoco.mj_kinematics(self.model, data)
        pose = np.eye(4)
        if ref.site is None:
            pose[:3, :3] = data.xmat[ref.body].reshape(3, 3)
            pose[:3, 3] = data.xpos[ref.body]
        else:
            pose[:3, :3] = data.site_xmat[ref.site].reshape(3, 3)
            pose[:3, 3] = data.site_xpos[ref.site]
        return pose

    def frame_position(self, name: str) -> np.ndarray:
        """World position (m, ``(3,)``) of an element's moving frame, a tool frame or the base.

        From the model's own kinematics of the current ``qpos`` (``mj_kinematics``: ``mj_step``
        leaves the poses of the last step's start). The frame's row of ``data`` is looked up
        once per :meth:`bind`, so it stays right after the world recompiles.
        """
        row = self._frame_rows.get(name)
        if row is None:  # first call since bind(): the frame's row of the current data
            ref = self.links[name]
            row = self.data.xpos[ref.body] if ref.site is None else self.data.site_xpos[ref.site]
            self._frame_rows[name] = row
        self._kinematics(self.model, self.data)
        return row.copy()

    def remove(self) -> None:
        """Remove the robot (bodies, joints, actuators, constraints) from the world."""
        self.world._remove_robot_body(self.base_name, self.body_id)

    def __repr__(self) -> str:
        return f"MujocoBody({self.description.name!r}, prefix={self.prefix!r})"
