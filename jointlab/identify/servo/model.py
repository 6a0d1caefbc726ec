"""The servo model identification fits: one position servo per joint, simulated in numpy.

Each joint ``j`` of a recording is simulated on its own, at ``substeps`` steps per frame, as
the emulated servos' firmware and the simulator treat it (:mod:`jointlab.hardware.servo`)::

    e   = goal(t − delay) − q                      goal held per frame, shifted by the delay
    u   = clip(stiffness·K·deadband(e, backlash/2) − Kd·q̇, ±torque_limit)
    u'  = clip(−β·q̇, u − coulomb, u + coulomb)     Coulomb friction in the drive
    M(t)·q̈ = u' − G(t) − viscous·q̇

with ``K``, ``Kd`` the joint gains of the P and D registers used while recording, ``I(t)`` the
joint's own inertia ``M_jj`` and ``G(t)`` its gravity torque, both evaluated along the
*recorded* positions of every joint; the joints are coupled through the whole ``M(t)``, so
a joint feels the others' accelerations. Coulomb friction is the simulator's rule
(:mod:`jointlab.sim.law`: it opposes the drive's torque and brakes the joint with ``β`` =
half its speed per step), so that the model of the nominal file reproduces its twin. The step
is semi-implicit (``M`` and damping implicit), so any substep below the servo's time constants
is stable. The six parameters per joint (:data:`PARAMETERS`) are
arrays of shape ``(batch, dof)``: a batch evaluates many parameter sets in one pass, which is
how :mod:`.fit` gets its Jacobian (joints are independent, so one column per parameter serves
every joint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.identify.servo.traces import ServoTrace
from jointlab.robots import RobotDescription
from jointlab.robots.dynamics import DynamicsModel
from jointlab.sim.law import FRICTION_STIFFNESS

__all__ = ["PARAMETERS", "SUBSTEP", "JointInputs", "joint_inputs", "simulate"]

#: The fitted parameters, in the last axis of a parameter array.
PARAMETERS = ("stiffness", "coulomb", "viscous", "backlash", "delay", "torque_limit")
#: Longest simulation substep, s.
SUBSTEP = 0.004


@dataclass(frozen=True)
class JointInputs:
    """What the model of one trace needs, per substep (arrays ``(m, dof)``).

    Attributes:
        trace: The recording.
        substeps: Substeps per frame.
        h: Substep length, s.
        inertia: ``M_jj`` along the recorded positions, kg·m².
        gravity: Gravity torque along the recorded positions, N·m.
        matrix: ``M`` along the recorded positions, ``(m, dof, dof)``, kg·m².
    """

    trace: ServoTrace
    substeps: int
    h: float
    inertia: np.ndarray
    gravity: np.ndarray
    matrix: np.ndarray


def joint_inputs(description: RobotDescription, trace: ServoTrace) -> JointInputs:
    """Inertia and gravity of ``description`` along ``trace``'s recorded positions."""
    model = DynamicsModel(description)
    n, dof = trace.position.shape
    gravity = np.empty((n, dof))
    matrices = np.empty((n, dof, dof))
    for k in range(n):
        gravity[k], matrices[k] = model.gravity_and_mass_matrix(trace.position[k])
    inertia = np.diagonal(matrices, axis1=1, axis2=2).copy()
    substeps = max(1, int(np.ceil(trace.frame_dt / SUBSTEP)))
    h = trace.frame_dt / substeps
    frames = np.arange((n - 1) * substeps) / substeps  # substep start, in frames

    def along(values: np.ndarray) -> np.ndarray:
        low = np.floor(frames).astype(np.int64)
        w = (frames - low).reshape(-1, *([1] * (values.ndim - 1)))
        return values[low] * (1 - w) + values[np.minimum(low + 1, n - 1)] * w

    return JointInputs(
        trace=trace,
        substeps=substeps,
        h=h,
        inertia=along(inertia),
        gravity=along(gravity),
        matrix=along(matrices),
    )


def _delayed_goals(inputs: JointInputs, delay: np.ndarray) -> np.ndarray:
    """Goal each substep sees under ``delay`` (``(batch, dof)`` s): ``(m, batch, dof)``, rad.

    Goals are held per frame; a switch that falls inside a substep counts in proportion.
    """
    trace, h = inputs.trace, inputs.h
    goal = trace.goal
    n = len(goal)
    m = inputs.inertia.shape[0]
    t = (np.arange(m) * h)[:, None, None] - delay[None]  # substep start, shifted
    k = np.floor(t / trace.frame_dt + 1e-9).astype(np.int64)
    switch = (k + 1) * trace.frame_dt
    fraction = np.clip((t + h - switch) / h, 0.0, 1.0)
    k0 = np.clip(k, 0, n - 1)
    k1 = np.clip(k + 1, 0, n - 1)
    columns = np.arange(goal.shape[1])
    g0 = goal[k0, columns]
    g1 = goal[k1, columns]
    return g0 + fraction * (g1 - g0)


def simulate(
    inputs: JointInputs,
    params: np.ndarray,
    kp: np.ndarray,
    kd: np.ndarray,
    peak: np.ndarray | None = None,
) -> np.ndarray:
    """Positions the model predicts at every frame.

    Args:
        inputs: The trace's :func:`joint_inputs`.
        params: Parameter sets, ``(batch, dof, 6)`` in :data:`PARAMETERS` order (stiffness
            factor, N·m, N·m·s/rad, rad, s, N·m).
        kp: Joint stiffness of the P registers as recorded, N·m/rad, ``(dof,)``.
        kd: Joint damping of the D registers, N·m·s/rad, ``(dof,)``.
        peak: When given, ``(batch, dof)``: raised to the largest torque the loop asked for
            (before the torque limit), N·m.

    Returns:
        ``(batch, n, dof)`` positions, rad; frame 0 is the recorded start.
    """
    trace, h, sub = inputs.trace, inputs.h, inputs.substeps
    stiffness, coulomb, viscous, backlash, delay, limit = np.moveaxis(params, -1, 0)
    gain = stiffness * kp
    half = 0.5 * backlash
    goals = _delayed_goals(inputs, delay)
    batch = params.shape[0]
    n, dof = trace.position.shape
    out = np.empty((batch, n, dof))
    q = np.broadcast_to(trace.position[0], (batch, dof)).copy()
    v = np.zeros((batch, dof))
    eye = np.eye(dof)

    def diagonal(values: np.ndarray) -> np.ndarray:
        return values[:, :, None] * eye

    solve = np.linalg.solve
    inv_h = 1.0 / h
    brake = -FRICTION_STIFFNESS * inv_h
    out[:, 0] = q
    sign, absolute, maximum, clip = np.sign, np.abs, np.maximum, np.clip
    neg_limit = -limit
    for i in range(goals.shape[0]):
        e = goals[i] - q
        u = gain * (sign(e) * maximum(absolute(e) - half, 0.0)) - kd * v
        if peak is not None:
            maximum(peak, absolute(u), out=peak)
        u = clip(u, neg_limit, limit)
        # Coulomb friction as the simulator applies it: in the drive, opposing the servo's
        # torque, braking the joint (half its speed per step) as far as it can.
        u = clip(brake * inputs.inertia[i] * v, u - coulomb, u + coulomb)
        p = v @ inputs.matrix[i] * inv_h + u - inputs.gravity[i]
        system = inputs.matrix[i] * inv_h + diagonal(viscous)
        v = solve(system, p[..., None])[..., 0]
        q = q + h * v
        if (i + 1) % sub == 0:
            out[:, (i + 1) // sub] = q
    return out
