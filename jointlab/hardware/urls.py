"""The ``serial://`` and ``emulated://`` schemes of :func:`jointlab.connect`.

* ``serial://DEVICE_OR_PYSERIAL_URL?baud=1000000&robot=NAME_OR_PATH``: a
  :class:`~jointlab.hardware.serial_robot.SerialRobot` on a device path
  (``serial:///dev/ttyUSB0``) or any pyserial URL (``serial://socket://127.0.0.1:7000``,
  ``serial://rfc2217://host:4000``). Query keys JointLab does not know are handed back to a
  pyserial URL (``serial://rfc2217://host:4000?ign_set_control``); for a device path they
  are errors. Without ``robot`` the description is found from the device's digest.
* ``emulated://NAME_OR_PATH?seed=0&rate=1000&watchdog_ms=100&stream_period=1``: starts an
  :class:`~jointlab.hardware.emulator.EmulatorProcess` for that robot and connects to it
  through its pseudo-terminal (with ``tcp=PORT``, 0 for any, through
  ``socket://127.0.0.1:PORT``; with ``realtime=1``, under real-time scheduling if granted).
  The robot is an :class:`EmulatedRobot`, whose ``close()`` also stops the emulator.

Both accept ``timeout`` (request timeout, s), ``dead_periods`` and ``allow_digest_mismatch``
in the query, and any ``SerialRobot`` keyword as an option of ``connect``; ``emulated://``
also takes ``faults=Faults(...)`` as an option.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from jointlab.connection import query_bool, query_positive
from jointlab.errors import ConfigurationError
from jointlab.hardware.emulator import EmulatorProcess
from jointlab.hardware.serial_robot import SerialRobot
from jointlab.robots import load_robot

if TYPE_CHECKING:
    from jointlab.connection import RobotURL

__all__ = ["EmulatedRobot", "connect_emulated", "connect_serial"]

#: ``connect`` options that go to the emulator rather than to the SerialRobot.
EMULATOR_OPTIONS = (
    "faults",
    "seed",
    "rate_hz",
    "watchdog_ms",
    "stream_period",
    "tcp_port",
    "realtime",
)


def default_dead_periods() -> int:
    """``dead_periods`` when a URL gives none: ``JOINTLAB_DEAD_PERIODS`` if set, else 50.

    Raise it on a busy machine, where an emulator process (or a USB host) can be
    descheduled for longer than 50 stream periods.
    """
    text = os.environ.get("JOINTLAB_DEAD_PERIODS", "50")
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigurationError(f"JOINTLAB_DEAD_PERIODS must be a whole number >= 1, got {text!r}")
    return value


def _robot_settings(url: RobotURL) -> dict[str, Any]:
    return {
        "request_timeout": url.take("timeout", query_positive, 0.1),
        "dead_periods": url.take("dead_periods", int, default_dead_periods()),
        "allow_digest_mismatch": url.take("allow_digest_mismatch", query_bool, False),
    }


def _merge(url: RobotURL, settings: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    taken = {"timeout": "request_timeout", "baud": "baudrate", "robot": "description"}
    for key, value in options.items():
        if key in settings and any(taken.get(q, q) == key for q in url.query):
            raise ConfigurationError(
                f"{url.url}: {key!r} is given both in the URL and as an option"
            )
        settings[key] = value
    return settings


def connect_serial(url: RobotURL, options: dict[str, Any]) -> SerialRobot:
    """Factory of ``serial://`` (see the module docstring)."""
    port = url.target
    if not port:
        raise ConfigurationError(
            f"{url.url}: no port given; expected serial:///dev/ttyX or serial://socket://HOST:PORT"
        )
    robot = url.take("robot", str, None)
    settings = _robot_settings(url)
    settings["baudrate"] = url.take("baud", int, 1_000_000)
    if "://" in port:  # a pyserial URL: its own query options pass through
        extra = [k if v == "" else f"{k}={v}" for k, v in url.query.items() if k not in url._taken]
        url._taken.update(url.query)
        if extra:
            port = f"{port}?{'&'.join(extra)}"
    url.check_all_taken()
    settings = _merge(url, settings, options)
    description = settings.pop("description", None)
    if description is None and robot is not None:
        description = load_robot(robot)
    try:
        return SerialRobot(port, description, **settings)
    except TypeError as exc:
        raise ConfigurationError(f"{url.url}: invalid option for SerialRobot: {exc}") from exc


class EmulatedRobot(SerialRobot):
    """A :class:`SerialRobot` connected to an emulator it owns; ``close()`` stops it.

    Args:
        emulator: A started :class:`EmulatorProcess` (fault injection via ``.emulator``).
        description: The robot the emulator runs.
        **options: :class:`SerialRobot` keyword arguments.
    """

    def __init__(self, emulator: EmulatorProcess, description: Any, **options: Any) -> None:
        #: The emulator process (``set_faults``, ``stall``, ``report``, ``reset``).
        self.emulator = emulator
        super().__init__(emulator.path, description, on_close=emulator.close, **options)


def connect_emulated(url: RobotURL, options: dict[str, Any]) -> EmulatedRobot:
    """Factory of ``emulated://`` (see the module docstring)."""
    if not url.target:
        raise ConfigurationError(f"{url.url}: no robot given; expected emulated://NAME_OR_PATH")
    description = load_robot(url.target)
    emulator_settings: dict[str, Any] = {
        "seed": url.take("seed", int, 0),
        "rate_hz": url.take("rate", int, 1000),
        "watchdog_ms": url.take("watchdog_ms", int, 100),
        "stream_period": url.take("stream_period", int, 1),
        "tcp_port": url.take("tcp", int, None),
        "realtime": url.take("realtime", query_bool, False),
    }
    settings = _robot_settings(url)
    url.check_all_taken()
    for key in EMULATOR_OPTIONS:
        if key in options:
            emulator_settings[key] = options.pop(key)
    settings = _merge(url, settings, options)
    emulator = EmulatorProcess(description, **emulator_settings)
    try:
        return EmulatedRobot(emulator, description, **settings)
    except TypeError as exc:
        emulator.close()
        raise ConfigurationError(f"{url.url}: invalid option for SerialRobot: {exc}") from exc
    except BaseException:
        emulator.close()
        raise
