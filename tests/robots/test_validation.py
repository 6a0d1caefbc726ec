"""One test per validation rule of robot files, and of ``with_limits`` (JointLimitsUpdate).

Each bad file is written to ``tmp_path`` and loaded with :func:`load_robot`, so the message
must name the file, the actuator and the field (and, for ranges, what is allowed).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from jointlab.errors import DescriptionError
from jointlab.robots import (
    JointLimitsUpdate,
    RobotDescription,
    description_from_dict,
    description_to_dict,
    load_robot,
    with_limits,
)

#: A valid robot using every section: two rotary joints, a coupled linear joint, a fixed tool.
VALID: dict[str, Any] = {
    "name": "tester",
    "base": {
        "position": [0, 0, 0.1],
        "orientation": [0, 0, 0],
        "fixed": True,
        "mass": 2.0,
        "radius": 0.05,
    },
    "actuators": [
        {
            "name": "shoulder",
            "type": "rotary",
            "axis": [0, 0, 1],
            "length": 0.3,
            "orientation": [0, 0, 0],
            "min": -2.0,
            "centre": 0.0,
            "max": 2.0,
            "home": 0.5,
            "config_speed": 1.0,
            "has_brakes": True,
            "limits": {"velocity": 2.0, "acceleration": 10.0, "jerk": 100.0, "effort": 10.0},
            "soft_limits": {
                "min": -1.5,
                "max": 1.5,
                "velocity": 1.5,
                "acceleration": 8.0,
                "jerk": 80.0,
                "effort": 8.0,
            },
            "dynamics": {"static_friction": 0.01, "damping": 0.05},
            "link": {
                "mass": 1.0,
                "radius": 0.03,
                "center_of_gravity": [0.15, 0, 0],
                "inertia": [[1e-3, 0, 0], [0, 1e-2, 0], [0, 0, 1e-2]],
            },
            "motor": {
                "model": "ideal",
                "torque_constant": 0.1,
                "gear_ratio": 50.0,
                "max_current": 5.0,
            },
            "gains": {"kp": 50.0, "kd": 2.0},
        },
        {
            "name": "elbow",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.25,
            "min": -2.5,
            "max": 2.5,
            "home": 0.0,
            "limits": {"velocity": 3.0, "effort": 6.0},
        },
        {
            "name": "slider",
            "type": "linear",
            "parent": "elbow",
            "axis": [1, 0, 0],
            "length": 0.05,
            "min": 0.0,
            "max": 0.1,
            "home": 0.05,
            "coupling": {"alpha_self": 1.0, "alpha_leading": {"elbow": 0.01}},
        },
        {
            "name": "tool",
            "type": "fixed",
            "parent": "slider",
            "length": 0.05,
            "orientation": [0, 0, 0],
            "link": {"mass": 0.1},
        },
    ],
}

ACTUATOR = {"shoulder": 0, "elbow": 1, "slider": 2, "tool": 3}


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A deep copy of VALID with the item at ``path`` set (``...`` deletes it)."""
    data = copy.deepcopy(VALID)
    node: Any = data
    for key in path[:-1]:
        node = node["actuators"][ACTUATOR[key]] if key in ACTUATOR else node[key]
    if value is ...:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


def _error(tmp_path: Path, data: Any) -> tuple[str, Path]:
    path = _write(tmp_path, data)
    with pytest.raises(DescriptionError) as info:
        load_robot(path)
    return str(info.value), path


def _expect(tmp_path: Path, data: Any, actuator: str | None, field: str, *fragments: str) -> str:
    message, path = _error(tmp_path, data)
    assert str(path) in message, message
    if actuator is not None:
        assert f"'{actuator}'" in message, message
    assert f"'{field}'" in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def test_valid_file_loads(tmp_path: Path) -> None:
    description = load_robot(_write(tmp_path, VALID))
    assert description.joint_names == ("shoulder", "elbow", "slider")
    assert description.source == str(tmp_path / "robot.yaml")


