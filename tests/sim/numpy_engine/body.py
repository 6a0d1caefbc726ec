"""A description in a :class:`~numpy_engine.world.NumpyWorld`, and the law stepped on it."""

from __future__ import annotations

from typing import Any

import numpy as np

from jointlab.errors import SimulationError
from jointlab.robots.description import RobotDescription
from jointlab.robots.dynamics import DynamicsModel
from jointlab.robots.kinematics import forward_kinematics
from jointlab.sim.law import DriveLoop


class NumpyBody:
    """Joint state and rigid-body model of one robot (the ``EngineBody`` protocol)."""

    #: No engine kinematics cheaper than numpy's (it is numpy's).
    cheap_kinematics = False
    #: Couplings are refused at load, so there are none to add.
    soft_coupling = None

    def __init__(self, world: Any, description: RobotDescription, handle: int) -> None:
        self.world = world
        self.description = description
        self.body_id = handle
        self.model = DynamicsModel(description, world.gravity)
        dof = description.dof
        self.q = np.array(description.home, dtype=np.float64)
        self.qd = np.zeros(dof)
        self.damping = np.array(description.damping, dtype=np.float64)
        self.brake_mask = np.zeros(dof, dtype=bool)
        self.brake_position = np.zeros(dof)
        self.torque = np.zeros(dof)

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions and velocities (fresh arrays)."""
        return self.q.copy(), self.qd.copy()

    def reset(self, q: np.ndarray, qd: np.ndarray) -> None:
        """Put the joints at ``q``/``qd``."""
        self.q = np.array(q, dtype=np.float64)
        self.qd = np.array(qd, dtype=np.float64)

    def set_mass_scale(self, scale: np.ndarray) -> None:
        """Only the nominal masses: this engine's model is the description's."""
        if not np.all(np.asarray(scale) == 1.0):
            raise SimulationError("engine 'numpy' cannot randomise masses")

    def set_damping(self, damping: np.ndarray) -> None:
        """Viscous joint damping, integrated with the rest (explicitly)."""
        self.damping = np.array(damping, dtype=np.float64)

    def tune(self, dt: float) -> np.ndarray:
        """Diagonal of ``M`` at home (armature included)."""
        home = self.description.home
        return np.diag(self.model.mass_matrix(home)).copy()

    def set_brakes(self, mask: np.ndarray, positions: np.ndarray) -> None:
        """Braked joints are held exactly at ``positions``."""
        self.brake_mask = np.array(mask, dtype=bool)
        self.brake_position = np.array(positions, dtype=np.float64)

    def link_index(self, name: str) -> str:
        """The frame's name (this engine looks frames up by name)."""
        known = [*self.description.element_names, *self.description.tool_names, "base"]
        if name not in known:
            raise SimulationError(
                f"robot {self.description.name!r} has no link {name!r}; known: {known}"
            )
        return name

    def link_pose(self, name: str) -> np.ndarray:
        """World pose (4x4) of a frame, from the description's kinematics."""
        self.link_index(name)
        return forward_kinematics(self.description, self.q).frame(name)

    def frame_position(self, name: str) -> np.ndarray:
        """World position of a frame (m, ``(3,)``)."""
        return self.link_pose(name)[:3, 3].copy()

    def integrate(self, dt: float) -> None:
        """One semi-implicit Euler step of ``M q̈ = τ − c(q, q̇) − d q̇`` (brakes hold)."""
        q, qd = self.q, self.qd
        free = ~self.brake_mask
        if self.brake_mask.any():  # braked joints stand still: the free ones move alone
            q = np.where(free, q, self.brake_position)
            qd = np.where(free, qd, 0.0)
        bias = self.model.inverse_dynamics(q, qd, np.zeros_like(q))  # gravity, Coriolis
        force = self.torque - bias - self.damping * qd
        mass = self.model.mass_matrix(q)
        qdd = np.zeros_like(q)
        qdd[free] = np.linalg.solve(mass[np.ix_(free, free)], force[free])
        qd = qd + dt * qdd
        self.q, self.qd = q + dt * qd, qd

    def remove(self) -> None:
        """Leave the world."""
        self.world._bodies.pop(self.body_id, None)


class NumpyLoop(DriveLoop):
    """The law of :mod:`jointlab.sim.law` stepped on a :class:`NumpyBody`."""

    def before_physics(self) -> None:
        """This physics step's torque (the world integrates every body)."""
        if self.forces:
            raise SimulationError("engine 'numpy' cannot push links (no external forces)")
        self.body.torque = self.torque(self.q, self.qd)

    def after_physics(self) -> None:
        """Read the state the physics step produced."""
        self.qd_prev = self.qd
        self.q, self.qd = self.body.read()

    def run(self, steps: int) -> None:
        """``steps`` physics steps of a robot alone in its world."""
        body, dt = self.body, self.dt
        for _ in range(steps):
            self.before_physics()
            body.integrate(dt)
            self.after_physics()
        body.world.steps += steps
