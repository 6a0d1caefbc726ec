"""A corpus of hand-written hostile robot files (``tests/robots/hostile/``).

Each file either loads or raises a :class:`DescriptionError` whose message names the file,
states the reason, stays short, and costs little memory (traced peak per file). Alias
bombs, recursive aliases, deep nesting, cycles and closed chains in URDF, path-like and
oversized names, huge and non-finite numbers, complex numbers and numeric strings, unknown
keys of mixed types, NUL bytes, entity bombs.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pybullet
import pytest

import jointlab
from jointlab.errors import DescriptionError
from jointlab.robots import description_from_dict
from jointlab.robots.plausible import MAX_LINKS, RANGES
from jointlab.robots.schema import validate_description
from jointlab.robots.urdf_import import URDFImportWarning
from jointlab.robots.urdf_io import description_to_urdf
from jointlab.sim import SimRobot

HOSTILE = Path(__file__).parent / "hostile"
#: Largest traced allocation peak while loading one file, bytes.
MEMORY_BOUND = 64 * 2**20
#: Longest error message, characters (file path excluded).
MESSAGE_BOUND = 400

#: File -> a fragment its error must contain (None: the file loads).
EXPECTED = {
    "actuator_name_path.yaml": "may hold only letters",
    "alias_bomb_12.yaml": "once its aliases are expanded",
    "alias_bomb_8.yaml": "once its aliases are expanded",
    "alias_in_error_message.yaml": "once its aliases are expanded",
    "axis_overflow.yaml": "field 'axis[0]'",
    "closed_chain.urdf": "closed kinematic chain",
    "complex_number.yaml": "python/complex",
    "cycle_below_root.urdf": "closed kinematic chain",
    "deep_brackets.yaml": "nested deeper than 24",
    "deep_mappings.yaml": "nested deeper than 24",
    "deep_xml.urdf": "non-empty list of actuators",
    "delay_1e9.yaml": "<= 1000",
    "density_too_heavy.yaml": "field 'link.density': gives a link of",
    "detached_cycle.urdf": "not reached from the root link",
    "effort_inf.yaml": "must be a finite number",
    "entity_bomb.urdf": "cannot read URDF",
    "external_entity.urdf": "cannot read URDF",
    "gains_1e300.yaml": "field 'gains.kp'",
    "heavy_link.urdf": "field 'link.mass'",
    "huge_number.urdf": "all finite",
    "inertia_huge.yaml": "principal moment",
    "joint_name_path.urdf": "may hold only letters",
    "length_1e200.yaml": "plausible range [0, 100] m",
    "length_400_digits.yaml": "more than 40 digits",
    "many_chains.yaml": "at most 120",
    "mass_1e308_density.yaml": "field 'link.density'",
    "min_nan.yaml": "must be a finite number",
    "missing_child.urdf": "has no <child",
    "name_300_chars.yaml": "300 characters long",
    "name_absolute.yaml": "may hold only letters",
    "name_dotdot.urdf": None,  # the URDF robot name is cleaned, with a warning
    "name_dotdot.yaml": "may hold only letters",
    "name_nul.yaml": "may hold only letters",
    "name_slash.yaml": "may hold only letters",
    "negative_mass.urdf": "is negative",
    "negative_mass.yaml": "must be > 0",
    "not_xml.urdf": "cannot read URDF",
    "nul_bytes.yaml": "not valid YAML",
    "numeric_string.yaml": "must be a number, got str",
    "python_object.yaml": "could not determine a constructor",
    "recursive_alias.yaml": "recursive document",
    "too_many_actuators.yaml": "at most 119",
    "too_many_joints.urdf": "at most 120",
    "top_level_list.yaml": "mapping at top level",
    "unhashable_key.yaml": "unhashable key",
    "unknown_keys_mixed_types.yaml": "unknown key",
}


def test_the_corpus_is_listed_whole() -> None:
    assert sorted(p.name for p in HOSTILE.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_hostile_file_loads_or_is_refused_clearly_and_cheaply(name: str) -> None:
    path = HOSTILE / name
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", URDFImportWarning)
            try:
                description = jointlab.load_robot(path)
                message = None
            except DescriptionError as exc:
                message = str(exc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_BOUND, f"{name}: traced peak {peak / 2**20:.0f} MiB"
    fragment = EXPECTED[name]
    if fragment is None:
        assert message is None, message
        assert "/" not in description.name
        return
    assert message is not None, f"{name} was accepted"
    assert message.startswith(str(path)), message
    assert fragment in message, (fragment, message)
    assert len(message) - len(str(path)) < MESSAGE_BOUND, message


def test_an_alias_bomb_costs_little_memory_in_a_fresh_process() -> None:
    """Peak resident memory (not only traced allocations) of loading the 12-deep bomb."""
    # VmHWM (this process image's peak), not ru_maxrss (which keeps the forking parent's peak)
    script = (
        "import jointlab\n"
        "try:\n"
        f"    jointlab.load_robot({str(HOSTILE / 'alias_bomb_12.yaml')!r})\n"
        "except jointlab.JointLabError as exc:\n"
        "    print(type(exc).__name__)\n"
        "status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
        "print(int(status.split()[0]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    kind, kib = result.stdout.split()
    assert kind == "DescriptionError"
    assert int(kib) < 500 * 1024, f"peak RSS {int(kib) / 1024:.0f} MiB"


# ------------------------------------------------------------------ names are not paths
def test_the_simulator_never_writes_a_file_named_after_the_robot(tmp_path: Path) -> None:
    description = dataclasses.replace(jointlab.load_robot("planar2"), name="../../escaped")
    with pytest.raises(DescriptionError, match="may hold only letters"):
        validate_description(description)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with SimRobot(description) as robot:
            robot.step()
    finally:
        os.chdir(cwd)
    assert not list(tmp_path.rglob("*.urdf"))
    assert not (tmp_path.parent.parent / "escaped.urdf").exists()


# ------------------------------------------------------------------ the link limit
def _chain(count: int) -> jointlab.RobotDescription:
    """A serial chain of ``count`` light rotary joints (built past the file limit)."""
    base = description_from_dict(
        {
            "name": "chain",
            "actuators": [
                {
                    "name": "j0",
                    "type": "rotary",
                    "min": -1,
                    "max": 1,
                    "length": 0.01,
                    "link": {"radius": 0.005},
                    "gains": {"kp": 1.0, "kd": 0.01},
                }
            ],
        }
    )
    spec = base.actuators[0]
    specs = [
        dataclasses.replace(spec, name=f"j{i}", parent=f"j{i - 1}" if i else "base")
        for i in range(count)
    ]
    return dataclasses.replace(base, actuators=tuple(specs))


def _pybullet_holds(description: jointlab.RobotDescription, tmp_path: Path) -> bool:
    path = tmp_path / f"chain{description.dof}.urdf"
    path.write_text(description_to_urdf(description))
    client = pybullet.connect(pybullet.DIRECT)
    try:
        body = pybullet.loadURDF(str(path), useFixedBase=True, physicsClientId=client)
        joints = pybullet.getNumJoints(body, physicsClientId=client)
        pybullet.getJointStates(body, list(range(joints)), physicsClientId=client)
        return True
    except pybullet.error:
        return False
    finally:
        pybullet.disconnect(client)


def test_the_link_limit_lies_below_what_pybullet_holds(tmp_path: Path) -> None:
    # A chain of n joints exports n + 1 links (the tool frame): PyBullet holds 127.
    assert _pybullet_holds(_chain(126), tmp_path)
    assert not _pybullet_holds(_chain(127), tmp_path)
    assert MAX_LINKS < 127
    largest = _chain(MAX_LINKS - 1)
    validate_description(largest)
    with SimRobot(largest, gain_check="warn") as robot:
        robot.step()
        assert np.isfinite(robot.read().position).all()
    with pytest.raises(DescriptionError, match=f"at most {MAX_LINKS}"):
        validate_description(_chain(MAX_LINKS))


def test_every_plausible_range_is_documented() -> None:
    text = (Path(__file__).parents[2] / "docs" / "robot-files.md").read_text(encoding="utf-8")
    for field, bounds in RANGES.items():
        assert f"| `{field}` | {bounds} |" in text, field
