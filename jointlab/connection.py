"""``jointlab.connect(url)``: build a :class:`~jointlab.contract.Robot` from a URL.

A URL is ``SCHEME://TARGET?key=value&...``. Each scheme has a factory in a small registry:

* ``sim://NAME_OR_PATH?dt=0.001&control_dt=0.001&gui=0&seed=0&engine=pybullet``: a
  :class:`~jointlab.sim.SimRobot`. ``NAME_OR_PATH`` is a built-in robot name (``sim://arm6``),
  an absolute path (``sim:///home/me/robot.yaml``) or a relative one
  (``sim://robots/my.yaml``); ``engine`` is ``pybullet`` (default) or ``mujoco``;
  ``gain_check=warn`` runs gains that fail the explicit-PD check (docs/robot-files.md);
* ``serial://DEVICE_OR_PYSERIAL_URL?baud=1000000&robot=NAME``: a
  :class:`~jointlab.hardware.SerialRobot` on a device path (``serial:///dev/ttyUSB0``) or any
  pyserial URL (``serial://socket://127.0.0.1:7000``);
* ``emulated://NAME_OR_PATH?seed=0&watchdog_ms=100&stream_period=1``: starts the device
  emulator in its own process and connects to it through its pseudo-terminal; for a robot
  with a ``bus`` section, its emulated servo bus (``?bus=jointlab`` for the device emulator);
  ``?device=firmware`` runs the reference firmware in ``qemu-system-arm`` instead
  (docs/firmware.md);
* ``dynamixel:///dev/ttyUSB0?robot=koch``, ``feetech:///dev/ttyACM0?robot=so101``: a servo
  arm through the vendor's SDK (:mod:`jointlab.hardware.servo_host.urls`).

The serial schemes live in :mod:`jointlab.hardware.host.urls` (see there for every query key).
Further schemes are added with :func:`register_scheme`, or as a ``"module:function"`` entry
in ``_SCHEMES`` so the module is imported only when used.

A factory receives the parsed :class:`RobotURL` and the keyword options of ``connect`` and
returns a ``Robot``; it reads its query values with :meth:`RobotURL.take`, and ``connect``
rejects any query key the factory did not take.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import unquote, unquote_plus

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError, quote

#: Longest robot URL, characters.
MAX_URL_CHARS = 512
#: Largest seed a URL may give (any 64-bit unsigned value).
MAX_SEED = 2**64 - 1

__all__ = [
    "RobotURL",
    "connect",
    "parse_url",
    "query_range",
    "register_scheme",
    "schemes",
    "watch_connections",
]

#: Told of every robot :func:`connect` builds (``jointlab ... --view`` uses it).
_CONNECTION_LISTENERS: list[Callable[[str, Robot], None]] = []

T = TypeVar("T")
Factory = Callable[["RobotURL", dict[str, Any]], Robot]

#: Scheme name -> factory, or ``"module:function"`` imported on first use.
_SCHEMES: dict[str, Factory | str] = {
    "sim": "jointlab.connection:_connect_sim",
    "serial": "jointlab.hardware.host.urls:connect_serial",
    "emulated": "jointlab.hardware.schemes.emulated:connect_emulated",
    "dynamixel": "jointlab.hardware.servo_host.urls:connect_bus",
    "feetech": "jointlab.hardware.servo_host.urls:connect_bus",
}


@dataclass
class RobotURL:
    """A parsed robot URL."""

    #: The URL as given.
    url: str
    #: Scheme, lower case (``"sim"``).
    scheme: str
    #: Everything between ``://`` and ``?``, percent-decoded (a robot name, a path, a device).
    target: str
    #: Query parameters (raw strings).
    query: dict[str, str]
    #: Everything after ``://``, undecoded, for schemes with their own syntax.
    rest: str
    _taken: set[str] = field(default_factory=set, repr=False)

    def take(self, key: str, convert: Callable[[str], T], default: T) -> T:
        """Query value ``key`` converted by ``convert``, or ``default`` when absent.

        Raises:
            ConfigurationError: the value cannot be converted (names the URL and the key).
        """
        self._taken.add(key)
        if key not in self.query:
            return default
        raw = self.query[key]
        try:
            return convert(raw)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ConfigurationError(
                f"{self.url}: query parameter {key!r} = {raw!r} is invalid: {exc}"
            ) from None

    def check_all_taken(self) -> None:
        """Raise if the query holds keys no one asked for."""
        unknown = sorted(set(self.query) - self._taken)
        if unknown:
            raise ConfigurationError(
                f"{self.url}: unknown query parameter {unknown[0]!r} for scheme "
                f"{self.scheme!r}; expected one of {sorted(self._taken)}"
            )


def parse_url(url: str) -> RobotURL:
    """Split ``url`` into scheme, target and query (values are not converted here)."""
    if not isinstance(url, str) or "://" not in url:
        raise ConfigurationError(
            f"{quote(url)} is not a robot URL; expected SCHEME://TARGET, e.g. 'sim://arm6'"
        )
    if len(url) > MAX_URL_CHARS:
        raise ConfigurationError(
            f"{quote(url)}: robot URL of {len(url)} characters, at most {MAX_URL_CHARS}"
        )
    if "\0" in url:
        raise ConfigurationError(f"{quote(url)}: a robot URL cannot hold a NUL character")
    scheme, rest = url.split("://", 1)
    target, _, query_text = rest.partition("?")
    query: dict[str, str] = {}
    if query_text:
        pairs = []
        for part in query_text.split("&"):  # a bare ``key`` (a pyserial flag) is ``key=``
            key, _, value = part.partition("=")
            if not key:
                raise ConfigurationError(f"{url}: malformed query string {query_text!r}")
            pairs.append((unquote_plus(key), unquote_plus(value)))
        for key, value in pairs:
            if key in query:
                raise ConfigurationError(f"{url}: query parameter {key!r} is given twice")
            query[key] = value
    return RobotURL(url=url, scheme=scheme.lower(), target=unquote(target), query=query, rest=rest)


def register_scheme(name: str, factory: Factory | str, *, replace: bool = False) -> None:
    """Add a URL scheme: ``factory(url: RobotURL, options: dict) -> Robot``.

    ``factory`` may be a ``"module:function"`` string, imported on first use.
    """
    key = name.lower()
    if key in _SCHEMES and not replace:
        raise ConfigurationError(f"URL scheme {key!r} is already registered")
    _SCHEMES[key] = factory


def schemes() -> list[str]:
    """Names of the registered URL schemes."""
    return sorted(_SCHEMES)


def _factory(parsed: RobotURL) -> Factory:
    entry = _SCHEMES.get(parsed.scheme)
    if entry is None:
        raise ConfigurationError(
            f"{parsed.url}: unknown scheme {parsed.scheme!r}; known schemes: {schemes()}"
        )
    if isinstance(entry, str):
        module_name, _, attribute = entry.partition(":")
        entry = getattr(importlib.import_module(module_name), attribute)
        _SCHEMES[parsed.scheme] = entry
    return entry


def connect(url: str, **options: Any) -> Robot:
    """Build the robot that ``url`` names; ``options`` go to the backend's constructor.

    Examples: ``connect("sim://arm6?control_dt=0.01")``,
    ``connect("sim:///home/me/robot.yaml", randomization=Randomization(...))``.

    Raises:
        ConfigurationError: unknown scheme, malformed URL, unknown or invalid query value.
        DescriptionError: unknown robot name or unreadable robot file (names the path).
    """
    parsed = parse_url(url)
    robot = _factory(parsed)(parsed, dict(options))
    for listener in tuple(_CONNECTION_LISTENERS):
        listener(url, robot)
    return robot


def watch_connections(listener: Callable[[str, Robot], None]) -> Callable[[], None]:
    """Call ``listener(url, robot)`` for every robot :func:`connect` builds from now on.

    Returns the function that stops it. Meant for tools that follow whatever a command
    connects (the live view of ``--view``); a listener must not drive the robot.
    """
    _CONNECTION_LISTENERS.append(listener)

    def stop() -> None:
        if listener in _CONNECTION_LISTENERS:
            _CONNECTION_LISTENERS.remove(listener)

    return stop


# --------------------------------------------------------------------------- sim://
def query_bool(text: str) -> bool:
    """A URL query flag: 1/0, true/false, yes/no, on/off (empty is false)."""
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ValueError("expected 0/1, true/false, yes/no or on/off")


def query_range(
    low: float, high: float, *, integer: bool = False, open_low: bool = False
) -> Callable[[str], Any]:
    """A converter of URL query values to a number in ``[low, high]`` (``(low, high]``).

    Args:
        low: Smallest value.
        high: Largest value.
        integer: Accept whole numbers only (returns an ``int``).
        open_low: Exclude ``low`` itself.
    """
    left = "(" if open_low else "["
    kind = "a whole number" if integer else "a number"
    if open_low and low == 0:
        kind = kind.replace("a ", "a positive ", 1)
    shown = f"{left}{low}, {high}]" if integer else f"{left}{low:g}, {high:g}]"
    expected = f"expected {kind} in {shown}"

    def convert(text: str) -> Any:
        try:
            value = int(text, 10) if integer else float(text)
        except ValueError:
            raise ValueError(expected) from None
        if not (low < value if open_low else low <= value) or not value <= high:
            raise ValueError(expected)
        return value

    return convert


def query_positive(text: str) -> float:
    """A positive finite number from a URL query value."""
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise ValueError("expected a positive finite number")
    return value


def _connect_sim(url: RobotURL, options: dict[str, Any]) -> Robot:
    from jointlab.robots import load_robot
    from jointlab.sim import SimRobot
    from jointlab.sim.engine import check_engine

    if not url.target:
        raise ConfigurationError(f"{url.url}: no robot given; expected sim://NAME_OR_PATH")
    settings: dict[str, Any] = {
        "dt": url.take("dt", query_range(0.0, 1.0, open_low=True), None),
        "control_dt": url.take("control_dt", query_range(0.0, 10.0, open_low=True), None),
        "gui": url.take("gui", query_bool, False),
        "seed": url.take("seed", query_range(0, MAX_SEED, integer=True), 0),
        "engine": url.take("engine", check_engine, None),
        "gain_check": url.take("gain_check", str, "error"),
    }
    url.check_all_taken()
    for key, value in options.items():
        if key in settings and key in url.query:
            raise ConfigurationError(
                f"{url.url}: {key!r} is given both in the URL and as an option"
            )
        settings[key] = value
    description = load_robot(url.target)
    try:
        return SimRobot(description, **settings)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{url.url}: {exc}") from exc
    except TypeError as exc:  # an unknown keyword option
        raise ConfigurationError(f"{url.url}: invalid option for SimRobot: {exc}") from exc
