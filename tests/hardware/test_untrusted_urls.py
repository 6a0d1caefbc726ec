"""Untrusted URLs and child processes.

* ``serial://`` hands pyserial only the handlers and query keys it documents; handlers that
  write files or scan devices need ``allow_handlers`` in code, so a URL from a configuration
  file cannot create or truncate a file.
* ``emulated://`` values out of range are refused host side, naming the key, before any child
  process starts; a child that fails reports its reason first, bounded.
* The emulator child is reaped however its parent ends: ``close()``, garbage collection and
  interpreter exit are in ``test_emulator.py``; here SIGTERM and SIGKILL of the parent.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest
from bounds import loads_or_refuses
from hypothesis import given, settings
from hypothesis import strategies as st

import jointlab
from jointlab.errors import ConfigurationError, JointLabError, LinkError
from jointlab.hardware.emulator import process

pytestmark = pytest.mark.timeout(300)


class _Started(Exception):
    """Raised instead of starting a process or opening a port."""


@pytest.mark.parametrize("handler", ["spy", "hwgrep", "alt", "cp2110"])
def test_file_writing_and_scanning_handlers_need_an_opt_in(tmp_path: Path, handler: str) -> None:
    target = tmp_path / "written"
    url = f"serial://{handler}://loop://?file={target}"
    with pytest.raises(ConfigurationError, match=f"allow_handlers={{'{handler}'}}"):
        jointlab.connect(url)
    assert not target.exists()


def test_an_opted_in_handler_gets_its_query(tmp_path: Path) -> None:
    target = tmp_path / "spy.txt"
    with mock.patch("serial.serial_for_url", side_effect=_Started) as opened:
        with pytest.raises(_Started):
            jointlab.connect(f"serial://spy://loop://?file={target}", allow_handlers={"spy"})
    assert opened.call_args.args[0] == f"spy://loop://?file={target}"


def test_a_network_bridge_gets_its_documented_flags() -> None:
    with mock.patch("serial.serial_for_url", side_effect=_Started) as opened:
        with pytest.raises(_Started):
            jointlab.connect("serial://rfc2217://127.0.0.1:7000?ign_set_control&timeout=2")
    assert opened.call_args.args[0] == "rfc2217://127.0.0.1:7000?ign_set_control&timeout=2"


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("serial://loop://?foo=1", "unknown query parameter 'foo'"),
        ("serial://loop://?logging=verbose", "'logging' = 'verbose' is invalid"),
        ("serial://socket://127.0.0.1:7000?file=/tmp/x", "unknown query parameter 'file'"),
        ("serial://rfc2217://127.0.0.1:7000?timeout=-1", "'timeout' = '-1' is invalid"),
        ("serial://gopher://x", "unknown pyserial handler"),
        ("serial:///dev/ttyUSB0?logging=debug", "unknown query parameter 'logging'"),
    ],
)
def test_serial_urls_forward_only_documented_keys(url: str, fragment: str) -> None:
    with mock.patch("serial.serial_for_url", side_effect=_Started):
        with pytest.raises(ConfigurationError) as info:
            jointlab.connect(url)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("query", "key"),
    [
        ("rate=0", "rate"),
        ("rate=100000000", "rate"),
        ("seed=-1", "seed"),
        ("seed=99999999999999999999", "seed"),
        ("watchdog_ms=-5", "watchdog_ms"),
        ("watchdog_ms=70000", "watchdog_ms"),
        ("tcp=99999", "tcp"),
        ("stream_period=0", "stream_period"),
        ("rate=1e3", "rate"),
        ("dead_ms=inf", "dead_ms"),
        ("timeout=abc", "timeout"),
    ],
)
def test_emulated_values_are_refused_before_a_child_starts(query: str, key: str) -> None:
    with mock.patch.object(process.subprocess, "Popen", side_effect=_Started):
        with pytest.raises(ConfigurationError) as info:
            jointlab.connect(f"emulated://planar2?{query}")
    assert f"'{key}'" in str(info.value) and len(str(info.value)) < 300


@pytest.mark.parametrize(
    "option",
    [
        {"seed": -1},
        {"rate_hz": 0},
        {"watchdog_ms": 10**6},
        {"tcp_port": -1},
        {"stream_period": "1"},
    ],
)
def test_emulator_options_are_checked_before_a_child_starts(option: dict) -> None:
    with mock.patch.object(process.subprocess, "Popen", side_effect=_Started):
        with pytest.raises(ConfigurationError, match=next(iter(option))):
            process.EmulatorProcess("planar2", **option)


def test_a_child_failure_reports_its_reason_first_and_bounded() -> None:
    # In range, but the child's simulator refuses the default gains at 10 Hz (its gain check).
    with pytest.raises(LinkError) as info:
        process.EmulatorProcess(jointlab.load_robot("planar2"), rate_hz=10)
    message = str(info.value)
    assert message.startswith("emulator for 'planar2' failed to start: DescriptionError: ")
    assert len(message) < 500


_QUERY_KEYS = st.sampled_from(
    [
        "rate",
        "seed",
        "watchdog_ms",
        "tcp",
        "stream_period",
        "lockstep",
        "dead_ms",
        "timeout",
        "baud",
        "robot",
        "fifo",
        "dt",
        "logging",
        "file",
        "control_dt",
        "gui",
        "engine",
        "gain_check",
        "x",
    ]
)
_QUERY_VALUES = st.one_of(
    st.sampled_from(
        [
            "0",
            "-1",
            "1e300",
            "inf",
            "nan",
            "abc",
            "",
            "1",
            "99999999999999999999",
            "../../x",
            "%00",
            "debug",
        ]
    ),
    st.text(max_size=8),
)


@settings(max_examples=150)
@given(
    st.sampled_from(
        [
            "sim://planar2",
            "emulated://planar2",
            "serial:///dev/ttyJL0",
            "serial://loop://",
            "serial://spy://loop://",
            "serial://socket://h:1",
            "bogus://x",
            "sim://",
            "sim://../../x",
            "emulated://x" + "y" * 600,
        ]
    ),
    st.dictionaries(_QUERY_KEYS, _QUERY_VALUES, max_size=4),
)
def test_random_urls_start_nothing_they_should_not(base: str, query: dict) -> None:
    text = "&".join(f"{k}={v}" for k, v in query.items())
    url = f"{base}?{text}" if text else base

    def connect() -> object:
        with (
            mock.patch.object(process.subprocess, "Popen", side_effect=_Started),
            mock.patch("serial.serial_for_url", side_effect=_Started) as opened,
            mock.patch("jointlab.sim.SimRobot", side_effect=_Started),
        ):
            try:
                return jointlab.connect(url)
            except _Started:
                for call in opened.call_args_list:  # no opt-in here: never a spy or a scan
                    assert not call.args[0].startswith(("spy:", "hwgrep:", "alt:", "cp2110:"))
                return "started"
            except LinkError as exc:  # serial_for_url refused: must be ours
                assert isinstance(exc.__cause__ or exc, (_Started, JointLabError)), exc
                return "started"

    loads_or_refuses(connect)


# ------------------------------------------------------------------ reaped after a signal
def _gone(pid: int, patience: float = 60.0) -> bool:
    """True once ``pid`` has exited and been reaped (its ``/proc`` entry is gone)."""
    deadline = time.monotonic() + patience  # a liveness bound, not a measurement
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status")
        if not status.exists():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_the_emulator_child_is_reaped_when_its_parent_is_signalled(signum: int) -> None:
    script = (
        "import time, jointlab\n"
        "robot = jointlab.connect('emulated://planar2?lockstep=1')\n"
        "print(robot.emulator.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        child = int(parent.stdout.readline())  # type: ignore[union-attr]
    finally:
        parent.send_signal(signum)
        parent.wait(60)
        parent.stdout.close()  # type: ignore[union-attr]
    assert _gone(child), f"emulator {child} outlived its parent (signal {signum})"