# --------------------------------------------------------------------------- ranges
RANGE_CASES = [
    ("centre_below_min", ("shoulder", "centre"), -2.5, "shoulder", "centre", "[-2.0, 2.0]"),
    ("centre_above_max", ("shoulder", "centre"), 2.5, "shoulder", "centre", "[-2.0, 2.0]"),
    ("min_above_max", ("shoulder", "min"), 3.0, "shoulder", "min", "max = 2.0"),
    ("home_below_min", ("shoulder", "home"), -2.1, "shoulder", "home", "[-2.0, 2.0]"),
    ("home_above_max", ("elbow", "home"), 2.6, "elbow", "home", "[-2.5, 2.5]"),
    ("negative_length", ("elbow", "length"), -0.1, "elbow", "length", ">= 0"),
    ("negative_fixed_length", ("tool", "length"), -0.1, "tool", "length", ">= 0"),
    ("zero_link_mass", ("shoulder", "link", "mass"), 0.0, "shoulder", "link.mass", "> 0"),
    ("negative_link_mass", ("tool", "link", "mass"), -1.0, "tool", "link.mass", "> 0"),
    ("zero_link_radius", ("shoulder", "link", "radius"), 0.0, "shoulder", "link.radius", "> 0"),
    ("zero_base_mass", ("base", "mass"), 0.0, None, "base.mass", "> 0"),
    ("negative_base_radius", ("base", "radius"), -0.05, None, "base.radius", "> 0"),
    ("zero_config_speed", ("shoulder", "config_speed"), 0.0, "shoulder", "config_speed", "> 0"),
    (
        "config_speed_above_velocity_limit",
        ("shoulder", "config_speed"),
        2.5,
        "shoulder",
        "config_speed",
        "limits.velocity = 2.0",
    ),
    (
        "negative_damping",
        ("shoulder", "dynamics", "damping"),
        -0.1,
        "shoulder",
        "dynamics.damping",
        ">= 0",
    ),
    (
        "negative_friction",
        ("shoulder", "dynamics", "static_friction"),
        -0.1,
        "shoulder",
        "dynamics.static_friction",
        ">= 0",
    ),
    ("negative_kp", ("shoulder", "gains", "kp"), -1.0, "shoulder", "gains.kp", ">= 0"),
    ("negative_kd", ("shoulder", "gains", "kd"), -1.0, "shoulder", "gains.kd", ">= 0"),
    (
        "zero_torque_constant",
        ("shoulder", "motor", "torque_constant"),
        0.0,
        "shoulder",
        "motor.torque_constant",
        "> 0",
    ),
    ("negative_motor_delay", ("shoulder", "motor", "delay"), -1, "shoulder", "motor.delay", ">= 0"),
    (
        "fractional_motor_delay",
        ("shoulder", "motor", "delay"),
        1.5,
        "shoulder",
        "motor.delay",
        "whole number",
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "actuator", "field", "allowed"),
    [case[1:] for case in RANGE_CASES],
    ids=[case[0] for case in RANGE_CASES],
)
def test_range_rule(
    tmp_path: Path, path: tuple, value: Any, actuator: str | None, field: str, allowed: str
) -> None:
    _expect(tmp_path, _with(path, value), actuator, field, allowed)


@pytest.mark.parametrize("key", ["velocity", "acceleration", "jerk", "effort"])
@pytest.mark.parametrize("value", [0.0, -1.0])
def test_system_limits_must_be_positive(tmp_path: Path, key: str, value: float) -> None:
    _expect(tmp_path, _with(("shoulder", "limits", key), value), "shoulder", f"limits.{key}", "> 0")


# --------------------------------------------------------------------------- soft limits
SOFT_CASES = [
    ("velocity_above_system", "velocity", 2.5, "(0, 2.0]"),
    ("acceleration_above_system", "acceleration", 11.0, "(0, 10.0]"),
    ("jerk_above_system", "jerk", 101.0, "(0, 100.0]"),
    ("effort_above_system", "effort", 10.5, "(0, 10.0]"),
    ("effort_zero", "effort", 0.0, "(0, 10.0]"),
    ("min_below_system_min", "min", -2.1, "[-2.0, 2.0]"),
    ("max_above_system_max", "max", 2.1, "[-2.0, 2.0]"),
    ("min_above_soft_max", "min", 1.6, "soft_limits.max = 1.5"),
]


@pytest.mark.parametrize(
    ("key", "value", "allowed"), [c[1:] for c in SOFT_CASES], ids=[c[0] for c in SOFT_CASES]
)
def test_soft_limits_inside_system_limits(
    tmp_path: Path, key: str, value: float, allowed: str
) -> None:
    _expect(
        tmp_path,
        _with(("shoulder", "soft_limits", key), value),
        "shoulder",
        f"soft_limits.{key}",
        allowed,
    )


# --------------------------------------------------------------------------- axis, inertia
@pytest.mark.parametrize("axis", [[0, 0, 0], [0.0, 1e-14, 0.0]])
def test_axis_must_be_non_zero(tmp_path: Path, axis: list[float]) -> None:
    _expect(tmp_path, _with(("elbow", "axis"), axis), "elbow", "axis", "non-zero")


