"""Builders for the identification tests: synthetic logs with known actuator parameters."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.identify.regression import nominal_armature, simulated_bodies
from jointlab.identify.rigid_body import rigid_body
from jointlab.recording import Field, Log, LogMetadata
from jointlab.robots import RobotDescription

DT = 0.001


@dataclass(frozen=True)
class Truth:
    """Joint-level parameters of a synthetic robot, shape ``(dof,)`` each."""

    static_friction: np.ndarray
    damping: np.ndarray
    armature: np.ndarray
    torque_constant: np.ndarray


def multisine_motion(description: RobotDescription, seconds: float, seed: int = 0):
    """Smooth joint motion about home: positions, velocities, accelerations, ``(T, dof)``."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, DT)
    dof = description.dof
    q = np.tile(description.home, (t.shape[0], 1))
    qd = np.zeros_like(q)
    qdd = np.zeros_like(q)
    for j in range(dof):
        for f in (0.3, 0.7, 1.3):
            w = 2 * np.pi * f * (1 + 0.1 * j)
            a = 0.15 / f
            phase = rng.uniform(0, 2 * np.pi)
            q[:, j] += a * np.sin(w * t + phase)
            qd[:, j] += a * w * np.cos(w * t + phase)
            qdd[:, j] -= a * w * w * np.sin(w * t + phase)
    return t, q, qd, qdd


def synthetic_log(
    description: RobotDescription,
    truth: Truth,
    t: np.ndarray,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    *,
    with_current: bool = True,
    joint_names: tuple[str, ...] | None = None,
) -> Log:
    """A log whose applied torque is the rigid-body torque plus the ``truth`` joint terms.

    The armature acts on the moved link's acceleration about the axis, as in the simulator;
    only the base joint's differs from the nominal one (a joint without ancestors: the
    simulator's realisation of it as link inertia loads no other joint).

    Velocities follow the accelerations exactly (``qd[k+1] = qd[k] + qdd[k]·dt``), so the
    log's acceleration over each row equals ``qdd`` as identification computes it.
    """
    qd = qd.copy()
    qd[1:] = qd[0] + np.cumsum(qdd[:-1] * DT, axis=0)
    bodies, modelled = simulated_bodies(description)  # the nominal armature as simulated
    rigid, along = rigid_body(bodies, q, qd, qdd)
    extra = truth.armature - modelled
    torque = rigid + truth.static_friction * np.sign(qd) + truth.damping * qd + extra * along
    ratio = np.array([j.motor.gear_ratio for j in description.joints])
    dof = description.dof
    fields = [
        Field("state", "position", dof),
        Field("state", "velocity", dof),
        Field("applied", "torque", dof),
    ]
    columns = [q, qd, torque]
    if with_current:
        fields.append(Field("state", "current", description.dof))
        current = torque / (truth.torque_constant * ratio)
        columns.append(np.vstack([np.zeros((1, description.dof)), current[:-1]]))
    metadata = LogMetadata(
        robot=description.name,
        joint_names=joint_names or description.joint_names,
        dt=DT,
        extra={"physics_dt": DT},
    )
    return Log(time=t, data=np.hstack(columns), fields=tuple(fields), metadata=metadata)


def truth_for(description: RobotDescription) -> Truth:
    """Parameters off the description's nominal ones by known factors."""
    kt = np.array([j.motor.torque_constant for j in description.joints])
    return Truth(
        static_friction=description.static_friction * 1.5 + 0.01,
        damping=description.damping * 0.7 + 0.02,
        armature=nominal_armature(description) + np.eye(description.dof)[0] * 0.01,
        torque_constant=kt * 1.2,
    )
