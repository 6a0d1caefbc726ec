"""The manipulation scene: a table (the ground plane) with cubes, from a scene file.

A scene file (YAML; the built-in one is ``scenes/table.yaml``) lists the cubes with their
side, mass, sliding friction and colour, and the goal marker's radius. Every value is
checked on load and a bad one names the file, the cube and the field, with the expected
range. The contact parameters are the simulator's one model (``jointlab.sim.scene``): each
cube's friction coefficient is multiplied by that of whatever it touches, on both engines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.bounded_yaml import load_yaml, read_text
from jointlab.errors import ConfigurationError, quote

__all__ = ["BUILT_IN_SCENES", "CubeSpec", "TableScene", "load_scene"]

_HERE = Path(__file__).parent / "scenes"
#: Scene names shipped with JointLab -> file.
BUILT_IN_SCENES = {path.stem: path for path in sorted(_HERE.glob("*.yaml"))}
#: Plausible cube sides (a gripper holds 2-3 cm blocks), metres.
CUBE_SIZES = (0.01, 0.05)


@dataclass(frozen=True)
class CubeSpec:
    """One cube of a scene."""

    #: Name, unique in the scene.
    name: str
    #: Side, metres.
    size: float
    #: Mass, kg (> 0).
    mass: float
    #: Sliding friction coefficient (> 0).
    friction: float = 1.0
    #: Colour, RGBA in [0, 1].
    rgba: tuple[float, float, float, float] = (0.85, 0.2, 0.2, 1.0)


@dataclass(frozen=True)
class TableScene:
    """A table with cubes (see the module docstring)."""

    #: Scene name.
    name: str
    #: The cubes, in file order.
    cubes: tuple[CubeSpec, ...]
    #: Goal marker radius, metres.
    goal_radius: float
    #: The file it came from (None when built in code).
    source: str | None = None


def _number(where: str, cube: str, field: str, value: Any, low: float, high: float) -> float:
    try:
        number = float(value) if not isinstance(value, (bool, str, bytes)) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not (math.isfinite(number) and low < number <= high):
        raise ConfigurationError(
            f"{where}: cube {cube!r} field {field!r} must be a number in ({low:g}, {high:g}], "
            f"got {quote(value)}; fix the scene file"
        )
    return number


def _cube(where: str, raw: Any, index: int) -> CubeSpec:
    if not isinstance(raw, dict):
        raise ConfigurationError(f"{where}: cubes[{index}] must be a mapping, got {quote(raw)}")
    unknown = set(raw) - {"name", "size", "mass", "friction", "rgba"}
    name = str(raw.get("name", f"cube{index}"))
    if unknown:
        raise ConfigurationError(
            f"{where}: cube {name!r} has unknown field(s) {sorted(unknown)}; "
            "known: name, size, mass, friction, rgba"
        )
    for field in ("size", "mass"):
        if field not in raw:
            raise ConfigurationError(f"{where}: cube {name!r} needs {field!r}")
    size = _number(where, name, "size", raw["size"], CUBE_SIZES[0], CUBE_SIZES[1])
    mass = _number(where, name, "mass", raw["mass"], 0.0, 10.0)
    friction = _number(where, name, "friction", raw.get("friction", 1.0), 0.0, 10.0)
    rgba = raw.get("rgba", (0.85, 0.2, 0.2, 1.0))
    array = np.asarray(rgba, dtype=object)
    if array.shape != (4,):
        raise ConfigurationError(
            f"{where}: cube {name!r} field 'rgba' must be 4 numbers in [0, 1], got {quote(rgba)}"
        )
    colour = tuple(_number(where, name, "rgba", v, -1e-9, 1.0) for v in rgba)
    return CubeSpec(name, size, mass, friction, colour)  # type: ignore[arg-type]


def scene_from_dict(data: Any, source: str | None = None) -> TableScene:
    """Build and check a :class:`TableScene` from a scene file's mapping."""
    where = source or "scene"
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where}: a scene file must be a mapping, got {quote(data)}")
    unknown = set(data) - {"name", "cubes", "goal"}
    if unknown:
        raise ConfigurationError(
            f"{where}: unknown field(s) {sorted(unknown)}; known: name, cubes, goal"
        )
    raw_cubes = data.get("cubes")
    if not isinstance(raw_cubes, list) or not raw_cubes:
        raise ConfigurationError(f"{where}: 'cubes' must be a non-empty list")
    cubes = tuple(_cube(where, raw, i) for i, raw in enumerate(raw_cubes))
    names = [c.name for c in cubes]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"{where}: cube names must be unique, got {names}")
    goal = data.get("goal") or {}
    radius = _number(where, "goal", "radius", goal.get("radius", 0.015), 0.0, 0.2)
    return TableScene(str(data.get("name", "table")), cubes, radius, source)


def load_scene(scene: str | Path | TableScene = "table") -> TableScene:
    """A built-in scene by name, a scene file by path, or a :class:`TableScene` as is.

    Raises:
        ConfigurationError: an unknown name, a missing file or a bad value (named).
    """
    if isinstance(scene, TableScene):
        return scene
    text = str(scene)
    path = BUILT_IN_SCENES.get(text, Path(text))
    if not path.is_file():
        raise ConfigurationError(
            f"scene {quote(text)}: no such built-in scene ({list(BUILT_IN_SCENES)}) or file"
        )
    body = read_text(path, "scene file", ConfigurationError)
    return scene_from_dict(load_yaml(body, str(path), ConfigurationError), str(path))