def test_axis_needs_three_numbers(tmp_path: Path) -> None:
    _expect(tmp_path, _with(("elbow", "axis"), [0, 1]), "elbow", "axis", "3 numbers")


def test_axis_is_normalised_on_load(tmp_path: Path) -> None:
    description = load_robot(_write(tmp_path, _with(("elbow", "axis"), [0, 3, 4])))
    assert description.actuator("elbow").axis == pytest.approx((0.0, 0.6, 0.8), abs=1e-15)


def test_inertia_must_be_symmetric(tmp_path: Path) -> None:
    inertia = [[1e-3, 1e-4, 0], [0, 1e-2, 0], [0, 0, 1e-2]]
    _expect(
        tmp_path,
        _with(("shoulder", "link", "inertia"), inertia),
        "shoulder",
        "link.inertia",
        "symmetric",
    )


@pytest.mark.parametrize(
    "inertia",
    [
        [[1e-3, 0, 0], [0, -1e-2, 0], [0, 0, 1e-2]],  # a negative eigenvalue
        [[1e-3, 0, 0], [0, 0.0, 0], [0, 0, 1e-2]],  # singular
        [[1.0, 2.0, 0], [2.0, 1.0, 0], [0, 0, 1.0]],  # positive diagonal, indefinite
    ],
    ids=["negative", "singular", "indefinite"],
)
def test_inertia_must_be_positive_definite(tmp_path: Path, inertia: list) -> None:
    _expect(
        tmp_path,
        _with(("shoulder", "link", "inertia"), inertia),
        "shoulder",
        "link.inertia",
        "positive-definite",
    )


def test_inertia_must_be_3x3(tmp_path: Path) -> None:
    _expect(
        tmp_path,
        _with(("shoulder", "link", "inertia"), [[1, 0], [0, 1]]),
        "shoulder",
        "link.inertia",
        "3x3",
    )


# --------------------------------------------------------------------------- unknown keys
UNKNOWN_KEY_CASES = [
    ("top_level", ("colour",), None, "colour"),
    ("base", ("base", "colour"), None, "base.colour"),
    ("actuator", ("shoulder", "colour"), "shoulder", "colour"),
    ("fixed_element_axis", ("tool", "axis"), "tool", "axis"),
    ("limits", ("shoulder", "limits", "speed"), "shoulder", "limits.speed"),
    ("soft_limits", ("shoulder", "soft_limits", "home"), "shoulder", "soft_limits.home"),
    ("dynamics", ("shoulder", "dynamics", "viscous"), "shoulder", "dynamics.viscous"),
    ("link", ("shoulder", "link", "length"), "shoulder", "link.length"),
    ("motor", ("shoulder", "motor", "brand"), "shoulder", "motor.brand"),
    ("gains", ("shoulder", "gains", "ki"), "shoulder", "gains.ki"),
    ("coupling", ("slider", "coupling", "offset"), "slider", "coupling.offset"),
]


@pytest.mark.parametrize(
    ("path", "actuator", "field"),
    [c[1:] for c in UNKNOWN_KEY_CASES],
    ids=[c[0] for c in UNKNOWN_KEY_CASES],
)
def test_unknown_keys_are_errors(
    tmp_path: Path, path: tuple, actuator: str | None, field: str
) -> None:
    message = _expect(tmp_path, _with(path, 1.0), actuator, field, "unknown key")
    assert "allowed keys" in message


@pytest.mark.parametrize("section", ["limits", "soft_limits", "dynamics", "link", "motor", "gains"])
def test_sections_must_be_mappings(tmp_path: Path, section: str) -> None:
    _expect(tmp_path, _with(("shoulder", section), [1, 2]), "shoulder", section, "mapping")


# --------------------------------------------------------------------------- structure
def test_unknown_type(tmp_path: Path) -> None:
    message = _expect(
        tmp_path, _with(("elbow", "type"), "spherical"), "elbow", "type", "'spherical'"
    )
    assert "rotary" in message and "linear" in message and "fixed" in message


def test_bad_motor_model(tmp_path: Path) -> None:
    message = _expect(
        tmp_path,
        _with(("shoulder", "motor", "model"), "warp_drive"),
        "shoulder",
        "motor.model",
        "'warp_drive'",
    )
    assert "ideal" in message and "dc_motor" in message


