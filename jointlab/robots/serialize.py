"""RobotDescription -> robot-file mapping, with every field explicit (round-trips exactly)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from jointlab.robots.bus import bus_to_dict, transmission_to_dict
from jointlab.robots.description import Limits, Motor, RobotDescription, SoftLimits


def _clean(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_clean(v) for v in value]
    if isinstance(value, float) and value == 0.0:
        return 0.0
    return value


def description_to_dict(description: RobotDescription) -> dict[str, Any]:
    """Return a robot-file mapping with every field explicit (round-trips exactly)."""
    actuators: list[dict[str, Any]] = []
    for spec in description.actuators:
        entry: dict[str, Any] = {"name": spec.name, "type": spec.type.value, "parent": spec.parent}
        entry["length"] = spec.length
        entry["orientation"] = _clean(spec.orientation)
        if spec.is_joint:
            entry.update(
                axis=_clean(spec.axis),
                min=spec.min,
                centre=spec.centre,
                max=spec.max,
                home=spec.home,
                config_speed=spec.config_speed,
                has_brakes=spec.has_brakes,
                limits={f.name: getattr(spec.limits, f.name) for f in fields(Limits)},
            )
            soft = {f.name: getattr(spec.soft_limits, f.name) for f in fields(SoftLimits)}
            soft = {k: v for k, v in soft.items() if v is not None}
            if soft:
                entry["soft_limits"] = soft
            entry["dynamics"] = {
                "static_friction": spec.dynamics.static_friction,
                "damping": spec.dynamics.damping,
                "armature": spec.dynamics.armature,
            }
            motor = {f.name: getattr(spec.motor, f.name) for f in fields(Motor)}
            motor["model"] = spec.motor.model.value
            entry["motor"] = {k: v for k, v in motor.items() if v is not None}
            if spec.gains is not None:
                entry["gains"] = {"kp": spec.gains.kp, "kd": spec.gains.kd}
            if spec.coupling is not None:
                entry["coupling"] = {
                    "alpha_self": spec.coupling.alpha_self,
                    "alpha_leading": dict(spec.coupling.alpha_leading),
                }
            if spec.transmission is not None:
                entry["transmission"] = transmission_to_dict(spec.transmission)
        if spec.link is not None:
            entry["link"] = {
                "mass": spec.link.mass,
                "radius": spec.link.radius,
                "center_of_gravity": _clean(spec.link.center_of_gravity),
                "inertia": _clean(spec.link.inertia),
            }
            if spec.link.friction != 1.0:
                entry["link"]["friction"] = spec.link.friction
            if spec.link.torsional_friction:
                entry["link"]["torsional_friction"] = spec.link.torsional_friction
        actuators.append(entry)
    result = {
        "name": description.name,
        "base": {
            "position": _clean(description.base.position),
            "orientation": _clean(description.base.orientation),
            "fixed": description.base.fixed,
            "mass": description.base.mass,
            "radius": description.base.radius,
        },
        "actuators": actuators,
    }
    if description.base.friction != 1.0:  # only when given, likewise
        result["base"]["friction"] = description.base.friction
    if description.bus is not None:  # only when given: other robots' files stay as they were
        result["bus"] = bus_to_dict(description.bus)
    return result
