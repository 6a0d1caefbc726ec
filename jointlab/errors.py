"""Errors a JointLab user can trigger.

Every exception raised on purpose by JointLab derives from :class:`JointLabError`,
so ``except JointLabError`` catches all of them. Messages name the thing at fault
(file, actuator, field, frame) and what was expected.
"""

from __future__ import annotations


class JointLabError(Exception):
    """Base class of every JointLab error."""


class DescriptionError(JointLabError, ValueError):
    """A robot description (file, dict or URDF) is invalid or cannot be read."""


class ActionError(JointLabError, ValueError):
    """An action has the wrong shape, a non-finite torque or an invalid gain."""


class CommandRefused(JointLabError):
    """A command was not accepted; ``reason`` says why (disarmed, braked, out of limits...)."""

    def __init__(self, message: str, reason: str = "refused") -> None:
        super().__init__(message)
        #: Short machine-readable reason code, e.g. ``"disarmed"`` or ``"out_of_limits"``.
        self.reason = reason


class PackingError(JointLabError, ValueError):
    """Bytes cannot be packed into or unpacked from a wire message."""


class LinkError(JointLabError, ConnectionError):
    """The link to a device failed: timeout, dead link, handshake mismatch or port error."""


class SimulationError(JointLabError, RuntimeError):
    """The physics engine refused a request (e.g. a second GUI world)."""


class ConfigurationError(JointLabError, ValueError):
    """A setting (URL, time step, option) is invalid."""


class MissingExtraError(ConfigurationError, ImportError):
    """A feature needs packages of an optional extra that is not installed (names the extra)."""


class MissingDependencyError(ConfigurationError, ImportError):
    """A runtime dependency is not installed (a partial install): names the package to install."""


class ConfigurationRefused(CommandRefused, ConfigurationError):
    """A robot refused a setting (a configured speed or acceleration).

    The joint is unknown, the value is not a finite number, or it lies outside ``(0, limit]``.

    Both a :class:`CommandRefused` (``reason`` is ``"unknown_joint"``, ``"invalid_value"`` or
    ``"out_of_limits"``, on every backend) and a :class:`ConfigurationError`.
    """


class DeviceFault(JointLabError):
    """A device stopped itself: a servo's protection cut its torque, a host guard tripped.

    When a robot raises it, it has already held its other joints and disarmed; the message
    names the device, the joint, what it reported and the fix.

    Attributes:
        joint: The joint whose device faulted (None: the whole robot).
        device: The device, e.g. ``"servo id 6"``.
        reasons: What it reported (``("overload error",)``, ``("stall",)``).
        bits: The device's raw error bits (0 where it has none).
    """

    def __init__(
        self,
        message: str,
        *,
        joint: str | None = None,
        device: str = "",
        reasons: tuple[str, ...] = (),
        bits: int = 0,
    ) -> None:
        super().__init__(message)
        self.joint = joint
        self.device = device
        self.reasons = tuple(reasons)
        self.bits = int(bits)


class DeviceLost(DeviceFault, LinkError):
    """A device stopped answering for longer than the robot allows (a lost servo)."""


class RobotClosed(CommandRefused):
    """The robot was closed: every call but ``close()`` is refused (``reason`` ``"closed"``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, reason="closed")


#: Longest quotation of a user value in an error message, characters.
QUOTE_LIMIT = 120


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """A bounded ``repr`` of a user value for an error message.

    Containers are abbreviated without building their whole ``repr`` (a YAML alias bomb
    expands to gigabytes of text), and the result is cut to ``limit`` characters with ``...``.
    """
    import reprlib

    shortener = reprlib.Repr()
    shortener.maxlevel = 3
    shortener.maxstring = shortener.maxother = shortener.maxlong = limit
    shortener.maxlist = shortener.maxtuple = shortener.maxdict = shortener.maxset = 6
    try:
        text = shortener.repr(value)
    except Exception:  # a hostile __repr__: name the type instead
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