@pytest.mark.parametrize("name", ["shoulder", "base"], ids=["duplicate", "reserved"])
def test_duplicate_or_reserved_names(tmp_path: Path, name: str) -> None:
    _expect(tmp_path, _with(("elbow", "name"), name), name, "name", "duplicate or reserved")


def test_unknown_parent(tmp_path: Path) -> None:
    _expect(tmp_path, _with(("elbow", "parent"), "ghost"), "elbow", "parent", "'ghost'")


def test_parent_must_be_a_name(tmp_path: Path) -> None:
    _expect(tmp_path, _with(("elbow", "parent"), 3), "elbow", "parent", "actuator name")


def test_parent_cycle_through_forward_reference(tmp_path: Path) -> None:
    data = _with(("shoulder", "parent"), "elbow")  # forward reference
    data["actuators"][ACTUATOR["elbow"]]["parent"] = "shoulder"
    _expect(tmp_path, data, "shoulder", "parent", "cycle")


def test_parent_cycle_of_three(tmp_path: Path) -> None:
    data = _with(("shoulder", "parent"), "slider")
    _expect(tmp_path, data, None, "parent", "cycle")


def test_own_parent_is_a_cycle(tmp_path: Path) -> None:
    _expect(tmp_path, _with(("elbow", "parent"), "elbow"), "elbow", "parent", "cycle")


def test_forward_reference_without_cycle_is_allowed(tmp_path: Path) -> None:
    data = copy.deepcopy(VALID)
    data["actuators"][ACTUATOR["elbow"]]["parent"] = "base"
    data["actuators"][ACTUATOR["shoulder"]]["parent"] = "tool"
    description = load_robot(_write(tmp_path, data))
    assert description.actuator("shoulder").parent == "tool"


def test_coupling_to_unknown_actuator(tmp_path: Path) -> None:
    data = _with(("slider", "coupling", "alpha_leading"), {"ghost": 1.0})
    _expect(tmp_path, data, "slider", "coupling.alpha_leading.ghost", "'ghost'")


def test_coupling_to_fixed_element(tmp_path: Path) -> None:
    data = _with(("slider", "coupling", "alpha_leading"), {"tool": 1.0})
    _expect(tmp_path, data, "slider", "coupling.alpha_leading.tool", "not a joint")


def test_coupling_to_dependent_actuator(tmp_path: Path) -> None:
    # shoulder follows slider, which is itself dependent on elbow.
    data = _with(("shoulder", "coupling"), {"alpha_leading": {"slider": 1.0}})
    _expect(tmp_path, data, "shoulder", "coupling.alpha_leading.slider", "itself dependent")


def test_coupling_to_itself(tmp_path: Path) -> None:
    data = _with(("slider", "coupling", "alpha_leading"), {"slider": 1.0})
    _expect(tmp_path, data, "slider", "coupling.alpha_leading.slider", "lead itself")


def test_coupling_needs_a_leader(tmp_path: Path) -> None:
    data = _with(("slider", "coupling", "alpha_leading"), {})
    _expect(tmp_path, data, "slider", "coupling.alpha_leading", "at least one")


@pytest.mark.parametrize("key", ["min", "max"])
def test_min_and_max_are_required(tmp_path: Path, key: str) -> None:
    _expect(tmp_path, _with(("elbow", key), ...), "elbow", key, "required")


def test_name_is_required(tmp_path: Path) -> None:
    _expect(tmp_path, _with(("name",), ...), None, "name", "required")


def test_actuators_must_be_a_non_empty_list(tmp_path: Path) -> None:
    _expect(tmp_path, _with(("actuators",), []), None, "actuators", "non-empty list")


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    message, path = _error(tmp_path, ["not", "a", "robot"])
    assert str(path) in message and "mapping" in message


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(DescriptionError, match="not valid YAML") as info:
        load_robot(path)
    assert str(path) in str(info.value)


