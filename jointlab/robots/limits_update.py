"""Intrinsic ``JointLimitsUpdate`` applied to a description (``with_limits(description, ...)``).

The seed's rules, made exact:

* a field that is absent (``None``) **or empty** makes no update;
* a given field replaces the limit and has exactly one value per joint (``dof``);
* every value lies **within the robot's limits** it updates: ``min_position`` >= ``min``,
  ``max_position`` <= ``max``, each ``max_*`` <= the system limit (> 0). An update narrows,
  it never widens;
* what must stay inside the limits is narrowed with them, not refused: each configured speed
  (Player REQ SPEED) to at most the new ``max_velocity``, and the soft limits to the new
  range and maxima. ``home`` and ``centre`` are configurations, not limits: a range that
  leaves one of them out is refused, naming it.

The result is re-validated as a robot file would be.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import numpy as np

from jointlab.errors import DescriptionError
from jointlab.robots.description import JointLimitsUpdate, RobotDescription, SoftLimits
from jointlab.robots.serialize import description_to_dict

__all__ = ["apply_limits_update"]

#: JointLimitsUpdate field -> the ``limits`` entry it replaces.
_MAXIMA = {
    "max_velocity": "velocity",
    "max_acceleration": "acceleration",
    "max_jerk": "jerk",
    "max_effort": "effort",
}


def _given(description: RobotDescription, update: JointLimitsUpdate) -> dict[str, np.ndarray]:
    """The non-empty fields as ``(dof,)`` arrays, checked against the current limits."""
    current = {
        "min_position": description.lower,
        "max_position": description.upper,
        "max_velocity": description.velocity_limit,
        "max_acceleration": description.acceleration_limit,
        "max_jerk": description.jerk_limit,
        "max_effort": description.effort_limit,
    }
    values: dict[str, np.ndarray] = {}
    for f in fields(JointLimitsUpdate):
        given = getattr(update, f.name)
        if given is None:
            continue
        try:
            array = np.asarray(given, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise DescriptionError(
                f"JointLimitsUpdate.{f.name} must be numbers, got {given!r}"
            ) from exc
        if array.shape[0] == 0:
            continue  # empty: no update (Intrinsic)
        if array.shape[0] != description.dof:
            raise DescriptionError(
                f"JointLimitsUpdate.{f.name} has {array.shape[0]} values, expected "
                f"{description.dof} (one per joint of robot {description.name!r})"
            )
        limit = current[f.name]
        if f.name == "min_position":
            outside = ~(array >= limit)
            bound = "at least its min"
        else:
            outside = ~(array <= limit) | (~(array > 0) if f.name in _MAXIMA else False)
            bound = "at most its max" if f.name == "max_position" else "in (0, its limit]"
        if outside.any():
            j = int(np.flatnonzero(outside)[0])
            raise DescriptionError(
                f"JointLimitsUpdate.{f.name}[{j}] = {float(array[j])!r} for joint "
                f"{description.joint_names[j]!r} must be {bound} {float(limit[j])!r}: an "
                "update lies within the robot's limits"
            )
        values[f.name] = array
    return values


def _soft(soft: SoftLimits, lower: float, upper: float, maxima: dict[str, float]) -> SoftLimits:
    """Soft limits narrowed into the new range and maxima (``None`` stays ``None``)."""
    changes: dict[str, Any] = {}
    if soft.min is not None:
        changes["min"] = min(max(soft.min, lower), upper)
    if soft.max is not None:
        changes["max"] = min(max(soft.max, lower), upper)
    for key, value in maxima.items():
        if getattr(soft, key) is not None:
            changes[key] = min(getattr(soft, key), value)
    return replace(soft, **changes)


def apply_limits_update(
    description: RobotDescription, update: JointLimitsUpdate
) -> RobotDescription:
    """Return ``description`` with ``update`` applied (see the module docstring).

    Raises:
        DescriptionError: a field has the wrong number of values, a value lies outside the
            robot's limits, or the result is not a valid robot (e.g. ``home`` left outside).
    """
    values = _given(description, update)
    if not values:
        return description
    joint_index = {name: i for i, name in enumerate(description.joint_names)}
    specs = []
    for spec in description.actuators:
        i = joint_index.get(spec.name)
        if i is None:
            specs.append(spec)
            continue
        maxima = {_MAXIMA[k]: float(v[i]) for k, v in values.items() if k in _MAXIMA}
        lower = float(values["min_position"][i]) if "min_position" in values else spec.min
        upper = float(values["max_position"][i]) if "max_position" in values else spec.max
        limits = replace(spec.limits, **maxima)
        specs.append(
            replace(
                spec,
                min=lower,
                max=upper,
                limits=limits,
                config_speed=min(spec.config_speed, limits.velocity),
                soft_limits=_soft(spec.soft_limits, lower, upper, maxima),
            )
        )
    from jointlab.robots.schema import description_from_dict

    result = replace(description, actuators=tuple(specs))
    # Re-parse the whole file form so every rule (centre, home, soft limits, config_speed)
    # is checked against the new limits, not only the structural ones.
    try:
        return description_from_dict(description_to_dict(result), source=description.source)
    except DescriptionError as exc:
        raise DescriptionError(f"with_limits: {exc}") from exc


def with_limits(
    description: RobotDescription, update: JointLimitsUpdate | None = None, **fields_: Any
) -> RobotDescription:
    """A copy of ``description`` with some limits replaced (Intrinsic ``JointLimitsUpdate``).

    Pass a :class:`~jointlab.robots.description.JointLimitsUpdate` or its fields as keywords
    (``with_limits(description, max_velocity=[...])``). A field that is absent or empty
    changes nothing; a given field has exactly ``dof`` values, each inside the robot's
    current limits. Soft limits and configured speeds are narrowed to fit; see
    :func:`apply_limits_update`.
    """
    if update is None:
        try:
            update = JointLimitsUpdate(**fields_)
        except TypeError as exc:
            names = [f.name for f in fields(JointLimitsUpdate)]
            raise DescriptionError(
                f"with_limits: unknown field ({exc}); expected one of {names}"
            ) from exc
    elif fields_:
        raise DescriptionError("with_limits: pass a JointLimitsUpdate or keywords, not both")
    return apply_limits_update(description, update)
