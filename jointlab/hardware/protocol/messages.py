"""Fixed-size messages of the JointLab wire protocol: commands, requests and replies.

One frozen dataclass per message; see :mod:`jointlab.hardware.protocol.wire` for what every
message offers (``pack``, ``unpack``, ``size``), :mod:`jointlab.hardware.protocol.table` for
their wire numbers and docs/protocol.md for the byte layouts.
"""

from __future__ import annotations

from jointlab.hardware.protocol.wire import (
    PROTOCOL_VERSION,
    FixedMessage,
    NackReason,
    Reply,
    StopMode,
    WatchdogAction,
    payload,
)

__all__ = [
    "AccelRequest",
    "Ack",
    "ArmRequest",
    "BrakesRequest",
    "CurrentCommand",
    "DisarmRequest",
    "GeometryRequest",
    "HeartbeatRequest",
    "HelloReply",
    "HelloRequest",
    "HomeCommand",
    "Nack",
    "PositionCommand",
    "PowerRequest",
    "SpeedCommand",
    "SpeedRequest",
    "StepRequest",
    "StopRequest",
    "StreamRequest",
    "WatchdogRequest",
]

ECHO = (("ref_class", "B"), ("ref_type", "B"), ("ref_seq", "H"))


# ------------------------------------------------------------------ commands (CMD)
@payload
class PositionCommand(FixedMessage):
    """CMD POS: move one joint to ``position`` (rad or m) at its configured speed."""

    _LAYOUT = (("joint", "i"), ("position", "f"))
    #: Joint index, 0-based in the description's actuator order.
    joint: int
    #: Target position in rad (rotary) or m (linear).
    position: float


@payload
class SpeedCommand(FixedMessage):
    """CMD SPEED: move one joint at ``speed`` (rad/s or m/s)."""

    _LAYOUT = (("joint", "i"), ("speed", "f"))
    #: Joint index.
    joint: int
    #: Speed in rad/s or m/s.
    speed: float


@payload
class HomeCommand(FixedMessage):
    """CMD HOME: move ``joint`` (-1: every joint) to its home position."""

    _LAYOUT = (("joint", "i"),)
    #: Joint index, or -1 for the whole array.
    joint: int = -1


@payload
class CurrentCommand(FixedMessage):
    """CMD CURRENT: drive ``joint`` (-1: every joint) with ``current`` amperes."""

    _LAYOUT = (("joint", "i"), ("current", "f"))
    #: Joint index, or -1 for the whole array.
    joint: int
    #: Motor current in A.
    current: float


# ------------------------------------------------------------------ requests (REQ)
@payload
class PowerRequest(FixedMessage):
    """REQ POWER: switch motor power on or off (off engages brakes and disarms)."""

    _LAYOUT = (("on", "B"),)
    _KINDS = (("on", bool),)
    #: True for power on.
    on: bool


@payload
class BrakesRequest(FixedMessage):
    """REQ BRAKES: engage (True) or release the brakes of actuators that have them."""

    _LAYOUT = (("on", "B"),)
    _KINDS = (("on", bool),)
    #: True to engage the brakes.
    on: bool


@payload
class GeometryRequest(FixedMessage):
    """REQ GET_GEOM: ask for the array geometry; answered by a :class:`GeometryReply`."""


@payload
class SpeedRequest(FixedMessage):
    """REQ SPEED: set the configured speed of ``joint`` for later moves."""

    _LAYOUT = (("joint", "i"), ("speed", "f"))
    #: Joint index.
    joint: int
    #: Configured speed in rad/s or m/s.
    speed: float


@payload
class AccelRequest(FixedMessage):
    """REQ ACCEL: set the configured acceleration of ``joint`` for later moves."""

    _LAYOUT = (("joint", "i"), ("accel", "f"))
    #: Joint index.
    joint: int
    #: Configured acceleration in rad/s² or m/s².
    accel: float


@payload
class HelloRequest(FixedMessage):
    """REQ HELLO: open a session; the layout is the same in every protocol version."""

    _LAYOUT = (("version", "B"),)
    #: The host's protocol version.
    version: int = PROTOCOL_VERSION


@payload
class ArmRequest(FixedMessage):
    """REQ ARM: accept motion commands from now on."""


@payload
class DisarmRequest(FixedMessage):
    """REQ DISARM: refuse motion commands and apply zero torque."""


