"""YAML I/O: ``load_robot`` by name or path, ``to_yaml`` and lossless round trips."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from strategies import robot_dicts

from jointlab.errors import DescriptionError
from jointlab.robots import (
    builtin_path,
    builtin_robots,
    description_digest,
    description_from_dict,
    description_to_dict,
    description_to_urdf,
    dump_yaml,
    load_robot,
    parse_yaml,
)

BUILTINS = builtin_robots()


def test_load_by_name_and_by_path_agree(tmp_path: Path) -> None:
    by_name = load_robot("arm6")
    by_path = load_robot(builtin_path("arm6"))
    by_str = load_robot(str(builtin_path("arm6")))
    assert by_name == by_path == by_str
    assert by_path.source == str(builtin_path("arm6"))
    assert "arm6" in (by_name.source or "")


def test_load_yml_suffix_and_description_passthrough(tmp_path: Path) -> None:
    path = tmp_path / "copy.yml"
    path.write_text(builtin_path("planar2").read_text())
    description = load_robot(path)
    assert description == load_robot("planar2")
    assert load_robot(description) is description


def test_load_urdf_path(tmp_path: Path) -> None:
    original = load_robot("planar2")
    path = tmp_path / "planar2.urdf"
    path.write_text(description_to_urdf(original))
    imported = load_robot(path)
    assert imported.joint_names == original.joint_names
    assert imported.source == str(path)


@pytest.mark.parametrize(
    ("typo", "hint"), [("arm7", "arm6"), ("planr2", "planar2"), ("trifnger", "trifinger")]
)
def test_unknown_name_suggests_a_builtin(typo: str, hint: str) -> None:
    with pytest.raises(DescriptionError) as info:
        load_robot(typo)
    message = str(info.value)
    assert f"did you mean {hint!r}" in message
    assert repr(typo) in message


def test_unknown_name_without_close_match_lists_builtins() -> None:
    with pytest.raises(DescriptionError) as info:
        load_robot("zzzzzz")
    message = str(info.value)
    assert "did you mean" not in message
    for name in BUILTINS:
        assert name in message


def test_missing_yaml_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    with pytest.raises(DescriptionError) as info:
        load_robot(path)
    assert str(path) in str(info.value) and "cannot read" in str(info.value)


def test_directory_named_yaml_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "folder.yaml"
    path.mkdir()
    with pytest.raises(DescriptionError) as info:
        load_robot(path)
    assert str(path) in str(info.value)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_yaml_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text(builtin_path("planar2").read_text())
    path.chmod(0)
    try:
        with pytest.raises(DescriptionError) as info:
            load_robot(path)
        assert str(path) in str(info.value)
    finally:
        path.chmod(0o600)


def test_missing_urdf_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "missing.urdf"
    with pytest.raises(DescriptionError) as info:
        load_robot(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_yaml_round_trip(name: str, tmp_path: Path) -> None:
    description = load_robot(name)
    text = dump_yaml(description)
    again = parse_yaml(text)
    assert again == description
    assert description_to_dict(again) == description_to_dict(description)
    assert dump_yaml(again) == text  # the dump is a fixed point
    assert description_digest(again) == description_digest(description)
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    assert load_robot(path) == description


@settings(max_examples=100)
@given(robot_dicts())
def test_generated_descriptions_survive_yaml_round_trip(data: dict[str, Any]) -> None:
    description = description_from_dict(data)
    text = dump_yaml(description)
    again = parse_yaml(text)
    assert again == description
    assert dump_yaml(again) == text


@settings(max_examples=30)
@given(robot_dicts(max_elements=4))
def test_generated_dicts_load_from_yaml_files(data: dict[str, Any]) -> None:
    # The same dict through the file path: PyYAML's own dump, our loader.
    assert parse_yaml(
        yaml.safe_dump(data, sort_keys=False), source="gen.yaml"
    ) == description_from_dict(data)


def test_exponent_floats_without_a_dot_load_as_floats() -> None:
    text = builtin_path("planar2").read_text()
    text = text.replace("damping: 0.05}", "damping: 1e-3}", 1)
    text = text.replace("link: {mass: 1.0,", "link: {mass: 2E+0,", 1)
    # Plain YAML 1.1 reads these as strings; the robot-file loader must not.
    assert isinstance(yaml.safe_load("x: 1e-3")["x"], str)
    description = parse_yaml(text)
    shoulder = description.actuator("shoulder")
    assert shoulder.dynamics.damping == 1e-3
    assert isinstance(shoulder.dynamics.damping, float)
    assert shoulder.link is not None and shoulder.link.mass == 2.0


def test_dumped_small_floats_reload_exactly() -> None:
    text = builtin_path("planar2").read_text().replace("damping: 0.05}", "damping: 1.0e-07}", 1)
    description = parse_yaml(text)
    assert description.actuator("shoulder").dynamics.damping == 1e-7
    assert parse_yaml(dump_yaml(description)) == description


def test_parse_yaml_names_its_source() -> None:
    with pytest.raises(DescriptionError, match=r"inline\.yaml"):
        parse_yaml("name: x\nactuators: []\n", source="inline.yaml")


def test_binary_yaml_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage\x80")
    with pytest.raises(DescriptionError) as info:
        load_robot(path)
    assert str(path) in str(info.value)
