"""Helpers of the simulation tests: small robots built from dicts."""

from __future__ import annotations

from typing import Any

import numpy as np

from jointlab.interface import ArrayState
from jointlab.robots import RobotDescription, description_from_dict


def one_joint(name: str = "one", **overrides: Any) -> RobotDescription:
    """A 1-DoF rotary joint about z (no gravity load), 1 kg link of 0.2 m, no armature.

    Mapping overrides (``dynamics``, ``motor``...) are merged into the defaults.
    """
    joint: dict[str, Any] = {
        "name": "j",
        "type": "rotary",
        "axis": [0, 0, 1],
        "length": 0.2,
        "min": -100.0,
        "max": 100.0,
        "limits": {"effort": 1000.0, "velocity": 50.0},
        "link": {"mass": 1.0, "radius": 0.02},
        "gains": {"kp": 20.0, "kd": 0.5},
        "dynamics": {"armature": 0.0},
    }
    for key, value in overrides.items():
        merge = isinstance(value, dict) and isinstance(joint.get(key), dict)
        joint[key] = {**joint[key], **value} if merge else value
    return description_from_dict({"name": name, "actuators": [joint]})


def pd_formula(
    state: ArrayState, torque: float, position: float, kp: float, kd: float, velocity: float
) -> np.ndarray:
    """The documented NJointAction law, literally, at ``state`` (before the effort clamp)."""
    return torque + kp * (position - state.position) + kd * (velocity - state.velocity)
