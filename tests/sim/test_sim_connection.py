"""``jointlab.connect`` with ``sim://`` URLs and the scheme registry."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import jointlab
from jointlab import connection
from jointlab.connection import parse_url, register_scheme, schemes
from jointlab.errors import ConfigurationError, DescriptionError
from jointlab.robots import dump_yaml, load_robot
from jointlab.sim import SimRobot


def test_builtin_name_with_query_values():
    with jointlab.connect("sim://planar2?dt=0.002&control_dt=0.01&gui=0&seed=5") as robot:
        assert isinstance(robot, SimRobot)
        assert robot.description == load_robot("planar2")
        assert robot.dt == 0.002 and robot.control_dt == 0.01
        robot.step()
        assert robot.time == pytest.approx(0.01)


def test_absolute_and_relative_paths(tmp_path, monkeypatch):
    path = tmp_path / "robots" / "mine.yaml"
    path.parent.mkdir()
    path.write_text(dump_yaml(load_robot("planar2")))
    with jointlab.connect(f"sim://{path}") as robot:  # sim:///tmp/.../mine.yaml
        assert robot.description.name == "planar2"
    monkeypatch.chdir(tmp_path)
    with jointlab.connect("sim://robots/mine.yaml") as robot:
        assert robot.dof == 2


def test_options_reach_the_backend():
    with jointlab.connect("sim://planar2", control_dt=0.005) as robot:
        assert robot.control_dt == 0.005
    with pytest.raises(ConfigurationError, match="both in the URL"):
        jointlab.connect("sim://planar2?seed=1", seed=2)
    with pytest.raises(ConfigurationError, match="invalid option"):
        jointlab.connect("sim://planar2", colour="red")


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://arm6", ["ftp://arm6", "unknown scheme 'ftp'", "sim"]),
        ("arm6", ["'arm6'", "SCHEME://TARGET"]),
        ("sim://planar2?dt=fast", ["sim://planar2?dt=fast", "'dt'", "'fast'"]),
        ("sim://planar2?dt=-1", ["'dt'", "positive"]),
        ("sim://planar2?gui=maybe", ["'gui'", "'maybe'"]),
        ("sim://planar2?seed=1.5", ["'seed'"]),
        ("sim://planar2?colour=red", ["'colour'", "unknown query parameter"]),
        ("sim://planar2?dt=0.001&dt=0.002", ["'dt'", "twice"]),
        ("sim://?dt=0.001", ["no robot given"]),
        ("sim://planar2?dt=0.001&control_dt=0.0025", ["0.0025", "0.001", "whole multiple"]),
    ],
)
def test_bad_urls_raise_configuration_errors_naming_url_and_parameter(url, words):
    with pytest.raises(ConfigurationError) as info:
        jointlab.connect(url)
    for word in words:
        assert word in str(info.value)


def test_unknown_robot_or_unreadable_file_raise_description_errors(tmp_path):
    with pytest.raises(DescriptionError, match=r"'arm7'.*did you mean 'arm6'"):
        jointlab.connect("sim://arm7")
    missing = tmp_path / "missing.yaml"
    with pytest.raises(DescriptionError, match=str(missing)):
        jointlab.connect(f"sim://{missing}")
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed")
    with pytest.raises(DescriptionError, match=str(broken)):
        jointlab.connect(f"sim://{broken}")


def test_a_new_scheme_plugs_into_the_registry(monkeypatch):
    monkeypatch.setattr(connection, "_SCHEMES", dict(connection._SCHEMES))
    made = []

    def factory(url, options):
        made.append((url.target, url.take("baud", int, 9600), options))
        url.check_all_taken()
        return SimRobot("planar2")

    register_scheme("loopback-test", factory)
    assert "loopback-test" in schemes()
    with pytest.raises(ConfigurationError, match="already registered"):
        register_scheme("loopback-test", factory)
    with jointlab.connect("loopback-test:///dev/ttyX?baud=1000000", flag=True):
        pass
    assert made == [("/dev/ttyX", 1000000, {"flag": True})]


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-./", min_size=1, max_size=30))
def test_parse_url_keeps_the_target(target):
    parsed = parse_url(f"sim://{target}?dt=0.001")
    assert parsed.scheme == "sim" and parsed.target == target and parsed.query == {"dt": "0.001"}
