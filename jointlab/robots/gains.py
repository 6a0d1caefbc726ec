"""Default PD gains from the robot's inertia, and the stability check of an explicit PD.

Every backend runs the NJointAction law ``kp·(q* − q) + kd·(q̇* − q̇)`` **explicitly**, once per
physics step (or firmware tick) ``dt``, from the state at the start of the step. For one
joint of effective inertia ``I`` (the mass-matrix diagonal at home, armature included, with
its coupled followers), viscous damping ``d`` and semi-implicit Euler integration, the
discrete closed loop is stable exactly when, with ``a = kp·dt²/I`` and ``b = (kd + d)·dt/I``::

    a > 0,   b < 2,   a + 2·b < 4.

Beyond ``b = 1`` the damping overshoots within one step (the velocity flips sign every step:
the chatter of a light joint with stiff gains). JointLab keeps **half of the bound** as a
margin for what the one-joint picture leaves out (inertia coupling between joints, contacts,
Coriolis forces): gains pass :func:`check_gains` when ``b <= 1`` and ``a + 2·b <= 2``.

**Default gains** (a joint whose file gives no ``gains``) make each joint a critically damped
second-order system of natural frequency :data:`DEFAULT_BANDWIDTH` (150 rad/s, about 24 Hz)::

    kp = I·ωn²,   kd = 2·I·ωn − d   (at least 0)

At the reference physics step :data:`REFERENCE_DT` (1 ms, the default ``dt`` of ``sim://``
and the emulator's firmware tick) that is ``ωn·dt = 0.15``: ``a + 2·b = 0.62``, under a third
of the margin (and a sixth of the exact bound). Given only ``kp``, ``kd`` is chosen for
critical damping at that ``kp``; given only ``kd``, ``kp`` likewise. The derived gains pass
the check for ``dt`` up to just under 3 ms (``ωn·dt <= 0.449``); a coarser physics step needs
explicit gains. A floating base is taken as free to move (the lighter case; see
:meth:`jointlab.robots.dynamics.DynamicsModel.joint_inertia`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.robots.description import RobotDescription

__all__ = [
    "DEFAULT_BANDWIDTH",
    "REFERENCE_DT",
    "GainProblem",
    "UnstableGainsWarning",
    "check_gains",
    "critical_gains",
    "effective_inertia",
]

#: Physics step (s) the default gains are designed for: the default ``dt`` of ``sim://``.
REFERENCE_DT = 1e-3
#: Natural frequency ωn (rad/s) of the default, critically damped, joint PD (about 24 Hz).
DEFAULT_BANDWIDTH = 150.0
#: Largest ``(kd + d)·dt/I`` accepted: half the stability bound 2.
DAMPING_BOUND = 1.0
#: Largest ``kp·dt²/I + 2·(kd + d)·dt/I`` accepted: half the stability bound 4.
STIFFNESS_BOUND = 2.0


def effective_inertia(description: RobotDescription, mass_matrix: np.ndarray) -> np.ndarray:
    """Inertia each joint's motor drives, shape ``(dof,)`` (kg·m² or kg).

    The diagonal of ``Pᵀ·M·P`` where ``P = 1 + A`` maps the independent joints' motion onto
    every joint through the couplings (``A`` from ``description.coupling_matrix``): a leader
    drives its followers' inertia too. Dependent joints get their own diagonal entry.

    Args:
        description: The robot.
        mass_matrix: Joint-space inertia ``M`` at the configuration of interest (armature
            included), shape ``(dof, dof)``.
    """
    coupling, _ = description.coupling_matrix
    transfer = np.eye(description.dof) + coupling
    return np.einsum("ij,ik,kj->j", transfer, np.asarray(mass_matrix), transfer)


def critical_gains(
    inertia: np.ndarray,
    damping: np.ndarray,
    kp: np.ndarray | None = None,
    kd: np.ndarray | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
) -> tuple[np.ndarray, np.ndarray]:
    """Gains making each joint a critically damped oscillator (see the module docstring).

    Args:
        inertia: Effective inertia per joint, kg·m² or kg, shape ``(dof,)``.
        damping: Viscous joint damping, N·m·s/rad or N·s/m, shape ``(dof,)``.
        kp: Given P gains (NaN where not given), or ``None`` for none.
        kd: Given D gains (NaN where not given), or ``None`` for none.
        bandwidth: Natural frequency ωn in rad/s where neither gain is given.

    Returns:
        ``(kp, kd)``, each shape ``(dof,)``: the given values kept, the others derived.
    """
    inertia = np.asarray(inertia, dtype=np.float64)
    damping = np.asarray(damping, dtype=np.float64)
    nan = np.full(inertia.shape, np.nan)
    kp = nan if kp is None else np.asarray(kp, dtype=np.float64)
    kd = nan if kd is None else np.asarray(kd, dtype=np.float64)
    omega = np.full(inertia.shape, float(bandwidth))
    omega = np.where(~np.isnan(kp), np.sqrt(np.nan_to_num(kp) / inertia), omega)
    omega = np.where(
        np.isnan(kp) & ~np.isnan(kd), (np.nan_to_num(kd) + damping) / (2.0 * inertia), omega
    )
    derived_kp = inertia * omega**2
    derived_kd = np.maximum(0.0, 2.0 * inertia * omega - damping)
    return np.where(np.isnan(kp), derived_kp, kp), np.where(np.isnan(kd), derived_kd, kd)


class UnstableGainsWarning(UserWarning):
    """Gains fail the explicit-PD bounds, and the simulator was told to run anyway."""


@dataclass(frozen=True)
class GainProblem:
    """A joint whose gains an explicit PD cannot integrate at a physics step."""

    #: Joint-space index and name.
    joint: int
    name: str
    #: ``"kp"`` or ``"kd"``: the gain to lower.
    gain: str
    #: Its value, N·m/rad or N·m·s/rad (N/m, N·s/m for linear joints).
    value: float
    #: The largest value that passes at the other gain's value.
    bound: float
    #: What failed, with the numbers.
    message: str


def check_gains(
    description: RobotDescription,
    dt: float,
    inertia: np.ndarray,
    kp: np.ndarray | None = None,
    kd: np.ndarray | None = None,
) -> list[GainProblem]:
    """Joints whose PD gains fail the explicit-PD bounds at physics step ``dt`` (seconds).

    Args:
        description: The robot (damping, names, which joints are driven).
        dt: Physics step in seconds.
        inertia: Effective inertia per joint (:func:`effective_inertia`), shape ``(dof,)``.
        kp: P gains, shape ``(dof,)``; default: the description's default gains.
        kd: D gains, likewise.

    Returns:
        One problem per failing independent joint (dependent joints are never driven).
    """
    kp = description.default_kp if kp is None else np.asarray(kp, dtype=np.float64)
    kd = description.default_kd if kd is None else np.asarray(kd, dtype=np.float64)
    inertia = np.asarray(inertia, dtype=np.float64)
    damping = description.damping
    a = kp * dt**2 / inertia
    b = (kd + damping) * dt / inertia
    problems = []
    for j in np.flatnonzero(
        ~description.dependent & ((b > DAMPING_BOUND) | (a + 2 * b > STIFFNESS_BOUND))
    ):
        name = description.joint_names[j]
        linear = bool(description.is_linear[j])
        units = ("N/m", "N·s/m", "kg") if linear else ("N·m/rad", "N·m·s/rad", "kg·m²")
        where = (
            f"at dt = {dt:g} s with effective inertia I = {inertia[j]:.4g} {units[2]}"
            f" and damping d = {damping[j]:g} {units[1]}"
        )
        if b[j] > DAMPING_BOUND or 2 * b[j] >= a[j]:
            kd_bound = max(
                0.0, min(DAMPING_BOUND, (STIFFNESS_BOUND - a[j]) / 2) * inertia[j] / dt - damping[j]
            )
            problems.append(
                GainProblem(
                    int(j),
                    name,
                    "kd",
                    float(kd[j]),
                    float(kd_bound),
                    f"gains.kd = {kd[j]:.6g} {units[1]}: (kd + d)·dt/I = {b[j]:.3g} and "
                    f"kp·dt²/I + 2·(kd + d)·dt/I = {a[j] + 2 * b[j]:.3g} {where}; an explicit PD "
                    f"needs them <= {DAMPING_BOUND:g} and <= {STIFFNESS_BOUND:g} (half its "
                    f"stability bounds): kd <= {kd_bound:.4g} {units[1]} at this kp",
                )
            )
        else:
            kp_bound = max(0.0, (STIFFNESS_BOUND - 2 * b[j]) * inertia[j] / dt**2)
            problems.append(
                GainProblem(
                    int(j),
                    name,
                    "kp",
                    float(kp[j]),
                    float(kp_bound),
                    f"gains.kp = {kp[j]:.6g} {units[0]}: kp·dt²/I + 2·(kd + d)·dt/I = "
                    f"{a[j] + 2 * b[j]:.3g} {where}; an explicit PD needs it <= "
                    f"{STIFFNESS_BOUND:g} (half its stability bound): kp <= {kp_bound:.4g} "
                    f"{units[0]} at this kd",
                )
            )
    return problems
