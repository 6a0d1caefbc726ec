"""Robot-file schema: dict -> validated :class:`RobotDescription`, and back.

Every problem raises :class:`DescriptionError` naming the file, the actuator and the field,
and stating what is allowed. Unknown keys are errors, never silently ignored.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

import numpy as np

from jointlab.errors import DescriptionError, quote
from jointlab.robots.bus import parse_bus, parse_transmission
from jointlab.robots.defaults import (
    DEFAULT_DENSITY,
    DEFAULT_RADIUS,
    capsule_inertial,
    default_armature,
)
from jointlab.robots.description import (
    BASE,
    ActuatorSpec,
    Base,
    Coupling,
    Dynamics,
    Gains,
    JointType,
    Limits,
    LinkInertial,
    Motor,
    MotorModel,
    RobotDescription,
    SoftLimits,
)
from jointlab.robots.plausible import MAX_LINKS, RANGES, name_problem

TOP_KEYS = {"name", "base", "actuators", "bus"}
BASE_KEYS = {"position", "orientation", "fixed", "mass", "radius", "friction"}
JOINT_KEYS = {
    "name",
    "type",
    "axis",
    "length",
    "orientation",
    "min",
    "centre",
    "max",
    "home",
    "config_speed",
    "has_brakes",
    "parent",
    "limits",
    "soft_limits",
    "dynamics",
    "link",
    "motor",
    "gains",
    "coupling",
    "transmission",
}
FIXED_KEYS = {"name", "type", "length", "orientation", "parent", "link"}
LIMIT_KEYS = {"velocity", "acceleration", "jerk", "effort"}
SOFT_KEYS = LIMIT_KEYS | {"min", "max"}
DYNAMICS_KEYS = {"static_friction", "damping", "armature"}
LINK_KEYS = {
    "mass",
    "radius",
    "center_of_gravity",
    "inertia",
    "density",
    "friction",
    "torsional_friction",
}
MOTOR_KEYS = {f.name for f in fields(Motor)}
GAIN_KEYS = {"kp", "kd"}
COUPLING_KEYS = {"alpha_self", "alpha_leading"}


class _Where:
    """Formats error locations: ``file: actuator 'x': field 'y'``."""

    def __init__(self, source: str | None) -> None:
        self.source = quote(source, 200)[1:-1] if source else "<robot dict>"

    def error(
        self, message: str, actuator: str | None = None, field: str | None = None
    ) -> DescriptionError:
        parts = [self.source]
        if actuator is not None:
            parts.append(f"actuator {actuator!r}")
        if field is not None:
            parts.append(f"field {field!r}")
        return DescriptionError(": ".join(parts) + ": " + message)


def _check_keys(
    where: _Where, raw: Mapping[str, Any], allowed: set[str], actuator: str | None, prefix: str
) -> None:
    if not isinstance(raw, Mapping):
        raise where.error(f"must be a mapping, got {type(raw).__name__}", actuator, prefix or None)
    unknown = sorted((key for key in raw if key not in allowed), key=str)
    if unknown:
        key = quote(unknown[0], 60) if not isinstance(unknown[0], str) else unknown[0][:60]
        name = f"{prefix}.{key}" if prefix else key
        hint = difflib.get_close_matches(str(key), sorted(allowed), n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        raise where.error(
            f"unknown key {quote(unknown[0], 60)}{suggestion}; allowed keys: {sorted(allowed)}",
            actuator,
            name,
        )


def _range_key(field: str) -> str:
    """The :data:`RANGES` key of a field path: ``axis[1]`` -> ``axis``."""
    key = field.split("[", 1)[0]
    return "coupling.alpha_leading" if key.startswith("coupling.alpha_leading.") else key


def _number(
    where: _Where, value: Any, actuator: str | None, field: str, ranged: bool = True
) -> float:
    """A finite float within the field's plausible range (unless ``ranged`` is False)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        kind = type(value).__name__
        raise where.error(f"must be a number, got {kind} {quote(value)}", actuator, field)
    try:
        result = float(value)
    except OverflowError:
        result = math.inf
    if not math.isfinite(result):
        raise where.error(f"must be a finite number, got {quote(value, 60)}", actuator, field)
    bounds = RANGES.get(_range_key(field)) if ranged else None
    problem = None if bounds is None else bounds.problem(result)
    if problem:
        raise where.error(problem, actuator, field)
    return result


