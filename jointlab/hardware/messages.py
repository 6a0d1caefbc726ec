"""Fixed-size messages of the JointLab wire protocol: commands, requests and replies.

One frozen dataclass per message; see :mod:`jointlab.hardware.wire` for what every message
offers (``pack``, ``unpack``, ``size``) and docs/protocol.md for the byte layouts.
"""

from __future__ import annotations

from jointlab.hardware.wire import (
    PROTOCOL_VERSION,
    TYPE_ENUMS,
    AckType,
    CmdType,
    FixedMessage,
    MessageClass,
    NackReason,
    NackType,
    ReplyMixin,
    ReqType,
    StopMode,
    WatchdogAction,
    message,
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
    "StopRequest",
    "StreamRequest",
    "WatchdogRequest",
]

ECHO = (("ref_class", "B"), ("ref_type", "B"), ("ref_seq", "H"))


# ------------------------------------------------------------------ commands (CMD)
@message
class PositionCommand(FixedMessage):
    """CMD POS: move one joint to ``position`` (rad or m) at its configured speed."""

    msg_class = MessageClass.CMD
    msg_type = CmdType.POS
    _LAYOUT = (("joint", "i"), ("position", "f"))
    #: Joint index, 0-based in the description's actuator order.
    joint: int
    #: Target position in rad (rotary) or m (linear).
    position: float


@message
class SpeedCommand(FixedMessage):
    """CMD SPEED: move one joint at ``speed`` (rad/s or m/s)."""

    msg_class = MessageClass.CMD
    msg_type = CmdType.SPEED
    _LAYOUT = (("joint", "i"), ("speed", "f"))
    #: Joint index.
    joint: int
    #: Speed in rad/s or m/s.
    speed: float


@message
class HomeCommand(FixedMessage):
    """CMD HOME: move ``joint`` (-1: every joint) to its home position."""

    msg_class = MessageClass.CMD
    msg_type = CmdType.HOME
    _LAYOUT = (("joint", "i"),)
    #: Joint index, or -1 for the whole array.
    joint: int = -1


@message
class CurrentCommand(FixedMessage):
    """CMD CURRENT: drive ``joint`` (-1: every joint) with ``current`` amperes."""

    msg_class = MessageClass.CMD
    msg_type = CmdType.CURRENT
    _LAYOUT = (("joint", "i"), ("current", "f"))
    #: Joint index, or -1 for the whole array.
    joint: int
    #: Motor current in A.
    current: float


# ------------------------------------------------------------------ requests (REQ)
@message
class PowerRequest(FixedMessage):
    """REQ POWER: switch motor power on or off (off engages brakes and disarms)."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.POWER
    _LAYOUT = (("on", "B"),)
    _KINDS = (("on", bool),)
    #: True for power on.
    on: bool


@message
class BrakesRequest(FixedMessage):
    """REQ BRAKES: engage (True) or release the brakes of actuators that have them."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.BRAKES
    _LAYOUT = (("on", "B"),)
    _KINDS = (("on", bool),)
    #: True to engage the brakes.
    on: bool


@message
class GeometryRequest(FixedMessage):
    """REQ GET_GEOM: ask for the array geometry; answered by a :class:`GeometryReply`."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.GET_GEOM


@message
class SpeedRequest(FixedMessage):
    """REQ SPEED: set the configured speed of ``joint`` for later moves."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.SPEED
    _LAYOUT = (("joint", "i"), ("speed", "f"))
    #: Joint index.
    joint: int
    #: Configured speed in rad/s or m/s.
    speed: float


@message
class AccelRequest(FixedMessage):
    """REQ ACCEL: set the configured acceleration of ``joint`` for later moves."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.ACCEL
    _LAYOUT = (("joint", "i"), ("accel", "f"))
    #: Joint index.
    joint: int
    #: Configured acceleration in rad/s² or m/s².
    accel: float


@message
class HelloRequest(FixedMessage):
    """REQ HELLO: open a session; the layout is the same in every protocol version."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.HELLO
    _LAYOUT = (("version", "B"),)
    #: The host's protocol version.
    version: int = PROTOCOL_VERSION


@message
class ArmRequest(FixedMessage):
    """REQ ARM: accept motion commands from now on."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.ARM


@message
class DisarmRequest(FixedMessage):
    """REQ DISARM: refuse motion commands and apply zero torque."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.DISARM


@message
class StopRequest(FixedMessage):
    """REQ STOP: replace the current command by holding still (at once or decelerating)."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.STOP
    _LAYOUT = (("mode", "B"),)
    _KINDS = (("mode", StopMode),)
    #: :class:`StopMode`.
    mode: StopMode = StopMode.IMMEDIATE


@message
class HeartbeatRequest(FixedMessage):
    """REQ HEARTBEAT: a link check answered by ACK; it does not feed the watchdog."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.HEARTBEAT


@message
class WatchdogRequest(FixedMessage):
    """REQ WATCHDOG: configure the command watchdog."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.WATCHDOG
    _LAYOUT = (("timeout_ms", "H"), ("action", "B"))
    _KINDS = (("action", WatchdogAction),)
    #: Milliseconds without a valid CMD frame before the watchdog engages; 0 disables it.
    timeout_ms: int
    #: :class:`WatchdogAction` taken when it engages.
    action: WatchdogAction = WatchdogAction.HOLD


@message
class StreamRequest(FixedMessage):
    """REQ STREAM: send DATA STATE every ``period_ticks`` device ticks (0: stop streaming)."""

    msg_class = MessageClass.REQ
    msg_type = ReqType.STREAM
    _LAYOUT = (("period_ticks", "H"),)
    #: Device ticks between two DATA STATE frames (1 = every tick); 0 stops the stream.
    period_ticks: int


# ------------------------------------------------------------------ replies (ACK, NACK)
@message
class Ack(ReplyMixin, FixedMessage):
    """ACK: the request (or command) identified by the echo was accepted."""

    msg_class = MessageClass.ACK
    msg_type = AckType.ACK
    _LAYOUT = ECHO
    #: Class of the frame answered.
    ref_class: int
    #: Type of the frame answered.
    ref_type: int
    #: Sequence number of the frame answered.
    ref_seq: int


@message
class Nack(ReplyMixin, FixedMessage):
    """NACK: the frame identified by the echo was refused, with a reason."""

    msg_class = MessageClass.NACK
    msg_type = NackType.NACK
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

    def describe(self) -> str:
        """A sentence for an exception message, naming the refused frame and the reason."""
        try:
            kind = MessageClass(self.ref_class).name
            type_name = TYPE_ENUMS[self.ref_class](self.ref_type).name
        except (KeyError, ValueError):
            kind, type_name = f"class {self.ref_class}", f"type {self.ref_type}"
        detail = "" if self.detail == -1 else f" (detail {self.detail})"
        return f"device refused {kind} {type_name} (seq {self.ref_seq}): {self.reason.text}{detail}"


@message
class HelloReply(ReplyMixin, FixedMessage):
    """ACK HELLO: the device's protocol version, dof, description digest and timing.

    The layout is the same in every protocol version; a device answers every HELLO with it,
    even one of another version, and the host decides whether it can talk to the device.
    """

    msg_class = MessageClass.ACK
    msg_type = AckType.HELLO
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
    #: SHA-256 of the device's robot description (``bytes.fromhex(description.digest)``).
    digest: bytes

    @property
    def digest_hex(self) -> str:
        """The digest as the hex string ``RobotDescription.digest`` returns."""
        return self.digest.hex()
