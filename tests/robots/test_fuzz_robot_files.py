"""Hypothesis: malformed robot files (YAML dicts and text, URDF) load or raise a JointLabError.

Valid robot dicts (``strategies.robot_dicts``) are broken one value at a time (hostile values:
huge, non-finite and complex numbers, numeric strings, 400-digit integers, path-like and long
names, nested containers) or given unknown keys of mixed types; URDFs are random link trees
with cycles, closed chains, hostile numbers and names. Each must load or raise a
``DescriptionError`` within the memory bound of ``tests/bounds.py``.
"""

from __future__ import annotations

import math
import xml.sax.saxutils as saxutils
from pathlib import Path
from typing import Any

import pytest
import yaml
from bounds import loads_or_refuses
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import robot_dicts

from jointlab.errors import DescriptionError
from jointlab.robots import RobotDescription, description_from_dict, load_robot
from jointlab.robots.yaml_io import parse_yaml

pytestmark = pytest.mark.timeout(300)

HOSTILE_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e200, -1e200, 1e308, 5e-324, 10**400, -(10**40), 2**63, 0, -1]),
    st.complex_numbers(max_magnitude=1e3),
    st.sampled_from(["1", "0.5", "abc", "", "../../x", "/tmp/x", "a\x00b", "x" * 300, "base"]),
    st.none(),
    st.booleans(),
    st.lists(st.floats(allow_nan=True), max_size=5),
    st.dictionaries(st.sampled_from(["a", "mass", "kp", "1"]), st.integers(), max_size=3),
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indices) into a nested dict/list."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _set(data: Any, path: tuple, value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


@st.composite
def broken_robot_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """A valid robot dict with one value replaced, or with unknown keys added."""
    data = draw(robot_dicts())
    paths = _paths(data)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        if draw(st.booleans()):
            _set(data, path, draw(HOSTILE_VALUES))
        else:
            target = data
            for key in path[:-1]:
                target = target[key]
            if isinstance(target, dict):
                target[draw(st.sampled_from([3, "foo", True, 1.5, "mass ", "n\x00"]))] = 1
        paths = _paths(data)
    return data


def _yaml_text(data: dict[str, Any]) -> str | None:
    try:
        return yaml.safe_dump(data, allow_unicode=True)
    except yaml.YAMLError:  # complex numbers have no safe YAML form
        return None


@settings(max_examples=40)
@given(broken_robot_dicts())
def test_broken_robot_dicts_load_or_raise(data: dict[str, Any]) -> None:
    result = loads_or_refuses(lambda: description_from_dict(data))
    assert isinstance(result, (RobotDescription, DescriptionError))
    text = _yaml_text(data)
    if text is not None:
        result = loads_or_refuses(lambda: parse_yaml(text))
        assert isinstance(result, (RobotDescription, DescriptionError))


_YAML_PIECES = st.sampled_from(
    [
        "name: r\n",
        "actuators:\n",
        "  - {name: a, type: rotary, min: -1, max: 1}\n",
        "&a ",
        "*a ",
        "[",
        "]",
        "{",
        "}",
        "- ",
        ": ",
        "!!python/complex 1+2j",
        "!!binary aGk=",
        "1e400",
        "\x00",
        "? [1, 2]\n",
        "'",
        '"',
        "\t",
        "9" * 45,
        "<<: *a\n",
        "--- \n",
        "%YAML 1.1\n",
    ]
)


@settings(max_examples=150)
@given(st.lists(_YAML_PIECES, max_size=40).map("".join))
def test_random_yaml_text_loads_or_raises(text: str) -> None:
    result = loads_or_refuses(lambda: parse_yaml(text))
    assert isinstance(result, (RobotDescription, DescriptionError))


_NUMBER_TEXT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1e400", "-1", "0", "abc", "1,2", "", "1 2 3 4", "0x10", "1e-400", "nan"]),
)
_NAME_TEXT = st.sampled_from(["a", "../../x", "/etc/x", "x" * 300, "a b", "", "base", "L0"])


@st.composite
def urdf_texts(draw: st.DrawFn) -> str:
    """A URDF of random links and joints: trees, cycles, closed chains, hostile values."""
    count = draw(st.integers(1, 6))
    links = [f"L{i}" for i in range(count)]
    parts = []
    for name in links:
        mass = draw(_NUMBER_TEXT)
        parts.append(
            f'<link name="{name}"><inertial><mass value="{saxutils.escape(mass)}"/>'
            '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>'
            "</inertial></link>"
        )
    for j in range(draw(st.integers(0, count + 1))):
        parent = draw(st.sampled_from([*links, "missing"]))
        child = draw(st.sampled_from(links))
        kind = draw(
            st.sampled_from(
                [
                    "revolute",
                    "prismatic",
                    "continuous",
                    "fixed",
                    "spherical",
                    "planar",
                    "floating",
                    "weird",
                ]
            )
        )
        name = draw(st.one_of(st.just(f"j{j}"), _NAME_TEXT))
        lower, upper, xyz = draw(_NUMBER_TEXT), draw(_NUMBER_TEXT), draw(_NUMBER_TEXT)
        parts.append(
            f'<joint name="{saxutils.escape(name)}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{saxutils.escape(xyz)} 0 0"/>'
            f'<axis xyz="0 0 1"/><limit lower="{saxutils.escape(lower)}" '
            f'upper="{saxutils.escape(upper)}" effort="1" velocity="1"/></joint>'
        )
    robot = saxutils.escape(draw(_NAME_TEXT))
    return f'<?xml version="1.0"?>\n<robot name="{robot}">' + "".join(parts) + "</robot>\n"


@settings(max_examples=150)
@given(urdf_texts())
def test_random_urdfs_load_or_raise(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    path = Path(tmp_path_factory.mktemp("urdf")) / "robot.urdf"
    path.write_text(text, encoding="utf-8")
    result = loads_or_refuses(lambda: load_robot(path))
    assert isinstance(result, (RobotDescription, DescriptionError))
    if isinstance(result, RobotDescription):
        assert all(math.isfinite(a.link.mass) for a in result.actuators if a.link)
