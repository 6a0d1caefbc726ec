"""Hypothesis strategies for valid robot-file dicts (the YAML schema of docs/robot-files.md).

``robot_dicts()`` draws serial chains and trees of rotary, linear and fixed elements, with
explicit ``parent:`` references, optional limits, soft limits, dynamics, links (derived or
explicit inertia), motors, gains and couplings. Every dict it draws is valid: building it with
``description_from_dict`` must succeed.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

#: Moderate, finite floats: no subnormals, so every value survives text round trips exactly.
_ANGLE = st.floats(-math.pi, math.pi, allow_nan=False, allow_subnormal=False)
_COORD = st.floats(-1.0, 1.0, allow_nan=False, allow_subnormal=False)
_LENGTH = st.one_of(st.just(0.0), st.floats(1e-3, 0.5, allow_subnormal=False))
_POSITIVE = st.floats(0.01, 100.0, allow_subnormal=False)
_FRACTION = st.floats(0.0, 1.0, allow_subnormal=False)


def _vector3(element: st.SearchStrategy[float]) -> st.SearchStrategy[list[float]]:
    return st.lists(element, min_size=3, max_size=3)


@st.composite
def axes(draw: st.DrawFn) -> list[float]:
    """A non-zero axis: a unit basis vector, its negative, or a random direction."""
    if draw(st.booleans()):
        index = draw(st.integers(0, 2))
        sign = draw(st.sampled_from([1.0, -1.0]))
        return [sign if i == index else 0.0 for i in range(3)]
    vector = draw(_vector3(_COORD).filter(lambda v: math.sqrt(sum(x * x for x in v)) > 0.1))
    return vector


@st.composite
def _range(draw: st.DrawFn, linear: bool) -> dict[str, float]:
    """``min <= centre <= max`` and ``home`` in range (radians or metres)."""
    span = 1.0 if linear else math.pi
    lo = draw(st.floats(-span, 0.0, allow_subnormal=False))
    hi = draw(st.floats(0.0, span, allow_subnormal=False))
    values: dict[str, float] = {"min": lo, "max": hi}
    for key in ("centre", "home"):
        if draw(st.booleans()):
            value = lo + draw(_FRACTION) * (hi - lo)
            values[key] = min(max(value, lo), hi)
    return values


@st.composite
def _limits_block(draw: st.DrawFn, values: dict[str, float], lo: float, hi: float) -> dict:
    """Optional ``soft_limits`` inside the system limits ``values`` and ``[lo, hi]``."""
    soft: dict[str, float] = {}
    for key, system in values.items():
        if draw(st.booleans()):
            soft[key] = system * draw(st.floats(0.1, 1.0))
    if draw(st.booleans()):
        a = lo + draw(_FRACTION) * (hi - lo)
        b = lo + draw(_FRACTION) * (hi - lo)
        soft["min"], soft["max"] = min(max(min(a, b), lo), hi), min(max(max(a, b), lo), hi)
    return soft


@st.composite
def _link(draw: st.DrawFn) -> dict[str, Any] | None:
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return None
    link: dict[str, Any] = {"radius": draw(st.floats(0.005, 0.1))}
    if choice >= 2:
        link["mass"] = draw(_POSITIVE)
    if choice == 3:
        # Principal moments of a real body: I1 + I2 >= I3 (from non-negative mass spreads).
        spread = draw(st.lists(st.floats(1e-4, 1.0), min_size=3, max_size=3))
        diagonal = [spread[1] + spread[2], spread[0] + spread[2], spread[0] + spread[1]]
        link["inertia"] = [[diagonal[i] if i == j else 0.0 for j in range(3)] for i in range(3)]
        link["center_of_gravity"] = draw(_vector3(st.floats(-0.1, 0.1, allow_subnormal=False)))
    return link


@st.composite
def _joint(draw: st.DrawFn, name: str, linear: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "type": "linear" if linear else "rotary"}
    entry["axis"] = draw(axes())
    entry["length"] = draw(_LENGTH)
    entry["orientation"] = draw(_vector3(_ANGLE))
    entry.update(draw(_range(linear)))
    limits: dict[str, float] = {}
    for key in ("velocity", "acceleration", "jerk", "effort"):
        if draw(st.booleans()):
            limits[key] = draw(_POSITIVE)
    if limits or draw(st.booleans()):
        entry["limits"] = limits
    velocity = limits.get("velocity", 1.0 if linear else 2.0)
    if draw(st.booleans()):
        entry["config_speed"] = velocity * draw(st.floats(0.05, 1.0))
    system = {
        "velocity": velocity,
        "acceleration": limits.get("acceleration", 5.0 if linear else 10.0),
        "jerk": limits.get("jerk", 50.0 if linear else 100.0),
        "effort": limits.get("effort", 100.0 if linear else 10.0),
    }
    soft = draw(_limits_block(system, entry["min"], entry["max"]))
    if soft:
        entry["soft_limits"] = soft
    entry["has_brakes"] = draw(st.booleans())
    if draw(st.booleans()):
        entry["dynamics"] = {
            "static_friction": draw(st.floats(0.0, 1.0)),
            "damping": draw(st.floats(0.0, 1.0)),
        }
    if draw(st.booleans()):
        entry["motor"] = {
            "model": draw(st.sampled_from(["ideal", "dc_motor"])),
            "torque_constant": draw(st.floats(0.01, 1.0)),
            "gear_ratio": draw(st.floats(1.0, 100.0)),
        }
    if draw(st.booleans()):
        entry["gains"] = {"kp": draw(st.floats(0.0, 1000.0)), "kd": draw(st.floats(0.0, 50.0))}
    link = draw(_link())
    if link is not None:
        entry["link"] = link
    return entry


@st.composite
def robot_dicts(
    draw: st.DrawFn,
    max_elements: int = 6,
    fixed: bool = True,
    couplings: bool = True,
) -> dict[str, Any]:
    """A valid robot-file dict: a serial chain or a tree of 1..``max_elements`` elements.

    Args:
        draw: Hypothesis draw function.
        max_elements: Upper bound on the number of elements.
        fixed: Whether fixed elements may appear.
        couplings: Whether joints may be coupled (to earlier independent joints).
    """
    count = draw(st.integers(1, max_elements))
    types = ["rotary", "linear", "fixed"] if fixed else ["rotary", "linear"]
    kinds = draw(st.lists(st.sampled_from(types), min_size=count, max_size=count))
    if all(kind == "fixed" for kind in kinds):
        kinds[0] = "rotary"  # at least one joint
    tree = draw(st.booleans())
    actuators: list[dict[str, Any]] = []
    independent: list[str] = []
    for index, kind in enumerate(kinds):
        name = f"j{index}_{kind}"
        if kind == "fixed":
            entry: dict[str, Any] = {"name": name, "type": "fixed"}
            entry["length"] = draw(_LENGTH)
            entry["orientation"] = draw(_vector3(_ANGLE))
            link = draw(_link())
            if link is not None:
                entry["link"] = link
        else:
            entry = draw(_joint(name, kind == "linear"))
        if index > 0 and tree:
            choice = draw(st.integers(-1, index - 1))
            entry["parent"] = "base" if choice < 0 else actuators[choice]["name"]
        elif index > 0 and draw(st.booleans()):
            entry["parent"] = actuators[index - 1]["name"]  # explicit, same as the default
        if kind != "fixed":
            if couplings and independent and draw(st.integers(0, 3)) == 0:
                leaders = draw(
                    st.lists(st.sampled_from(independent), min_size=1, max_size=2, unique=True)
                )
                entry["coupling"] = {
                    "alpha_self": draw(st.floats(-2.0, 2.0)),
                    "alpha_leading": {lead: draw(st.floats(-2.0, 2.0)) for lead in leaders},
                }
            else:
                independent.append(name)
        actuators.append(entry)
    base: dict[str, Any] = {}
    if draw(st.booleans()):
        base = {
            "position": draw(_vector3(_COORD)),
            "orientation": draw(_vector3(_ANGLE)),
            "fixed": draw(st.booleans()),
        }
    robot_name = draw(st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True))
    return {"name": robot_name, "base": base, "actuators": actuators}
