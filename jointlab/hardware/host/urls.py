"""The ``serial://`` and ``emulated://`` schemes of :func:`jointlab.connect`.

* ``serial://DEVICE_OR_PYSERIAL_URL?baud=1000000&robot=NAME_OR_PATH``: a
  :class:`~jointlab.hardware.host.robot.SerialRobot` on a device path
  (``serial:///dev/ttyUSB0``) or any pyserial URL (``serial://socket://127.0.0.1:7000``,
  ``serial://rfc2217://host:4000``). Of pyserial's URL handlers, ``socket://`` and
  ``rfc2217://`` (network serial bridges) and ``loop://`` (tests) are accepted, with the
  query keys pyserial documents for them (:data:`PYSERIAL_HANDLERS`), which are handed back
  to pyserial (``serial://rfc2217://host:4000?ign_set_control``); other keys are errors.
  Handlers that write files or scan devices (``spy://``, ``hwgrep://``, ``alt://``,
  ``cp2110://``) are refused unless the *code* opts in with
  ``connect(url, allow_handlers={"spy"})``: a URL from a configuration file cannot.
  Without ``robot`` the description is found from the device's digest.
  ``lockstep=1`` connects to an emulator started with ``--lockstep``.
* ``emulated://NAME_OR_PATH?lockstep=0&seed=0&rate=1000&watchdog_ms=100&stream_period=1``:
  starts an :class:`~jointlab.hardware.emulator.process.EmulatorProcess` for that robot and
  connects to it through its pseudo-terminal (with ``tcp=PORT``, 0 for any, through
  ``socket://127.0.0.1:PORT``; with ``fifo=1``, under SCHED_FIFO scheduling if granted).
  ``lockstep=1`` runs it in virtual time: ``step()`` asks for the ticks, so runs are
  reproducible and independent of the machine's load. The robot is an
  :class:`EmulatedRobot`, whose ``close()`` (or its garbage collection) also stops the
  emulator. ``device=firmware`` runs the reference firmware (``firmware/``) in
  ``qemu-system-arm`` instead, JointLab's physics as its plant (:func:`connect_firmware`,
  docs/firmware.md): a :class:`FirmwareRobot`.

Both accept ``timeout`` (request timeout, s), ``dead_ms`` (wall-clock silence before the link
is dead) and ``allow_digest_mismatch`` in the query, and any ``SerialRobot`` keyword as an
option of ``connect``; ``emulated://`` also takes ``faults=Faults(...)`` as an option.
:func:`link_settings` and :func:`merge_options` are shared with other serial backends.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from jointlab.connection import query_bool, query_positive, query_range
from jointlab.errors import ConfigurationError, quote
from jointlab.hardware.emulator.process import EmulatorProcess
from jointlab.hardware.host.health import DEFAULT_DEAD_MS, DEFAULT_REQUEST_TIMEOUT
from jointlab.hardware.host.robot import SerialRobot
from jointlab.robots import load_robot

if TYPE_CHECKING:
    from jointlab.connection import RobotURL
    from jointlab.hardware.emulator.qemu import FirmwareDevice
    from jointlab.robots.description import RobotDescription

__all__ = [
    "EmulatedRobot",
    "FirmwareRobot",
    "connect_emulated_device",
    "connect_firmware",
    "connect_serial",
    "default_dead_ms",
    "link_settings",
    "merge_options",
]

#: pyserial URL handler -> the query keys pyserial documents for it (value check or None).
PYSERIAL_HANDLERS: dict[str, dict[str, Any]] = {
    "socket": {"logging": ("debug", "info", "warning", "error")},
    "rfc2217": {
        "logging": ("debug", "info", "warning", "error"),
        "ign_set_control": None,
        "poll_modem": None,
        "timeout": query_positive,
    },
    "loop": {"logging": ("debug", "info", "warning", "error")},
}
#: Handlers that write files, scan or load other devices: need ``allow_handlers``.
OPT_IN_HANDLERS = ("spy", "hwgrep", "alt", "cp2110")
#: Emulator URL keys -> (converter, default); each range is checked here, host side.
EMULATOR_KEYS: dict[str, tuple[Any, Any]] = {
    "seed": (query_range(0, 2**32 - 1, integer=True), 0),
    "rate": (query_range(1, 65535, integer=True), 1000),
    "watchdog_ms": (query_range(0, 65535, integer=True), 100),
    "tcp": (query_range(0, 65535, integer=True), None),
    "stream_period": (query_range(1, 65535, integer=True), None),
}
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


def merge_options(
    url: RobotURL, settings: dict[str, Any], options: dict[str, Any]
) -> dict[str, Any]:
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
    allowed = options.pop("allow_handlers", ())
    if "://" in port:  # a pyserial URL: its documented query options pass through
        extra = _pyserial_query(url, port.split("://", 1)[0].lower(), allowed)
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


def _pyserial_query(url: RobotURL, handler: str, allowed: Any) -> list[str]:
    """The query items handed to pyserial's ``handler``; refuses what it must not get."""
    if handler in OPT_IN_HANDLERS:
        if handler not in set(allowed):
            raise ConfigurationError(
                f"{url.url}: pyserial handler '{handler}://' writes files or scans devices; "
                f"pass connect(..., allow_handlers={{{handler!r}}}) to use it"
            )
        keys = {k: None for k in url.query if k not in url._taken}
    elif handler in PYSERIAL_HANDLERS:
        keys = PYSERIAL_HANDLERS[handler]
    else:
        raise ConfigurationError(
            f"{url.url}: unknown pyserial handler {quote(handler + '://', 60)}; expected a "
            f"device path or one of {[h + '://' for h in PYSERIAL_HANDLERS]}"
        )
    extra = []
    for key, check in keys.items():
        if key not in url.query:
            continue
        value = url.take(key, str, "")
        if isinstance(check, tuple) and value not in check:
            raise ConfigurationError(
                f"{url.url}: query parameter {key!r} = {quote(value, 60)} is invalid: expected "
                f"one of {list(check)}"
            )
        if callable(check):
            url.take(key, check, None)
        extra.append(key if value == "" else f"{key}={value}")
    return extra


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