# --------------------------------------------------------------------------- non-numeric
NON_NUMERIC_CASES = [
    ("length", ("elbow", "length"), "long", "elbow", "length"),
    ("min", ("elbow", "min"), "low", "elbow", "min"),
    ("bool_as_number", ("elbow", "length"), True, "elbow", "length"),
    ("null", ("elbow", "max"), None, "elbow", "max"),
    ("limit", ("shoulder", "limits", "velocity"), "fast", "shoulder", "limits.velocity"),
    ("soft_limit", ("shoulder", "soft_limits", "min"), "low", "shoulder", "soft_limits.min"),
    ("axis_item", ("elbow", "axis"), [0, "z", 1], "elbow", "axis[1]"),
    ("orientation_item", ("elbow", "orientation"), [0, 0, "x"], "elbow", "orientation[2]"),
    ("link_mass", ("shoulder", "link", "mass"), "heavy", "shoulder", "link.mass"),
    ("gain", ("shoulder", "gains", "kp"), "stiff", "shoulder", "gains.kp"),
    ("motor", ("shoulder", "motor", "gear_ratio"), "high", "shoulder", "motor.gear_ratio"),
    ("alpha", ("slider", "coupling", "alpha_self"), "one", "slider", "coupling.alpha_self"),
    (
        "alpha_leading",
        ("slider", "coupling", "alpha_leading"),
        {"elbow": "x"},
        "slider",
        "coupling.alpha_leading.elbow",
    ),
    ("base_position", ("base", "position"), "here", None, "base.position"),
    ("nan", ("elbow", "min"), math.nan, "elbow", "min"),
    ("inf", ("shoulder", "limits", "effort"), math.inf, "shoulder", "limits.effort"),
]


@pytest.mark.parametrize(
    ("path", "value", "actuator", "field"),
    [c[1:] for c in NON_NUMERIC_CASES],
    ids=[c[0] for c in NON_NUMERIC_CASES],
)
def test_non_numeric_values(
    tmp_path: Path, path: tuple, value: Any, actuator: str | None, field: str
) -> None:
    message = _expect(tmp_path, _with(path, value), actuator, field)
    assert "number" in message or "finite" in message, message


def test_non_numeric_inertia(tmp_path: Path) -> None:
    inertia = [["a", 0, 0], [0, 1, 0], [0, 0, 1]]
    _expect(
        tmp_path, _with(("shoulder", "link", "inertia"), inertia), "shoulder", "link.inertia", "3x3"
    )


@pytest.mark.parametrize("path", [("shoulder", "has_brakes"), ("base", "fixed")])
def test_booleans_must_be_booleans(tmp_path: Path, path: tuple) -> None:
    field = "has_brakes" if path[0] == "shoulder" else "base.fixed"
    _expect(tmp_path, _with(path, "yes please"), None, field, "true or false")


# --------------------------------------------------------------------------- with_limits
@pytest.fixture
def tester(tmp_path: Path) -> RobotDescription:
    return load_robot(_write(tmp_path, VALID))


LIMIT_FIELDS = [
    "min_position",
    "max_position",
    "max_velocity",
    "max_acceleration",
    "max_jerk",
    "max_effort",
]


@pytest.mark.parametrize("field", LIMIT_FIELDS)
@pytest.mark.parametrize("size", [2, 4])
def test_with_limits_wrong_size(tester: RobotDescription, field: str, size: int) -> None:
    with pytest.raises(DescriptionError) as info:
        with_limits(tester, **{field: np.ones(size)})
    message = str(info.value)
    assert f"JointLimitsUpdate.{field}" in message
    assert f"has {size} values" in message and "expected 3" in message


def test_with_limits_accepts_an_update_object(tester: RobotDescription) -> None:
    update = JointLimitsUpdate(max_effort=[9.0, 4.0, 50.0])
    np.testing.assert_array_equal(with_limits(tester, update).effort_limit, [9.0, 4.0, 50.0])
    with pytest.raises(DescriptionError, match="has 1 values"):
        with_limits(tester, JointLimitsUpdate(max_jerk=[1.0]))


def test_with_limits_unknown_field(tester: RobotDescription) -> None:
    with pytest.raises(DescriptionError, match="max_position"):
        with_limits(tester, max_speed=[1.0, 1.0, 1.0])


def test_with_limits_update_and_keywords_together(tester: RobotDescription) -> None:
    with pytest.raises(DescriptionError, match="not both"):
        with_limits(tester, JointLimitsUpdate(), max_effort=[1.0, 1.0, 1.0])


def test_with_limits_changes_only_the_given_fields(tester: RobotDescription) -> None:
    updated = with_limits(tester, max_velocity=[1.8, 2.5, 0.9], max_position=[1.9, 2.4, 0.08])
    np.testing.assert_array_equal(updated.velocity_limit, [1.8, 2.5, 0.9])
    np.testing.assert_array_equal(updated.upper, [1.9, 2.4, 0.08])
    # configured speeds above a new velocity limit come down with it
    np.testing.assert_array_equal(updated.config_speed, [1.0, 2.5, 0.9])
    for unchanged in (
        "lower",
        "acceleration_limit",
        "jerk_limit",
        "effort_limit",
        "home",
        "centre",
        "default_kp",
        "soft_lower",
    ):
        np.testing.assert_array_equal(
            getattr(updated, unchanged), getattr(tester, unchanged), err_msg=unchanged
        )
    before, after = description_to_dict(tester), description_to_dict(updated)
    for entry_before, entry_after in zip(before["actuators"], after["actuators"], strict=True):
        for key in ("max", "limits", "config_speed"):
            entry_before.pop(key, None)
            entry_after.pop(key, None)
    assert before == after
    assert tester.velocity_limit[0] == 2.0  # the original is untouched
    assert updated.source == tester.source


