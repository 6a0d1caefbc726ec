"""Seeded random robots from geometry only: chains and trees, parallel axes included.

Used by the default-gain property test and ``benchmarks/default_gains.py``. Each robot has
2-7 rotary joints, links 0.05-0.5 m, no gains, no inertials, no armature: everything the
loader derives. The base stands high enough that no pose reaches the ground (neither engine
collides a robot with itself).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from jointlab.robots import RobotDescription
from jointlab.robots.dynamics import DynamicsModel
from jointlab.robots.gains import UnstableGainsWarning
from jointlab.robots.schema import description_from_dict

__all__ = ["random_geometry", "random_robot"]

_AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def random_geometry(seed: int, tree: bool | None = None) -> dict[str, Any]:
    """The robot-file mapping of random robot ``seed`` (a tree when ``tree``, else a chain).

    Args:
        seed: Seed of the generator; the same seed gives the same robot.
        tree: True for a tree (some joints start at an earlier joint or the base), False
            for a serial chain, None to let the seed choose.
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    tree = bool(rng.random() < 0.5) if tree is None else tree
    actuators: list[dict[str, Any]] = []
    total = 0.0
    for i in range(n):
        length = float(rng.uniform(0.05, 0.5))
        total += length
        if i > 0 and rng.random() < 0.5:  # parallel to the previous joint: the hard case
            axis = actuators[-1]["axis"]
        elif rng.random() < 0.7:
            axis = list(_AXES[int(rng.integers(3))])
        else:
            axis = rng.normal(size=3).round(3).tolist()
        spec: dict[str, Any] = {
            "name": f"j{i}",
            "type": "rotary",
            "axis": axis,
            "length": round(length, 4),
            "orientation": rng.uniform(-1.6, 1.6, size=3).round(3).tolist(),
            "min": -2.5,
            "max": 2.5,
            "home": round(float(rng.uniform(-1.0, 1.0)), 3),
        }
        if tree and i > 0 and rng.random() < 0.4:
            spec["parent"] = "base" if rng.random() < 0.3 else f"j{int(rng.integers(i))}"
        actuators.append(spec)
    return {
        "name": f"random{seed}",
        "base": {"position": [0.0, 0.0, round(total + 0.2, 3)], "fixed": True},
        "actuators": actuators,
    }


def random_robot(seed: int, tree: bool | None = None, strong: bool = True) -> RobotDescription:
    """The loaded description of :func:`random_geometry` ``(seed, tree)``.

    Args:
        seed: As for :func:`random_geometry`.
        tree: As for :func:`random_geometry`.
        strong: Give each joint whose weight at home needs more than half the default effort
            limit (10 N·m) ``limits.effort`` = twice that weight (rounded up), as a designer
            sizing actuators would; False keeps the defaults (some robots then cannot hold
            their own weight: the bad input the loader warns about).
    """
    data = random_geometry(seed, tree)
    source = f"<random robot {seed}>"
    if not strong:
        return description_from_dict(data, source=source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnstableGainsWarning)
        weak = description_from_dict(data, source=source)
    weight = np.abs(DynamicsModel(weak).gravity_torque(weak.home))
    for spec, load in zip(data["actuators"], weight, strict=True):
        if load > 5.0:
            spec["limits"] = {"effort": float(np.ceil(2.0 * load))}
    return description_from_dict(data, source=source)