#: Seconds an emulated device's handshake and first state may take (``serial://``: 5 s).
EMULATED_CONNECT_TIMEOUT = 30.0


def connect_emulated_device(
    url: RobotURL, description: RobotDescription, options: dict[str, Any]
) -> EmulatedRobot:
    """``emulated://`` of JointLab's own device emulator (the protocol of docs/protocol.md).

    The scheme's factory is :func:`jointlab.hardware.schemes.emulated.connect_emulated`, which
    picks this device, the firmware or the robot's servo bus.
    """
    given = {key: url.take(key, *EMULATOR_KEYS[key]) for key in EMULATOR_KEYS}
    emulator_settings: dict[str, Any] = {
        "seed": given["seed"],
        "rate_hz": given["rate"],
        "watchdog_ms": given["watchdog_ms"],
        "tcp_port": given["tcp"],
        "fifo": url.take("fifo", query_bool, False),
    }
    settings = link_settings(url)
    stream_period = given["stream_period"]
    url.check_all_taken()
    for key in EMULATOR_OPTIONS:
        if key in options:
            emulator_settings[key] = options.pop(key)
    stream_period = options.pop("stream_period", stream_period)
    settings = merge_options(url, settings, options)
    # the device is our own child process: on a machine with both cores busy its start-up
    # (PyBullet, the first ticks) is slow, not dead
    settings.setdefault("connect_timeout", EMULATED_CONNECT_TIMEOUT)
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


#: ``emulated://...?device=firmware``: keys and options of the Python emulator it refuses.
FIRMWARE_REFUSED = ("rate", "tcp", "fifo", "watchdog_ms", "faults", "rate_hz", "tcp_port")


class FirmwareRobot(SerialRobot):
    """A :class:`SerialRobot` on the reference firmware in QEMU; ``close()`` stops QEMU.

    Args:
        device: A started :class:`~jointlab.hardware.emulator.qemu.FirmwareDevice`.
        description: The robot the firmware was built for.
        **options: :class:`SerialRobot` keyword arguments.
    """

    def __init__(self, device: FirmwareDevice, description: Any, **options: Any) -> None:
        #: The QEMU process and its plant server (``.process``, ``.plant``).
        self.firmware = device
        options.setdefault("lockstep", device.lockstep)
        super().__init__(device.path, description, on_close=device.close, **options)


def connect_firmware(url: RobotURL, description: Any, options: dict[str, Any]) -> FirmwareRobot:
    """``emulated://NAME?device=firmware&lockstep=0&seed=0&stream_period=N``.

    The reference firmware's PIL build in ``qemu-system-arm``, JointLab's physics as its
    plant (:mod:`jointlab.hardware.emulator.qemu`); the host side is the unchanged
    :class:`SerialRobot`. The tick rate, watchdog and link are the firmware's own, so the
    Python emulator's ``rate``, ``watchdog_ms``, ``tcp``, ``fifo`` and ``faults`` are refused.
    """
    from jointlab.hardware.emulator.qemu import FirmwareDevice

    for key in FIRMWARE_REFUSED:
        if key in url.query or key in options:
            raise ConfigurationError(
                f"{url.url}: {key!r} is an option of the Python emulator; the firmware "
                "device (device=firmware) takes seed, lockstep, stream_period and the "
                "SerialRobot keys"
            )
    if description.bus is not None and url.query.get("bus", "jointlab") != "jointlab":
        raise ConfigurationError(
            f"{url.url}: device=firmware speaks JointLab's protocol; add bus=jointlab"
        )
    url.take("bus", str, "jointlab")
    seed = url.take("seed", *EMULATOR_KEYS["seed"])
    stream_period = url.take("stream_period", *EMULATOR_KEYS["stream_period"])
    settings = link_settings(url)
    url.check_all_taken()
    seed = options.pop("seed", seed)
    stream_period = options.pop("stream_period", stream_period)
    settings = merge_options(url, settings, options)
    settings.setdefault("connect_timeout", EMULATED_CONNECT_TIMEOUT)
    if stream_period is not None:
        settings["stream_period"] = stream_period
    device = FirmwareDevice(description, lockstep=settings["lockstep"], seed=seed)
    try:
        return FirmwareRobot(device, description, **settings)
    except TypeError as exc:
        device.close()
        raise ConfigurationError(f"{url.url}: invalid option for SerialRobot: {exc}") from exc
    except BaseException:
        device.close()
        raise
