"""The ``serial://`` and ``emulated://`` schemes of :func:`jointlab.connect`.

* ``serial://DEVICE_OR_PYSERIAL_URL?baud=1000000&robot=NAME_OR_PATH``: a
  :class:`~jointlab.hardware.host.robot.SerialRobot` on a device path
  (``serial:///dev/ttyUSB0``) or any pyserial URL (``serial://socket://127.0.0.1:7000``,
  ``serial://rfc2217://host:4000``). Query keys JointLab does not know are handed back to a
  pyserial URL (``serial://rfc2217://host:4000?ign_set_control``); for a device path they
  are errors. Without ``robot`` the description is found from the device's digest.
  ``lockstep=1`` connects to an emulator started with ``--lockstep``.
* ``emulated://NAME_OR_PATH?lockstep=0&seed=0&rate=1000&watchdog_ms=100&stream_period=1``:
  starts an :class:`~jointlab.hardware.emulator.process.EmulatorProcess` for that robot and
  connects to it through its pseudo-terminal (with ``tcp=PORT``, 0 for any, through
  ``socket://127.0.0.1:PORT``; with ``fifo=1``, under SCHED_FIFO scheduling if granted).
  ``lockstep=1`` runs it in virtual time: ``step()`` asks for the ticks, so runs are
  reproducible and independent of the machine's load. The robot is an
  :class:`EmulatedRobot`, whose ``close()`` (or its garbage collection) also stops the
  emulator.

Both accept ``timeout`` (request timeout, s), ``dead_ms`` (wall-clock silence before the link
is dead) and ``allow_digest_mismatch`` in the query, and any ``SerialRobot`` keyword as an
option of ``connect``; ``emulated://`` also takes ``faults=Faults(...)`` as an option.
:func:`link_settings` and :func:`merge_options` are shared with other serial backends.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from jointlab.connection import query_bool, query_positive
from jointlab.errors import ConfigurationError
from jointlab.hardware.emulator.process import EmulatorProcess
from jointlab.hardware.host.health import DEFAULT_DEAD_MS, DEFAULT_REQUEST_TIMEOUT
from jointlab.hardware.host.robot import SerialRobot
from jointlab.robots import load_robot

if TYPE_CHECKING:
    from jointlab.connection import RobotURL

__all__ = ["EmulatedRobot", "connect_emulated", "connect_serial", "default_dead_ms",
           "link_settings", "merge_options"]  # fmt: skip

#: ``connect`` options that go to the emulator rather than to the SerialRobot.
EMULATOR_OPTIONS = ("faults", "seed", "rate_hz", "watchdog_ms", "tcp_port", "fifo")
#: URL query key -> the SerialRobot keyword it sets.
_KEYWORDS = {"timeout": "request_timeout", "baud": "baudrate", "robot": "description"}


def default_dead_ms() -> float:
    """``dead_ms`` when a URL gives none: ``JOINTLAB_DEAD_MS`` if set, else 1000.

    Raise it on a machine that can deschedule an emulator process (or a USB host) for
    longer than a second, e.g. a test machine running other jobs.

    Raises:
        ConfigurationError: ``JOINTLAB_DEAD_MS`` is not a positive number.
    """
    text = os.environ.get("JOINTLAB_DEAD_MS")
    if text is None:
        return DEFAULT_DEAD_MS
    try:
        return query_positive(text)
    except ValueError as exc:
        raise ConfigurationError(
            f"JOINTLAB_DEAD_MS must be a positive number of milliseconds, got {text!r}"
        ) from exc


def link_settings(url: RobotURL) -> dict[str, Any]:
    """The link keywords every serial backend takes from a URL query.

    ``timeout`` (request timeout, s), ``dead_ms`` (ms of silence before the link is dead;
    default :func:`default_dead_ms`), ``allow_digest_mismatch`` and ``lockstep``.
    """
    return {
        "request_timeout": url.take("timeout", query_positive, DEFAULT_REQUEST_TIMEOUT),
        "dead_ms": url.take("dead_ms", query_positive, default_dead_ms()),
        "allow_digest_mismatch": url.take("allow_digest_mismatch", query_bool, False),
        "lockstep": url.take("lockstep", query_bool, False),
    }


def merge_options(url: RobotURL, settings: dict[str, Any], options: dict[str, Any]
                  ) -> dict[str, Any]:  # fmt: skip
    """``settings`` from the URL plus ``connect``'s keyword ``options``.

    A key given both ways is a :class:`~jointlab.errors.ConfigurationError` naming the URL.
    """
    for key, value in options.items():
        if key in settings and any(_KEYWORDS.get(q, q) == key for q in url.query):
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
    settings = link_settings(url)
    settings["baudrate"] = url.take("baud", int, 1_000_000)
    if "://" in port:  # a pyserial URL: its own query options pass through
        extra = [k if v == "" else f"{k}={v}" for k, v in url.query.items() if k not in url._taken]
        url._taken.update(url.query)
        if extra:
            port = f"{port}?{'&'.join(extra)}"
    url.check_all_taken()
    settings = merge_options(url, settings, options)
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
        options.setdefault("lockstep", emulator.lockstep)
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
        "tcp_port": url.take("tcp", int, None),
        "fifo": url.take("fifo", query_bool, False),
    }
    settings = link_settings(url)
    stream_period = url.take("stream_period", int, None)
    url.check_all_taken()
    for key in EMULATOR_OPTIONS:
        if key in options:
            emulator_settings[key] = options.pop(key)
    stream_period = options.pop("stream_period", stream_period)
    settings = merge_options(url, settings, options)
    emulator_settings["lockstep"] = settings["lockstep"]
    if stream_period is not None:  # the emulator streams at it; lockstep steps take it
        emulator_settings["stream_period"] = stream_period
        settings["stream_period"] = stream_period
    emulator = EmulatorProcess(description, **emulator_settings)
    try:
        return EmulatedRobot(emulator, description, **settings)
    except TypeError as exc:
        emulator.close()
        raise ConfigurationError(f"{url.url}: invalid option for SerialRobot: {exc}") from exc
    except BaseException:
        emulator.close()
        raise