def test_with_limits_result_round_trips(tester: RobotDescription) -> None:
    updated = with_limits(tester, max_effort=[9.0, 5.0, 20.0])
    assert description_from_dict(description_to_dict(updated)) == updated


REVALIDATION_CASES = [
    ("max_below_min", {"max_position": [-2.1, 2.5, 0.1]}, "shoulder", "min"),
    ("max_below_home", {"max_position": [0.4, 2.5, 0.1]}, "shoulder", "home"),
    ("min_above_centre", {"min_position": [0.1, -2.5, 0.0]}, "shoulder", "centre"),
]


@pytest.mark.parametrize(
    ("update", "actuator", "field"),
    [c[1:] for c in REVALIDATION_CASES],
    ids=[c[0] for c in REVALIDATION_CASES],
)
def test_with_limits_result_is_revalidated(
    tester: RobotDescription, update: dict, actuator: str, field: str
) -> None:
    with pytest.raises(DescriptionError) as info:
        with_limits(tester, **update)
    message = str(info.value)
    assert f"'{actuator}'" in message and f"'{field}'" in message, message


def test_inertia_must_satisfy_the_triangle_inequality(tmp_path: Path) -> None:
    inertia = [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.15]]  # no rigid body has these moments
    _expect(
        tmp_path,
        _with(("shoulder", "link", "inertia"), inertia),
        "shoulder",
        "link.inertia",
        "triangle inequality",
    )


# --------------------------------------------------------------------------- JointLimitsUpdate
def test_an_empty_field_is_no_update(tester: RobotDescription) -> None:
    assert with_limits(tester, min_position=[], max_effort=()) == tester
    updated = with_limits(tester, JointLimitsUpdate(min_position=[], max_effort=[9.0, 5.0, 50.0]))
    np.testing.assert_array_equal(updated.lower, tester.lower)
    np.testing.assert_array_equal(updated.effort_limit, [9.0, 5.0, 50.0])


OUTSIDE_CASES = [
    ("min_position", [-9.0, -2.5, 0.0], 0, "shoulder", "at least its min -2.0"),
    ("max_position", [2.0, 2.6, 0.1], 1, "elbow", "at most its max 2.5"),
    ("max_velocity", [2.0, 3.5, 1.0], 1, "elbow", "in (0, its limit] 3.0"),
    ("max_effort", [10.0, 0.0, 100.0], 1, "elbow", "in (0, its limit] 6.0"),
    ("max_jerk", [100.0, float("nan"), 50.0], 1, "elbow", "in (0, its limit]"),
]


@pytest.mark.parametrize(
    ("field", "value", "joint", "name", "expected"),
    OUTSIDE_CASES,
    ids=[c[0] for c in OUTSIDE_CASES],
)
def test_an_update_must_lie_within_the_robot_limits(
    tester: RobotDescription, field: str, value: list, joint: int, name: str, expected: str
) -> None:
    with pytest.raises(DescriptionError) as info:
        with_limits(tester, **{field: value})
    message = str(info.value)
    assert f"JointLimitsUpdate.{field}[{joint}]" in message and f"'{name}'" in message
    assert expected in message, message


def test_soft_limits_and_configured_speeds_narrow_with_the_update(
    tester: RobotDescription,
) -> None:
    updated = with_limits(
        tester,
        max_position=[1.2, 2.5, 0.1],
        max_velocity=[1.2, 0.5, 1.0],
        max_effort=[7.0, 6.0, 100.0],
    )
    assert updated.soft_upper[0] == 1.2  # was 1.5, the new range ends at 1.2
    assert updated.soft_velocity_limit[0] == 1.2  # was 1.5
    assert updated.soft_effort_limit[0] == 7.0  # was 8
    np.testing.assert_array_equal(updated.config_speed, [1.0, 0.5, 1.0])  # elbow: 3 -> 0.5
    assert updated.soft_lower[0] == tester.soft_lower[0]