@payload
class StopRequest(FixedMessage):
    """REQ STOP: replace the current command by holding still (at once or decelerating)."""

    _LAYOUT = (("mode", "B"),)
    _KINDS = (("mode", StopMode),)
    #: :class:`StopMode`.
    mode: StopMode = StopMode.IMMEDIATE


@payload
class HeartbeatRequest(FixedMessage):
    """REQ HEARTBEAT: a link check answered by ACK; it does not feed the watchdog."""


@payload
class WatchdogRequest(FixedMessage):
    """REQ WATCHDOG: configure the command watchdog."""

    _LAYOUT = (("timeout_ms", "H"), ("action", "B"))
    _KINDS = (("action", WatchdogAction),)
    #: Milliseconds without a valid CMD frame before the watchdog engages; 0 disables it.
    timeout_ms: int
    #: :class:`WatchdogAction` taken when it engages.
    action: WatchdogAction = WatchdogAction.HOLD


@payload
class StreamRequest(FixedMessage):
    """REQ STREAM: send DATA STATE every ``period_ticks`` device ticks (0: stop streaming)."""

    _LAYOUT = (("period_ticks", "H"),)
    #: Device ticks between two DATA STATE frames (1 = every tick); 0 stops the stream.
    period_ticks: int


@payload
class StepRequest(FixedMessage):
    """REQ STEP (lockstep devices): run the ticks up to tick ``until``, answer with the state.

    A device in lockstep (virtual-time) mode never ticks on its own clock; the host's
    ``step()`` sends this request and the device runs ``until - tick`` ticks (none if it is
    already there) and answers with the DATA STATE at the end of the last. The target is
    absolute, so the request is idempotent: a host may send it again after a lost reply
    without running the ticks twice. A real-time device answers NACK UNSUPPORTED.
    """

    _LAYOUT = (("until", "Q"),)
    #: Device tick to reach (its tick count: ``time_us * rate_hz / 1e6``).
    until: int


# ------------------------------------------------------------------ replies (ACK, NACK)
@payload
class Ack(Reply, FixedMessage):
    """ACK: the request (or command) identified by the echo was accepted."""

    _LAYOUT = ECHO
    #: Class of the frame answered.
    ref_class: int
    #: Type of the frame answered.
    ref_type: int
    #: Sequence number of the frame answered.
    ref_seq: int


@payload
class Nack(Reply, FixedMessage):
    """NACK: the frame identified by the echo was refused, with a reason."""

    _LAYOUT = (*ECHO, ("reason", "B"), ("detail", "i"))
    _KINDS = (("reason", NackReason),)
    #: Class of the frame refused.
    ref_class: int
    #: Type of the frame refused.
    ref_type: int
    #: Sequence number of the frame refused.
    ref_seq: int
    #: :class:`NackReason`.
    reason: NackReason
    #: The offending joint index, the expected count for BAD_LENGTH, the device's version for
    #: VERSION_MISMATCH; -1 when there is nothing to add.
    detail: int = -1


@payload
class HelloReply(Reply, FixedMessage):
    """ACK HELLO: the device's protocol version, dof, description digest and timing.

    The layout is the same in every protocol version; a device answers every HELLO with it,
    even one of another version, and the host decides whether it can talk to the device.
    """

    _LAYOUT = (
        *ECHO,
        ("version", "B"),
        ("dof", "B"),
        ("rate_hz", "H"),
        ("watchdog_ms", "H"),
        ("stream_period", "H"),
        ("digest", "32s"),
    )
    #: Class of the HELLO answered (REQ).
    ref_class: int
    #: Type of the HELLO answered (HELLO).
    ref_type: int
    #: Sequence number of the HELLO answered.
    ref_seq: int
    #: The device's protocol version.
    version: int
    #: Number of actuators the device drives.
    dof: int
    #: Device tick rate in Hz (1000 for JointLab firmware).
    rate_hz: int
    #: Current watchdog timeout in ms (0: disabled).
    watchdog_ms: int
    #: Current DATA STATE period in device ticks (0: not streaming).
    stream_period: int
    #: SHA-256 of the device's robot description (``description_digest``, as bytes).
    digest: bytes

    @property
    def digest_hex(self) -> str:
        """The digest as the hex string ``jointlab.robots.description_digest`` returns."""
        return self.digest.hex()
