"""Joint friction and reflected inertia by linear least squares on the rigid-body dynamics.

For each joint ``j`` and each usable row in which it slides, the torque the actuator applied
is the rigid-body torque of the bodies the simulator moves (:func:`simulated_bodies`, see
:func:`~jointlab.identify.rigid_body.rigid_body`) plus three joint-level terms, linear in
their parameters::

    τ_j − τ_RB,j(q, q̇, q̈) = f_c · sign(q̇_j) + f_v · q̇_j + ΔJ_a · (u_j·α_j) + ε

with Coulomb friction ``f_c`` (``dynamics.static_friction``), viscous damping ``f_v``
(``dynamics.damping``) and the change ``ΔJ_a`` of reflected rotor inertia
(``dynamics.armature``) over what the bodies already carry. ``u_j·α_j`` is the acceleration
of the moved link about the joint's axis: ``q̈_j`` when the joint moves alone (the default,
sequential excitation), plus the parent joints' accelerations about parallel axes otherwise,
which is how a simulator that has no joint armature (PyBullet) realises it, as inertia of the
link. Rows where the joint moves slower than 5 % of its peak speed, or slowly for its load
(:func:`sliding_gain`), are left out: there friction sticks or is about to reverse and
``sign(q̇)`` says nothing. Parameters not asked for keep their nominal values (moved to the
left-hand side). The estimate is :func:`scipy.optimize.lsq_linear` with every file value
>= 0; its covariance is ``σ² (XᵀX)⁻¹`` with ``σ²`` the residual variance, inflated for the
residuals' lag-one autocorrelation ``ρ`` (effective sample count ``n (1 − ρ)/(1 + ρ)``),
and the 95 % interval is Student's ``t`` on it.

Before solving, each joint's regressor is checked: a joint that hardly moved, moved one
way only, moved at one speed, or never accelerated cannot separate these terms, and the
problem is reported by name (the caller raises them together).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import lsq_linear
from scipy.stats import t as student_t

from jointlab.controllers.dynamics import DynamicsModel
from jointlab.identify.data import IdentificationData
from jointlab.identify.rigid_body import rigid_body
from jointlab.robots import RobotDescription

__all__ = ["DYNAMICS_PARAMETERS", "JointFit", "autocorrelation_inflation", "fit_joint_dynamics"]

#: The joint-level dynamics parameters this regression estimates, in regressor order.
DYNAMICS_PARAMETERS = ("static_friction", "damping", "armature")
#: Rows a joint must move in (faster than its threshold) for its dynamics to be fitted.
MIN_MOVING_ROWS = 100
#: Share of its peak speed below which a joint counts as still.
STILL_FRACTION = 0.05
#: A row counts as sliding when ``sliding_gain · |q̇|`` exceeds this many times
#: ``|τ| + 2 f_c`` (see :func:`sliding_gain`).
SLIDING_MARGIN = 2.0
#: Most rows the rigid-body model is evaluated on (the rows are thinned evenly beyond it).
MAX_ROWS = 12_000
#: Largest condition number of the column-normalised regressor.
MAX_CONDITION = 1e3
#: Confidence level of the intervals.
CONFIDENCE = 0.95


@dataclass(frozen=True, eq=False)
class JointFit:
    """The dynamics fit of one joint."""

    #: Joint name.
    joint: str
    #: Fitted parameters, a subset of :data:`DYNAMICS_PARAMETERS` in that order.
    names: tuple[str, ...]
    #: Estimates (N·m, N·m·s/rad, kg·m²; N, N·s/m, kg for linear joints).
    values: np.ndarray
    #: 95 % intervals, shape ``(len(names), 2)``, clipped at 0.
    interval: np.ndarray
    #: Times of the rows used, seconds.
    time: np.ndarray
    #: Torque residuals at those rows, N·m or N.
    residual: np.ndarray

    @property
    def rms(self) -> float:
        """Root mean square of the residuals, N·m or N."""
        return float(np.sqrt(np.mean(self.residual**2)))


def nominal_armature(description: RobotDescription) -> np.ndarray:
    """``dynamics.armature`` of each joint, kg·m² or kg, shape ``(dof,)``."""
    return np.array([j.dynamics.armature for j in description.joints], dtype=np.float64)


def simulated_bodies(description: RobotDescription) -> tuple[RobotDescription, np.ndarray]:
    """The rigid bodies the simulator moves for ``description``, and the armature they carry.

    Returns the description whose links are the bodies of the simulation and the reflected
    inertia per joint already inside them, shape ``(dof,)``: the fit estimates the change of
    ``dynamics.armature`` on top of it, with the regressor the simulator realises it with
    (the moved link's acceleration about the axis, :func:`rigid_body`). PyBullet has no joint
    armature: the simulator adds each joint's to the link it moves
    (:func:`jointlab.robots.inertials.realised_inertial`), which its ancestors feel too, so the
    nominal armature is taken in exactly as simulated.
    """
    armature = nominal_armature(description)
    if not armature.any():
        return description, np.zeros(description.dof)
    from jointlab.robots.inertials import realised_inertial

    specs = []
    for spec in description.actuators:
        if spec.is_joint and spec.link is not None and spec.dynamics.armature > 0:
            mass, cog, inertia = realised_inertial(spec)
            matrix = tuple(tuple(float(v) for v in row) for row in inertia)
            link = replace(
                spec.link,
                mass=float(mass),
                inertia=matrix,
                center_of_gravity=tuple(float(v) for v in cog),
            )
            spec = replace(spec, link=link, dynamics=replace(spec.dynamics, armature=0.0))
        specs.append(spec)
    return replace(description, actuators=tuple(specs)), armature


def sliding_gain(description: RobotDescription, physics_dt: float) -> np.ndarray:
    """``½ M_jj / dt`` per joint (N·m·s/rad), from the mass matrix at home plus armature.

    A joint whose ``sliding_gain · |q̇|`` exceeds its torque plus friction is clearly
    sliding: it will not stick or reverse within the next physics steps, so its friction
    opposes its velocity (the simulator's friction law switches on exactly this quantity).
    """
    model = DynamicsModel(description)
    inertia = np.diag(model.mass_matrix(description.apply_coupling(description.home)))
    return 0.5 * (inertia + nominal_armature(description)) / physics_dt


def autocorrelation_inflation(residual: np.ndarray) -> float:
    """Variance factor ``(1 + ρ) / (1 − ρ)`` for lag-one autocorrelation ``ρ`` (>= 1)."""
    if residual.shape[0] < 3:
        return 1.0
    centred = residual - residual.mean()
    denominator = float(centred @ centred)
    if denominator == 0.0:
        return 1.0
    rho = float(centred[1:] @ centred[:-1]) / denominator
    rho = min(max(rho, 0.0), 0.999)
    return (1.0 + rho) / (1.0 - rho)


def _problems(
    joint: str, unit: str, speed: np.ndarray, accel: np.ndarray, wanted: tuple[str, ...]
) -> list[str]:
    """Why the regressor of one joint cannot identify ``wanted`` (empty when it can)."""
    hint = excite_hint(joint)
    if speed.shape[0] < MIN_MOVING_ROWS:
        listed = ", ".join(wanted[:-1]) + (" and " if len(wanted) > 1 else "") + wanted[-1]
        return [
            f"{listed} (dynamics.*) of joint {joint!r} cannot be identified: it moved in only "
            f"{speed.shape[0]} usable rows ({MIN_MOVING_ROWS} needed); {hint}"
        ]
    problems = []
    if "static_friction" in wanted:
        forward, backward = int(np.sum(speed > 0)), int(np.sum(speed < 0))
        if min(forward, backward) < 0.1 * speed.shape[0]:
            problems.append(
                f"static_friction (dynamics.static_friction) of joint {joint!r} cannot be "
                f"identified: it moved {forward} rows forward and {backward} backward, and "
                f"Coulomb friction needs motion both ways; {hint}"
            )
    magnitude = np.abs(speed)
    if "damping" in wanted and "static_friction" in wanted:
        spread = float(magnitude.std() / magnitude.mean())
        if spread < 0.1:
            problems.append(
                f"damping (dynamics.damping) of joint {joint!r} cannot be told from its "
                f"Coulomb friction: it moved at nearly one speed ({magnitude.mean():.3g} {unit}/s "
                f"± {100 * spread:.0f} %); a multisine or chirp excitation moves it at many "
                f"speeds; {hint}"
            )
    if "armature" in wanted and float(np.sqrt(np.mean(accel**2))) < 1e-3:
        problems.append(
            f"armature (dynamics.armature) of joint {joint!r} cannot be identified: it never "
            f"accelerated (rms {float(np.sqrt(np.mean(accel**2))):.2g} {unit}/s²); {hint}"
        )
    return problems


def excite_hint(joint: str) -> str:
    """How to record an excitation of ``joint``, for error messages."""
    return (
        f"excite it: `jointlab identify excite ROBOT URL --joints {joint}` or "
        f"jointlab.identify.excitation(description, joints=[{joint!r}])"
    )


def prefix(parameter: str) -> str:
    """Robot-file path of a dynamics parameter (``damping`` -> ``dynamics.damping``)."""
    return f"dynamics.{parameter}"


def fit_joint_dynamics(
    data: IdentificationData, joints: list[int], parameters: tuple[str, ...]
) -> tuple[dict[int, JointFit], list[str]]:
    """Fit the asked-for :data:`DYNAMICS_PARAMETERS` of ``joints`` (module docstring).

    Args:
        data: The aligned log.
        joints: Joint indices to fit.
        parameters: Which of :data:`DYNAMICS_PARAMETERS` to estimate.

    Returns:
        The fits by joint index, and the problems that kept some joints from being fitted
        (one sentence each, naming the parameter, the joint and the excitation to record).
    """
    wanted = tuple(p for p in DYNAMICS_PARAMETERS if p in parameters)
    if not wanted:
        return {}, []
    description = data.description
    rows = np.flatnonzero(data.regular)
    if rows.shape[0] > MAX_ROWS:
        rows = rows[np.linspace(0, rows.shape[0] - 1, MAX_ROWS).round().astype(int)]
    q, qd, qdd = data.position[rows], data.smooth_velocity[rows], data.acceleration[rows]
    torque = data.smooth_torque[rows]
    bodies, modelled = simulated_bodies(description)
    rigid, along = rigid_body(bodies, q, qd, qdd)
    # Armature is fitted as a change to what the bodies already carry (``modelled``).
    nominal = np.stack(
        [description.static_friction, description.damping, nominal_armature(description) - modelled]
    )
    lowest = np.stack([np.zeros(description.dof), np.zeros(description.dof), -modelled])
    peak = np.percentile(np.abs(qd), 99, axis=0)
    sliding = sliding_gain(description, data.physics_dt)
    load = np.abs(torque) + 2.0 * description.static_friction
    fits: dict[int, JointFit] = {}
    problems: list[str] = []
    for j in joints:
        spec = description.joints[j]
        unit = "m" if description.is_linear[j] else "rad"
        moving = (np.abs(qd[:, j]) > STILL_FRACTION * peak[j]) & (
            sliding[j] * np.abs(qd[:, j]) > SLIDING_MARGIN * load[:, j]
        )
        speed, accel = qd[moving, j], along[moving, j]
        trouble = _problems(spec.name, unit, speed, accel, wanted)
        columns = np.stack([np.sign(speed), speed, accel], axis=1)
        target = torque[moving, j] - rigid[moving, j]
        chosen = [DYNAMICS_PARAMETERS.index(p) for p in wanted]
        fixed = [i for i in range(3) if i not in chosen]
        if not trouble:
            target = target - columns[:, fixed] @ nominal[fixed, j]
            matrix = columns[:, chosen]
            scale = np.sqrt(np.mean(matrix**2, axis=0))
            singular = np.linalg.svd(matrix / scale, full_matrices=False)
            condition = singular[1][0] / max(singular[1][-1], 1e-300)
            if condition > MAX_CONDITION:
                weakest = wanted[int(np.argmax(np.abs(singular[2][-1])))]
                trouble.append(
                    f"{weakest} ({prefix(weakest)}) of joint {spec.name!r} cannot be told apart "
                    f"from the other terms (condition number {condition:.3g}): the joint needs "
                    f"more varied speeds and accelerations; {excite_hint(spec.name)}"
                )
        if trouble:
            problems.extend(trouble)
            continue
        solution = lsq_linear(matrix, target, bounds=(lowest[chosen, j], np.inf), method="bvls")
        residual = target - matrix @ solution.x
        offset = np.where(np.array(chosen) == 2, modelled[j], 0.0)  # back to the file's terms
        values = solution.x + offset
        count, width = matrix.shape
        variance = float(residual @ residual) / max(count - width, 1)
        inflation = autocorrelation_inflation(residual)
        covariance = variance * inflation * np.linalg.inv(matrix.T @ matrix)
        effective = max(count / inflation - width, 1.0)
        half = student_t.ppf(0.5 + CONFIDENCE / 2, effective) * np.sqrt(np.diag(covariance))
        interval = np.stack([np.maximum(values - half, 0.0), values + half], axis=1)
        fits[j] = JointFit(
            joint=spec.name,
            names=wanted,
            values=values,
            interval=interval,
            time=data.time[rows][moving],
            residual=residual,
        )
    return fits, problems