def _positive(
    where: _Where, value: Any, actuator: str | None, field: str, strict: bool = True
) -> float:
    result = _number(where, value, actuator, field)
    if (strict and result <= 0) or (not strict and result < 0):
        bound = "> 0" if strict else ">= 0"
        raise where.error(f"= {result} must be {bound}", actuator, field)
    return result


def _vector3(
    where: _Where, value: Any, actuator: str | None, field: str
) -> tuple[float, float, float]:
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != 3:
        raise where.error(f"must be a list of 3 numbers, got {quote(value)}", actuator, field)
    x, y, z = (_number(where, v, actuator, f"{field}[{i}]") for i, v in enumerate(value))
    return (x, y, z)


def _bool(where: _Where, value: Any, actuator: str | None, field: str) -> bool:
    if not isinstance(value, bool):
        raise where.error(f"must be true or false, got {quote(value)}", actuator, field)
    return value


def _parse_link(
    where: _Where, raw: Any, name: str, length: float, orientation: tuple[float, float, float]
) -> LinkInertial:
    raw = {} if raw is None else raw
    _check_keys(where, raw, LINK_KEYS, name, "link")
    radius = _positive(where, raw.get("radius", DEFAULT_RADIUS), name, "link.radius")
    density = _positive(where, raw.get("density", DEFAULT_DENSITY), name, "link.density")
    mass = None
    if "mass" in raw:
        mass = _positive(where, raw["mass"], name, "link.mass")
    derived_mass, derived_cog, derived_inertia = capsule_inertial(
        length, orientation, radius, density, mass
    )
    if mass is None and not RANGES["link.mass"].contains(derived_mass):
        raise where.error(
            f"gives a link of {derived_mass:.3g} kg (a capsule of radius {radius:g} m and length "
            f"{length:g} m), outside the plausible link mass {RANGES['link.mass']}",
            name,
            "link.density",
        )
    cog = (
        _vector3(where, raw["center_of_gravity"], name, "link.center_of_gravity")
        if "center_of_gravity" in raw
        else derived_cog
    )
    if "inertia" in raw:
        value = raw["inertia"]
        try:
            inertia = np.array(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise where.error(
                f"must be a 3x3 list of numbers, got {quote(value)}", name, "link.inertia"
            ) from None
        if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
            raise where.error(
                f"must be a finite 3x3 matrix, got shape {inertia.shape}", name, "link.inertia"
            )
        if not np.allclose(inertia, inertia.T, rtol=1e-9, atol=1e-12):
            raise where.error(
                "must be symmetric (inertia[i][j] == inertia[j][i])", name, "link.inertia"
            )
        eigen = np.linalg.eigvalsh(inertia)
        if eigen.min() <= 0:
            raise where.error(
                f"must be positive-definite; its smallest eigenvalue is {eigen.min():.3g}",
                name,
                "link.inertia",
            )
        if not RANGES["link.inertia"].contains(float(eigen[-1])):
            raise where.error(
                f"principal moment {eigen[-1]:.3g} lies outside the plausible range "
                f"{RANGES['link.inertia']}",
                name,
                "link.inertia",
            )
        if eigen[0] + eigen[1] < eigen[2] * (1.0 - 1e-9):
            raise where.error(
                f"principal moments {eigen.round(6).tolist()} violate the triangle inequality "
                "(I1 + I2 >= I3) that every rigid body satisfies",
                name,
                "link.inertia",
            )
    else:
        inertia = derived_inertia
    matrix = tuple(tuple(float(v) for v in row) for row in inertia)
    friction = _positive(where, raw.get("friction", 1.0), name, "link.friction")
    torsional = _positive(
        where, raw.get("torsional_friction", 0.0), name, "link.torsional_friction", strict=False
    )
    return LinkInertial(
        mass=float(derived_mass),
        radius=radius,
        center_of_gravity=cog,
        inertia=matrix,
        friction=friction,
        torsional_friction=torsional,
    )  # type: ignore[arg-type]


def _parse_optional_numbers(
    where: _Where, raw: Any, allowed: set[str], name: str, prefix: str
) -> dict[str, float]:
    raw = {} if raw is None else raw
    _check_keys(where, raw, allowed, name, prefix)
    return {k: _number(where, v, name, f"{prefix}.{k}") for k, v in raw.items()}


def _parse_joint(
    where: _Where, raw: Mapping[str, Any], name: str, jtype: JointType, parent: str
) -> ActuatorSpec:
    _check_keys(where, raw, JOINT_KEYS, name, "")
    linear = jtype is JointType.LINEAR
    axis = _vector3(where, raw.get("axis", (0.0, 0.0, 1.0)), name, "axis")
    norm = math.sqrt(sum(a * a for a in axis))
    if norm < 1e-12:
        raise where.error(f"must be a non-zero vector, got {list(axis)}", name, "axis")
    if abs(norm - 1.0) > 1e-12:  # re-dividing a unit axis would change its last bits
        axis = (axis[0] / norm, axis[1] / norm, axis[2] / norm)
    length = _positive(where, raw.get("length", 0.0), name, "length", strict=False)
    orientation = _vector3(where, raw.get("orientation", (0.0, 0.0, 0.0)), name, "orientation")
    for key in ("min", "max"):
        if key not in raw:
            raise where.error(f"is required for {jtype.value} actuators", name, key)
    lo = _number(where, raw["min"], name, "min")
    hi = _number(where, raw["max"], name, "max")
    if lo > hi:
        raise where.error(f"= {lo} must be <= max = {hi}", name, "min")
    centre = _number(where, raw.get("centre", (lo + hi) / 2.0), name, "centre")
    if not lo <= centre <= hi:
        raise where.error(f"= {centre} must lie in [min, max] = [{lo}, {hi}]", name, "centre")
    home = _number(where, raw.get("home", centre), name, "home")
    if not lo <= home <= hi:
        raise where.error(f"= {home} must lie in [min, max] = [{lo}, {hi}]", name, "home")

    limit_values = _parse_optional_numbers(where, raw.get("limits"), LIMIT_KEYS, name, "limits")
    defaults = (
        Limits(velocity=1.0, acceleration=5.0, jerk=50.0, effort=100.0) if linear else Limits()
    )
    for key, value in limit_values.items():
        if value <= 0:
            raise where.error(f"= {value} must be > 0", name, f"limits.{key}")
    limits = Limits(
        **{**{f.name: getattr(defaults, f.name) for f in fields(Limits)}, **limit_values}
    )

    soft_values = _parse_optional_numbers(
        where, raw.get("soft_limits"), SOFT_KEYS, name, "soft_limits"
    )
    for key in LIMIT_KEYS & set(soft_values):
        system = getattr(limits, key)
        if not 0 < soft_values[key] <= system:
            raise where.error(
                f"= {soft_values[key]} must lie in (0, {system}] (the system limit limits.{key})",
                name,
                f"soft_limits.{key}",
            )
    soft_lo = soft_values.get("min", lo)
    soft_hi = soft_values.get("max", hi)
    if not lo <= soft_lo <= hi:
        raise where.error(
            f"= {soft_lo} must lie in [min, max] = [{lo}, {hi}]", name, "soft_limits.min"
        )
    if not lo <= soft_hi <= hi:
        raise where.error(
            f"= {soft_hi} must lie in [min, max] = [{lo}, {hi}]", name, "soft_limits.max"
        )
    if soft_lo > soft_hi:
        raise where.error(
            f"= {soft_lo} must be <= soft_limits.max = {soft_hi}", name, "soft_limits.min"
        )
    soft = SoftLimits(**soft_values)

    dyn = _parse_optional_numbers(where, raw.get("dynamics"), DYNAMICS_KEYS, name, "dynamics")
    for key, value in dyn.items():
        if value < 0:
            raise where.error(f"= {value} must be >= 0", name, f"dynamics.{key}")

    config_speed = _positive(where, raw.get("config_speed", limits.velocity), name, "config_speed")
    if config_speed > limits.velocity:
        raise where.error(
            f"= {config_speed} must be <= limits.velocity = {limits.velocity}", name, "config_speed"
        )
    has_brakes = _bool(where, raw.get("has_brakes", False), name, "has_brakes")
    motor = _parse_motor(where, raw.get("motor"), name, limits.effort)
    if "armature" not in dyn:
        dyn["armature"] = (
            default_armature(limits.effort, linear)
            if motor.rotor_inertia is None
            else motor.rotor_inertia * motor.gear_ratio**2
        )
    dynamics = Dynamics(**dyn)
    gains = _parse_gains(where, raw.get("gains"), name)
    coupling = _parse_coupling(where, raw.get("coupling"), name)
    transmission = (
        None
        if raw.get("transmission") is None
        else parse_transmission(where, raw["transmission"], name)
    )
    return ActuatorSpec(
        name=name,
        type=jtype,
        axis=axis,
        length=length,
        orientation=orientation,
        min=lo,
        centre=centre,
        max=hi,
        home=home,
        config_speed=config_speed,
        has_brakes=has_brakes,
        parent=parent,
        limits=limits,
        soft_limits=soft,
        dynamics=dynamics,
        link=_parse_link(where, raw.get("link"), name, length, orientation),
        motor=motor,
        gains=gains,
        coupling=coupling,
        transmission=transmission,
    )


def _parse_motor(where: _Where, raw: Any, name: str, effort: float) -> Motor:
    raw = {} if raw is None else raw
    _check_keys(where, raw, MOTOR_KEYS, name, "motor")
    model_name = raw.get("model", "ideal")
    try:
        model = MotorModel(model_name)
    except ValueError as exc:
        raise where.error(
            f"unknown model {quote(model_name)}; expected one of {[m.value for m in MotorModel]}",
            name,
            "motor.model",
        ) from exc
    kt = _positive(where, raw.get("torque_constant", 0.1), name, "motor.torque_constant")
    ratio = _positive(where, raw.get("gear_ratio", 1.0), name, "motor.gear_ratio")
    max_current = (
        _positive(where, raw["max_current"], name, "motor.max_current")
        if "max_current" in raw
        else effort / (kt * ratio)
    )
    stall = raw.get("stall_torque")
    no_load = raw.get("no_load_speed")
    stall = None if stall is None else _positive(where, stall, name, "motor.stall_torque")
    no_load = None if no_load is None else _positive(where, no_load, name, "motor.no_load_speed")
    rotor = raw.get("rotor_inertia")
    rotor = (
        None
        if rotor is None
        else _positive(where, rotor, name, "motor.rotor_inertia", strict=False)
    )
    delay = raw.get("delay", 0)
    bounds = RANGES["motor.delay"]
    if isinstance(delay, bool) or not isinstance(delay, int) or not bounds.contains(delay):
        raise where.error(
            f"must be a whole number of physics steps >= 0 and <= {bounds.high:g}, got "
            f"{quote(delay, 60)}",
            name,
            "motor.delay",
        )
    return Motor(
        model=model,
        torque_constant=kt,
        gear_ratio=ratio,
        max_current=max_current,
        stall_torque=stall,
        no_load_speed=no_load,
        delay=delay,
        rotor_inertia=rotor,
    )


def _parse_gains(where: _Where, raw: Any, name: str) -> Gains:
    """The file's gains; NaN marks one to derive (see :func:`_derive_gains`)."""
    raw = {} if raw is None else raw
    _check_keys(where, raw, GAIN_KEYS, name, "gains")
    kp = _positive(where, raw["kp"], name, "gains.kp", strict=False) if "kp" in raw else math.nan
    kd = _positive(where, raw["kd"], name, "gains.kd", strict=False) if "kd" in raw else math.nan
    return Gains(kp=kp, kd=kd)


def _derive_gains(description: RobotDescription) -> RobotDescription:
    """Fill gains the file left out from the joints' inertia (:mod:`jointlab.robots.gains`)."""
    missing = [
        a.gains is not None and (math.isnan(a.gains.kp) or math.isnan(a.gains.kd))
        for a in description.joints
    ]
    if not any(missing):
        return description
    import warnings

    from jointlab.robots.gain_design import coupled_plants, design_gains
    from jointlab.robots.gain_hold import hold_problems
    from jointlab.robots.gains import UnstableGainsWarning

    plants = coupled_plants(description)
    design = design_gains(description, plants=plants)
    kp, kd = design.kp, design.kd
    index = {name: i for i, name in enumerate(description.joint_names)}
    specs = tuple(
        replace(spec, gains=Gains(kp=float(kp[index[spec.name]]), kd=float(kd[index[spec.name]])))
        if spec.name in index
        else spec
        for spec in description.actuators
    )
    filled = replace(description, actuators=specs)
    problems = hold_problems(filled, np.array(missing), plants)
    if problems:  # never a silent chatter or sag: `jointlab describe --check` refuses it
        warnings.warn("; ".join(p.message for p in problems), UnstableGainsWarning, stacklevel=2)
    return filled


def _parse_coupling(where: _Where, raw: Any, name: str) -> Coupling | None:
    if raw is None:
        return None
    _check_keys(where, raw, COUPLING_KEYS, name, "coupling")
    alpha_self = _number(where, raw.get("alpha_self", 1.0), name, "coupling.alpha_self")
    leading = raw.get("alpha_leading", {})
    if not isinstance(leading, Mapping) or not leading:
        raise where.error(
            "must map at least one leading actuator name to its alpha",
            name,
            "coupling.alpha_leading",
        )
    pairs = tuple(
        (str(k), _number(where, v, name, f"coupling.alpha_leading.{quote(k, 60)[1:-1]}"))
        for k, v in leading.items()
    )
    return Coupling(alpha_self=alpha_self, alpha_leading=pairs)


def _parse_fixed(where: _Where, raw: Mapping[str, Any], name: str, parent: str) -> ActuatorSpec:
    _check_keys(where, raw, FIXED_KEYS, name, "")
    length = _positive(where, raw.get("length", 0.0), name, "length", strict=False)
    orientation = _vector3(where, raw.get("orientation", (0.0, 0.0, 0.0)), name, "orientation")
    link = _parse_link(where, raw.get("link"), name, length, orientation)
    return ActuatorSpec(
        name=name,
        type=JointType.FIXED,
        length=length,
        orientation=orientation,
        parent=parent,
        link=link,
        gains=None,
    )


def description_from_dict(data: Mapping[str, Any], source: str | None = None) -> RobotDescription:
    """Build a validated :class:`RobotDescription` from a robot-file mapping."""
    where = _Where(source)
    if not isinstance(data, Mapping):
        raise where.error(f"a robot file must be a mapping at top level, got {type(data).__name__}")
    _check_keys(where, data, TOP_KEYS, None, "")
    if "name" not in data:
        raise where.error("is required", None, "name")
    problem = name_problem(data["name"])
    if problem:
        raise where.error(f"{quote(data['name'], 60)} {problem}", None, "name")
    base_raw = data.get("base", {}) or {}
    _check_keys(where, base_raw, BASE_KEYS, None, "base")
    base = Base(
        position=_vector3(where, base_raw.get("position", (0.0, 0.0, 0.0)), None, "base.position"),
        orientation=_vector3(
            where, base_raw.get("orientation", (0.0, 0.0, 0.0)), None, "base.orientation"
        ),
        fixed=_bool(where, base_raw.get("fixed", True), None, "base.fixed"),
        mass=_positive(where, base_raw.get("mass", 1.0), None, "base.mass"),
        radius=_positive(where, base_raw.get("radius", 0.05), None, "base.radius"),
        friction=_positive(where, base_raw.get("friction", 1.0), None, "base.friction"),
    )
    raw_actuators = data.get("actuators")
    if not isinstance(raw_actuators, list) or not raw_actuators:
        raise where.error("must be a non-empty list of actuators", None, "actuators")
    if len(raw_actuators) >= MAX_LINKS:
        raise where.error(
            f"has {len(raw_actuators)} entries, at most {MAX_LINKS - 1} (one link each and one "
            "tool frame per chain end)",
            None,
            "actuators",
        )
    specs: list[ActuatorSpec] = []
    previous = BASE
    seen: set[str] = set()
    for index, raw in enumerate(raw_actuators):
        if not isinstance(raw, Mapping):
            raise where.error(
                f"entry {index} must be a mapping, got {type(raw).__name__}", None, "actuators"
            )
        name = raw.get("name")
        problem = name_problem(name)
        if problem:
            raise where.error(f"entry {index}: name {quote(name, 60)} {problem}", None, "actuators")
        if name in seen or name == BASE:
            raise where.error("duplicate or reserved actuator name", name, "name")
        seen.add(name)
        type_name = raw.get("type")
        try:
            jtype = JointType(type_name)
        except ValueError as exc:
            raise where.error(
                f"unknown type {quote(type_name)}; expected one of {[t.value for t in JointType]}",
                name,
                "type",
            ) from exc
        parent = raw.get("parent", previous)
        if not isinstance(parent, str):
            raise where.error(
                f"must be an actuator name or 'base', got {quote(parent)}", name, "parent"
            )
        spec = (
            _parse_fixed(where, raw, name, parent)
            if jtype is JointType.FIXED
            else _parse_joint(where, raw, name, jtype, parent)
        )
        specs.append(spec)
        previous = name
    joint_names = tuple(s.name for s in specs if s.is_joint)
    bus = None if data.get("bus") is None else parse_bus(where, data["bus"], joint_names)
    description = RobotDescription(
        name=data["name"], base=base, actuators=tuple(specs), source=source, bus=bus
    )
    validate_description(description, where)
    return _derive_gains(description)


def validate_description(description: RobotDescription, where: _Where | None = None) -> None:
    """Check the structure of a description: parents, cycles, couplings, ranges."""
    where = where or _Where(description.source)
    problem = name_problem(description.name)
    if problem:
        raise where.error(f"{quote(description.name, 60)} {problem}", None, "name")
    ends = sum(not children for children in description.children.values())
    if len(description.actuators) + ends > MAX_LINKS:
        raise where.error(
            f"{len(description.actuators)} elements and {ends} chain ends make "
            f"{len(description.actuators) + ends} links, at most {MAX_LINKS} (one per element "
            "and one tool frame per chain end)",
            None,
            "actuators",
        )
    for spec in description.actuators:
        problem = name_problem(spec.name)
        if problem:
            raise where.error(f"name {quote(spec.name, 60)} {problem}", None, "actuators")
    names = {a.name: a for a in description.actuators}
    for spec in description.actuators:
        if spec.parent != BASE and spec.parent not in names:
            raise where.error(
                f"unknown parent {quote(spec.parent)}; expected 'base' or one of "
                f"{quote(sorted(names), 300)}",
                spec.name,
                "parent",
            )
    for spec in description.actuators:
        visited = {spec.name}
        node = spec.parent
        while node != BASE:
            if node in visited:
                raise where.error(
                    f"parent chain forms a cycle through {node!r}", spec.name, "parent"
                )
            visited.add(node)
            node = names[node].parent
    for spec in description.actuators:
        if spec.is_joint:
            if not spec.min <= spec.max:
                raise where.error(f"= {spec.min} must be <= max = {spec.max}", spec.name, "min")
            if not spec.min <= spec.home <= spec.max:
                raise where.error(
                    f"= {spec.home} must lie in [min, max] = [{spec.min}, {spec.max}]",
                    spec.name,
                    "home",
                )
            for key in LIMIT_KEYS:
                if getattr(spec.limits, key) <= 0:
                    raise where.error(
                        f"= {getattr(spec.limits, key)} must be > 0", spec.name, f"limits.{key}"
                    )
        if spec.coupling is None:
            continue
        for lead, _alpha in spec.coupling.alpha_leading:
            field = f"coupling.alpha_leading.{lead}"
            if lead not in names or not names[lead].is_joint:
                raise where.error(
                    f"leading actuator {quote(lead)} is not a joint of this robot", spec.name, field
                )
            if lead == spec.name:
                raise where.error("a joint cannot lead itself", spec.name, field)
            if names[lead].coupling is not None:
                raise where.error(
                    f"leading actuator {quote(lead)} is itself dependent; "
                    "only independent joints may lead",
                    spec.name,
                    field,
                )
