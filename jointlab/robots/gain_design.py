"""Default PD gains checked on the coupled dynamics: the discrete closed loop of each engine.

:mod:`jointlab.robots.gains` sizes each joint's PD from the diagonal of the joint-space mass
matrix at home, as if every joint moved alone. Joints with parallel axes are not alone: in a
chain of pitch joints each one carries the others, so the inverse of the mass matrix has
diagonal entries far above ``1 / M_ii`` and the coupled loop is much stiffer than the
per-joint picture says. This module checks the gains on the **coupled** loop, over the range
of motion, as each engine integrates it, and lowers the default gains until it is stable.

**The one-step map.** About a held pose, with joint error ``e`` and velocity ``v``, the
explicit PD plus gravity gives the generalised force ``f = -(Kp + G)·e - (Kd + D)·v``
(``G = ∂g/∂q`` the gravity-compensation stiffness, ``D`` the viscous joint damping). Both
engines integrate it semi-implicitly at the physics step ``h``::

    PyBullet:  v⁺ = v + h·M_b⁻¹·f              e⁺ = e + h·v⁺   (damping explicit)
    MuJoCo:    v⁺ = v + h·(M + h·D)⁻¹·f        e⁺ = e + h·v⁺   (Euler: damping implicit)

which is linear in ``(e, v)``: a ``2n x 2n`` matrix per configuration. ``M`` is the
description's mass matrix with the armature on its diagonal (MuJoCo's joint ``armature``);
``M_b`` is the one PyBullet simulates, which has no joint armature and carries the rotor in
the link it moves (:func:`jointlab.robots.inertials.realised_inertial`), so a rotor on a distal
pitch joint is also felt, and coupled, by every parallel joint upstream. Both come from the
project's numpy model (:class:`jointlab.robots.dynamics.DynamicsModel`); no engine is run.

**Margin.** Gains pass when the loop stays stable with both gains multiplied by
:data:`GAIN_MARGIN` (1.5: every eigenvalue of the one-step map inside the unit circle, within
1e-9) at home and at :data:`SAMPLES` configurations drawn (seeded, one draw per depth in the
tree, so identical branches get identical gains) over the joints' range, on both engines. The
margin covers a mass matrix a third lighter than modelled (mass randomisation, contacts) and
the Coriolis terms the linearisation leaves out.

**Design** (:func:`design_gains`): the per-joint critically damped gains of
:func:`~jointlab.robots.gains.critical_gains` at :data:`~jointlab.robots.gains.
DEFAULT_BANDWIDTH` on the diagonal at home are kept when they pass (every built-in robot's
do except trifinger's, whose base joints fail at some poses on MuJoCo). Otherwise candidates
are tried, each at the largest uniform bandwidth factor ``s <= 1`` that passes (bisection):
joints sized by ``free_i = 1 / (M⁻¹)_ii`` (the inertia a joint feels with the others free,
smallest over the samples and engines), or by the diagonal with each joint's bandwidth capped
so that its damping number on the free inertia, ``2·ζ·I·ω·dt / free``, stays below
:data:`DAMPING_TARGETS`; each with damping ratios :data:`DAMPING_RATIOS` (a coupled chain's
slow modes need more than critical). Kept: the candidate whose slowest mode decays fastest
(smallest spectral radius at nominal gains). Gains the file gives are never changed.

**No stable defaults**: see :mod:`jointlab.robots.gain_hold`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from jointlab.robots.description import RobotDescription
from jointlab.robots.dynamics import DynamicsModel
from jointlab.robots.gains import DEFAULT_BANDWIDTH, REFERENCE_DT, critical_gains
from jointlab.robots.inertials import realised_inertial

__all__ = [
    "ENGINES",
    "GAIN_MARGIN",
    "SAMPLES",
    "CoupledPlant",
    "GainDesign",
    "coupled_plants",
    "design_gains",
    "independent_joints",
    "one_step_maps",
    "sample_configurations",
    "spectral_radius",
]

#: Configurations sampled over the range of motion besides home.
SAMPLES = 24
#: The loop must stay stable with both gains multiplied by this.
GAIN_MARGIN = 1.5
#: Damping ratios the coupled sizing tries (the slow modes of a coupled chain need more).
DAMPING_RATIOS = (1.0, 2.0)
#: Per-joint damping numbers ``2·ζ·I·ω·dt / free inertia`` the capped candidates aim at.
DAMPING_TARGETS = (0.25, 0.5, 1.0)
#: Engines whose integration the design checks: name -> joint damping integrated implicitly.
ENGINES = {"pybullet": False, "mujoco": True}
#: Spectral radius accepted as stable (marginal modes, e.g. a joint with kp = 0, sit at 1).
_RADIUS_TOLERANCE = 1e-9


@dataclass(frozen=True)
class CoupledPlant:
    """The linearised dynamics of the independent joints over sampled configurations.

    Attributes:
        engine: The engine whose mass matrix and integration this is.
        implicit_damping: True when the engine integrates joint damping implicitly.
        mass: Joint-space inertia, ``(samples, m, m)`` (kg·m², kg), ``m`` independent joints.
        gravity_stiffness: ``∂g/∂q`` of the gravity compensation, ``(samples, m, m)``.
        damping: Viscous damping projected on the independent joints, ``(m, m)``.
    """

    engine: str
    implicit_damping: bool
    mass: np.ndarray
    gravity_stiffness: np.ndarray
    damping: np.ndarray


@dataclass(frozen=True)
class GainDesign:
    """The default gains and the coupled check they passed.

    Attributes:
        kp: P gains, shape ``(dof,)`` (N·m/rad or N/m).
        kd: D gains, shape ``(dof,)`` (N·m·s/rad or N·s/m).
        scale: Bandwidth factor applied to the derived gains (1: the per-joint design passed).
        radius: Largest spectral radius of the one-step map at nominal gains, over the
            samples and engines.
        margin_radius: The same with both gains multiplied by :data:`GAIN_MARGIN`.
        dt: Physics step the check used, seconds.
    """

    kp: np.ndarray
    kd: np.ndarray
    scale: float
    radius: float
    margin_radius: float
    dt: float

    @property
    def stable(self) -> bool:
        """True when the loop is stable with the gain margin."""
        return self.margin_radius <= 1.0 + _RADIUS_TOLERANCE


def independent_joints(description: RobotDescription) -> tuple[np.ndarray, np.ndarray]:
    """Indices of independent joints and the map ``P`` (dof x m) from them onto all joints."""
    coupling, _ = description.coupling_matrix
    independent = np.flatnonzero(~description.dependent)
    transfer = (np.eye(description.dof) + coupling)[:, independent]
    return independent, transfer


def sample_configurations(description: RobotDescription, samples: int, seed: int) -> np.ndarray:
    """Home then ``samples`` uniform draws within [min, max], couplings applied, ``(s, dof)``."""
    rng = np.random.default_rng(seed)
    lo = np.array([a.min for a in description.joints])
    hi = np.array([a.max for a in description.joints])
    # One draw per depth in the tree (joints above a joint): identical branches (fingers)
    # get identical samples, hence identical gains.
    parents = {a.name: a.parent for a in description.actuators}
    joint_names = set(description.joint_names)

    def depth(name: str) -> int:
        above, parent = 0, parents[name]
        while parent in parents:
            above += parent in joint_names
            parent = parents[parent]
        return above

    depths = np.array([depth(name) for name in description.joint_names])
    fractions = rng.random((samples, int(depths.max()) + 1))[:, depths]
    draws = lo + (hi - lo) * fractions
    return description.apply_coupling(np.vstack([description.home, draws]))


def _bullet_realisation(description: RobotDescription) -> RobotDescription:
    """``description`` as PyBullet simulates it: armature carried in the links, none on joints."""
    specs = []
    for spec in description.actuators:
        if spec.is_joint and spec.link is not None and spec.dynamics.armature > 0:
            mass, cog, inertia = realised_inertial(spec)
            link = replace(
                spec.link,
                mass=float(mass),
                center_of_gravity=tuple(cog),
                inertia=np.asarray(inertia),
            )
            spec = replace(spec, link=link, dynamics=replace(spec.dynamics, armature=0.0))
        specs.append(spec)
    return replace(description, actuators=tuple(specs))


def _gravity_stiffness(model: DynamicsModel, q: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """Central-difference ``∂g/∂q`` of the gravity compensation at each row of ``q``."""
    dof = q.shape[1]
    out = np.empty((q.shape[0], dof, dof))
    for s, row in enumerate(q):
        for j in range(dof):
            delta = np.zeros(dof)
            delta[j] = step
            out[s, :, j] = (
                model.gravity_torque(row + delta) - model.gravity_torque(row - delta)
            ) / (2 * step)
    return out


def coupled_plants(
    description: RobotDescription, samples: int = SAMPLES, seed: int = 0
) -> list[CoupledPlant]:
    """The linearised dynamics at home and sampled configurations, one per engine.

    A floating base is taken as free (:meth:`DynamicsModel.joint_inertia`), the lighter case.
    Couplings are projected out: the plants act on the independent joints only.
    """
    q = sample_configurations(description, samples, seed)
    _, transfer = independent_joints(description)
    rigid = DynamicsModel(description)
    stiffness = transfer.T @ _gravity_stiffness(rigid, q) @ transfer
    damping = transfer.T @ np.diag(description.damping) @ transfer
    bullet = (
        rigid
        if not np.any(description.armature > 0)
        else DynamicsModel(_bullet_realisation(description))
    )
    plants = []
    for engine, implicit in ENGINES.items():
        model = bullet if engine == "pybullet" else rigid
        mass = np.stack([model.joint_inertia(row) for row in q])
        plants.append(
            CoupledPlant(engine, implicit, transfer.T @ mass @ transfer, stiffness, damping)
        )
    return plants


def _blocks(plant: CoupledPlant) -> list[np.ndarray]:
    """Groups of joints that no term of the plant couples (a fixed base's separate branches).

    The one-step map is block diagonal over them, so its eigenvalues are those of the blocks.
    """
    linked = (np.abs(plant.mass) + np.abs(plant.gravity_stiffness)).max(axis=0)
    linked = linked + linked.T + np.abs(plant.damping) > 0
    m = linked.shape[0]
    group = -np.ones(m, dtype=int)
    for start in range(m):
        if group[start] >= 0:
            continue
        group[start], stack = start, [start]
        while stack:
            j = stack.pop()
            for k in np.flatnonzero(linked[j] & (group < 0)):
                group[k] = start
                stack.append(int(k))
    return [np.flatnonzero(group == g) for g in np.unique(group)]


def _block_plant(plant: CoupledPlant, block: np.ndarray) -> CoupledPlant:
    """The plant restricted to the joints of ``block``."""
    cut = np.ix_(np.arange(plant.mass.shape[0]), block, block)
    damping = plant.damping[np.ix_(block, block)]
    return CoupledPlant(
        plant.engine, plant.implicit_damping, plant.mass[cut], plant.gravity_stiffness[cut], damping
    )


def one_step_maps(plant: CoupledPlant, kp: np.ndarray, kd: np.ndarray, dt: float) -> np.ndarray:
    """The linearised one-step map of PD + physics, ``(samples, 2m, 2m)`` on ``(e, v)``.

    Args:
        plant: The engine's linearised dynamics.
        kp: P gains of the independent joints, shape ``(m,)`` (may be batched ``(..., m)``
            only through repeated calls).
        kd: D gains, likewise.
        dt: Physics step, seconds.
    """
    m = plant.mass.shape[-1]
    stiffness = np.diag(kp) + plant.gravity_stiffness
    damping = np.diag(kd) + plant.damping
    inertia = plant.mass + dt * plant.damping if plant.implicit_damping else plant.mass
    rhs = np.concatenate([stiffness, np.broadcast_to(damping, stiffness.shape)], axis=-1)
    solved = np.linalg.solve(inertia, rhs)
    wk, wb = solved[..., :m], solved[..., m:]
    eye = np.eye(m)
    velocity_k = -dt * wk
    velocity_v = eye - dt * wb
    top = np.concatenate([eye + dt * velocity_k, dt * velocity_v], axis=-1)
    bottom = np.concatenate([velocity_k, velocity_v], axis=-1)
    return np.concatenate([top, bottom], axis=-2)


def spectral_radius(maps: np.ndarray) -> np.ndarray:
    """Largest eigenvalue magnitude of each map, shape ``maps.shape[:-2]``."""
    return np.abs(np.linalg.eigvals(maps)).max(axis=-1)


def _radius(
    plants: list[CoupledPlant],
    kp: np.ndarray,
    kd: np.ndarray,
    dt: float,
    limit: float | None = None,
) -> float:
    """Largest spectral radius over ``plants``; stops early once one exceeds ``limit``."""
    worst = 0.0
    for plant in plants:
        for block, part in _parts(plant):
            maps = one_step_maps(part, kp[block], kd[block], dt)
            worst = max(worst, float(spectral_radius(maps).max()))
            if limit is not None and worst > limit:
                return worst
    return worst


_PARTS: dict[int, tuple[CoupledPlant, list[tuple[np.ndarray, CoupledPlant]]]] = {}


def _parts(plant: CoupledPlant) -> list[tuple[np.ndarray, CoupledPlant]]:
    """The plant's uncoupled blocks (cached for the plant object while it lives)."""
    held = _PARTS.get(id(plant))
    if held is None or held[0] is not plant:
        blocks = _blocks(plant)
        parts = (
            [(blocks[0], plant)]
            if len(blocks) == 1
            else [(b, _block_plant(plant, b)) for b in blocks]
        )
        if len(_PARTS) > 64:
            _PARTS.clear()
        held = _PARTS[id(plant)] = (plant, parts)
    return held[1]


def _passes(plants: list[CoupledPlant], kp: np.ndarray, kd: np.ndarray, dt: float) -> bool:
    """True when the loop is stable with both gains multiplied by :data:`GAIN_MARGIN`."""
    limit = 1.0 + _RADIUS_TOLERANCE
    return _radius(plants, GAIN_MARGIN * kp, GAIN_MARGIN * kd, dt, limit) <= limit


def _largest_scale(passes: object, steps: int = 10) -> float:
    """Largest ``s`` in [0, 1] with ``passes(s)`` (bisection; ``passes`` monotone)."""
    if passes(1.0):  # type: ignore[operator]
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if passes(mid):  # type: ignore[operator]
            lo = mid
        else:
            hi = mid
    return lo


def design_gains(
    description: RobotDescription,
    dt: float = REFERENCE_DT,
    plants: list[CoupledPlant] | None = None,
) -> GainDesign:
    """Default gains that keep the coupled discrete loop stable (see the module docstring).

    Args:
        description: The robot; gains it gives (``gains.kp``/``kd`` not NaN) are kept.
        dt: Physics step the loop is checked at, seconds.
        plants: Precomputed :func:`coupled_plants` (default: computed here).

    Returns:
        The gains (dependent joints get per-joint values; they are never driven) and the
        check's figures.
    """
    plants = coupled_plants(description) if plants is None else plants
    independent, _ = independent_joints(description)
    given_kp = np.array([a.gains.kp if a.gains else np.nan for a in description.joints])
    given_kd = np.array([a.gains.kd if a.gains else np.nan for a in description.joints])
    derived = np.isnan(given_kp) | np.isnan(given_kd)

    def gains(
        inertia_independent: np.ndarray, omega_independent: np.ndarray | float, zeta: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        inertia = np.ones(description.dof)  # dependent joints are never driven
        inertia[independent] = inertia_independent
        omega = np.full(description.dof, DEFAULT_BANDWIDTH)
        omega[independent] = omega_independent
        kp = inertia * omega**2
        kd = np.maximum(0.0, 2.0 * zeta * inertia * omega - description.damping)
        # a gain the file gives is kept; the other is derived for critical damping at it
        kp_given, kd_given = critical_gains(inertia, description.damping, given_kp, given_kd)
        kp = np.where(np.isnan(given_kp), np.where(np.isnan(given_kd), kp, kp_given), given_kp)
        kd = np.where(np.isnan(given_kd), np.where(np.isnan(given_kp), kd, kd_given), given_kd)
        return kp, kd

    def figures(kp: np.ndarray, kd: np.ndarray, s: float) -> GainDesign:
        kp_i, kd_i = kp[independent], kd[independent]
        return GainDesign(
            kp,
            kd,
            s,
            _radius(plants, kp_i, kd_i, dt),
            _radius(plants, GAIN_MARGIN * kp_i, GAIN_MARGIN * kd_i, dt),
            dt,
        )

    # The per-joint design: each joint's diagonal at home (what a joint alone would feel).
    rigid_home = next(p for p in plants if p.engine == "mujoco").mass[0]
    diagonal = np.diagonal(rigid_home)
    kp, kd = gains(diagonal, DEFAULT_BANDWIDTH)
    if not derived[independent].any() or _passes(plants, kp[independent], kd[independent], dt):
        return figures(kp, kd, 1.0)
    # Coupled sizing. ``free``: the inertia a joint feels with the others free (smallest over
    # the samples and engines). Candidates: sized by the diagonal with each joint's bandwidth
    # capped so that its damping number on the free inertia, 2·ζ·I·ω·dt / free, stays below
    # a target; or sized by the free inertia. Each at the largest uniform bandwidth factor
    # that passes; kept: the one whose slowest mode decays fastest (smallest spectral radius
    # at nominal gains over the samples and engines).
    free = np.min(
        [1.0 / np.diagonal(np.linalg.inv(p.mass), axis1=-2, axis2=-1).max(axis=0) for p in plants],
        axis=0,
    )
    candidates: list[tuple[np.ndarray, np.ndarray | float, float]] = []
    for zeta in DAMPING_RATIOS:
        candidates.append((free, DEFAULT_BANDWIDTH, zeta))
        for target in DAMPING_TARGETS:
            capped = np.minimum(DEFAULT_BANDWIDTH, target * free / (2 * zeta * diagonal * dt))
            candidates.append((diagonal, capped, zeta))
    best: tuple[float, np.ndarray, np.ndarray, float] | None = None
    for inertia, omega, zeta in candidates:

        def passes(
            s: float, inertia: np.ndarray = inertia, omega: object = omega, zeta: float = zeta
        ) -> bool:
            kp_s, kd_s = gains(inertia, omega * s, zeta)  # type: ignore[operator]
            return _passes(plants, kp_s[independent], kd_s[independent], dt)

        s = _largest_scale(passes)
        kp_s, kd_s = gains(inertia, omega * s, zeta)  # type: ignore[operator]
        radius = _radius(plants, kp_s[independent], kd_s[independent], dt)
        if best is None or radius < best[0]:
            best = (radius, kp_s, kd_s, s)
    assert best is not None
    return figures(best[1], best[2], best[3])
