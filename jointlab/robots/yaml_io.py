"""Robot files: load by built-in name, YAML path or URDF path; dump to YAML."""

from __future__ import annotations

import difflib
import hashlib
import re
from importlib import resources
from pathlib import Path

import yaml

from jointlab.bounded_yaml import load_yaml, read_text
from jointlab.errors import DescriptionError, quote
from jointlab.robots.description import RobotDescription
from jointlab.robots.schema import description_from_dict
from jointlab.robots.serialize import description_to_dict
from jointlab.robots.urdf_io import description_from_urdf

LIBRARY_PACKAGE = "jointlab.robots.library"


def builtin_robots() -> list[str]:
    """Names of the built-in robots (``jointlab/robots/library/*.yaml``)."""
    folder = resources.files(LIBRARY_PACKAGE)
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def builtin_path(name: str) -> Path:
    """Path of the built-in robot file ``name``."""
    return Path(str(resources.files(LIBRARY_PACKAGE).joinpath(f"{name}.yaml")))


class _Loader(yaml.SafeLoader):
    """YAML 1.1 safe loader that also reads ``1e-3`` (no dot) as a float, like YAML 1.2."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def parse_yaml(text: str, source: str | None = None) -> RobotDescription:
    """Build a description from robot-file YAML text."""
    data = load_yaml(text, source or "<yaml text>", DescriptionError, _Loader)
    return description_from_dict(data, source=source)


def load_robot(name_or_path: str | Path) -> RobotDescription:
    """Load a robot by built-in name (``"arm6"``), ``.yaml``/``.yml`` path or ``.urdf`` path.

    Raises:
        DescriptionError: unknown name, unreadable file, or an invalid description (the
            message names the file, the actuator and the field).
    """
    if isinstance(name_or_path, RobotDescription):
        return name_or_path
    if not isinstance(name_or_path, (str, Path)):
        raise DescriptionError(
            f"a robot is a built-in name or a .yaml/.urdf path, got {type(name_or_path).__name__} "
            f"{quote(name_or_path)}"
        )
    text = str(name_or_path)
    path = Path(text).expanduser()
    suffix = path.suffix.lower()
    if suffix == ".urdf":
        if "\0" in text or not path.is_file():
            raise DescriptionError(f"{quote(str(path), 200)}: URDF file not found")
        return description_from_urdf(str(path))
    if suffix in (".yaml", ".yml"):
        content = read_text(path, "robot file", DescriptionError)
        return parse_yaml(content, source=str(path))
    names = builtin_robots()
    if text in names:
        content = builtin_path(text).read_text(encoding="utf-8")
        return parse_yaml(content, source=f"<built-in {text}.yaml>")
    hint = difflib.get_close_matches(text, names, n=1)
    suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
    raise DescriptionError(
        f"{quote(text)} is neither a built-in robot ({', '.join(names)}) nor a .yaml/.urdf path"
        f"{suggestion}"
    )


class _Dumper(yaml.SafeDumper):
    """Block style for mappings, flow style for short numeric lists."""


def _represent_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    flat = all(not isinstance(v, (list, dict)) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_Dumper.add_representer(list, _represent_list)


def dump_yaml(description: RobotDescription) -> str:
    """Robot-file YAML of ``description`` with every field explicit (lossless: floats use repr)."""
    return yaml.dump(description_to_dict(description), Dumper=_Dumper, sort_keys=False, width=100)


def description_digest(description: RobotDescription) -> str:
    """SHA-256 hex digest of ``description``'s canonical YAML (the device HELLO's hash)."""
    return hashlib.sha256(dump_yaml(description).encode()).hexdigest()
