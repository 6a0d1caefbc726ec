"""The message table: every message of the wire protocol, declared once.

Each :class:`Row` says, for one message: its class and type numbers, its name, the codec
class that packs its payload, the reply a device sends when it accepts it, and the name of
the device handler that acts on it. Everything else is derived from :data:`TABLE`:

* the wire numbers on the codec classes (``PositionCommand.msg_type == 1``);
* the type enums (:data:`CmdType`, :data:`ReqType`, :data:`DataType`, :data:`AckType`,
  :data:`NackType`) and the decoder's lookup by ``(class, type)``;
* the host's routing (every ACK and NACK class is a reply, matched to its request by the
  echo; DATA STATE is the state stream) and the device's dispatch (``handler``);
* section 6 of docs/protocol.md (:meth:`MessageTable.markdown`, checked by a test).

Adding a request with a reply is one row here (plus, for a new payload, its codec class),
one device handler and one host method; ``tests/hardware/test_table.py`` proves that every
host-to-device row has a handler in the emulator and a reply the host routes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from jointlab.hardware.protocol.feedback import GeometryReply, StateData
from jointlab.hardware.protocol.messages import (
    AccelRequest,
    Ack,
    ArmRequest,
    BrakesRequest,
    CurrentCommand,
    DisarmRequest,
    GeometryRequest,
    HeartbeatRequest,
    HelloReply,
    HelloRequest,
    HomeCommand,
    Nack,
    PositionCommand,
    PowerRequest,
    SpeedCommand,
    SpeedRequest,
    StepRequest,
    StopRequest,
    StreamRequest,
    WatchdogRequest,
)
from jointlab.hardware.protocol.vectors import (
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
    NJointCommand,
    SetStateRequest,
)
from jointlab.hardware.protocol.wire import Message, MessageClass, Reply

__all__ = [
    "MESSAGE_TYPES",
    "TABLE",
    "TYPE_ENUMS",
    "AckType",
    "CmdType",
    "DataType",
    "MessageTable",
    "NackType",
    "ReqType",
    "Row",
]

CMD, REQ, DATA, ACK, NACK = (
    MessageClass.CMD,
    MessageClass.REQ,
    MessageClass.DATA,
    MessageClass.ACK,
    MessageClass.NACK,
)


@dataclass(frozen=True)
class Row:
    """One message of the protocol."""

    #: Header byte 1.
    msg_class: MessageClass
    #: Header byte 2.
    msg_type: int
    #: Name within its class, as docs/protocol.md writes it (``"POS"``, ``"HELLO"``).
    name: str
    #: The codec class of the payload.
    cls: type[Message]
    #: What a device sends when it accepts a REQ (ACK, ACK GEOMETRY, DATA STATE ...);
    #: ``None`` for a CMD (answered only when refused, by a NACK) and for device messages.
    reply: type[Message] | None = None
    #: Dotted attribute path of the device handler (``"player.position"`` is
    #: ``device.player.position``); ``None`` for device-to-host messages.
    handler: str | None = None
    #: Only devices in lockstep (virtual-time) mode implement it; others NACK UNSUPPORTED.
    lockstep_only: bool = False
    #: One line for the protocol document.
    summary: str = ""

    @property
    def from_host(self) -> bool:
        """True for host-to-device messages (CMD, REQ)."""
        return self.msg_class.from_host

    @property
    def is_reply(self) -> bool:
        """True for ACK and NACK messages (they echo the frame they answer)."""
        return self.msg_class in (ACK, NACK)

    @property
    def reply_text(self) -> str:
        """The reply column of the protocol document."""
        if not self.from_host:
            return "none"
        if self.reply is None:
            return "NACK only if refused"
        reply = TABLE.row_of(self.reply)
        what = reply.msg_class.name
        if reply.name != reply.msg_class.name:
            what += f" {reply.name}"
        return f"{what} (always)" if self.name == "HELLO" else f"{what} or NACK"


class MessageTable:
    """The rows of the protocol, with the lookups derived from them.

    Raises:
        TypeError: two rows share wire numbers or a codec class, a reply is not a
            device-to-host row, a host-to-device row has no handler, or an ACK/NACK codec
            class does not start with the echo (programming errors, caught at import).
    """

    def __init__(self, rows: tuple[Row, ...]) -> None:
        self.rows = rows
        self._by_number: dict[tuple[int, int], Row] = {}
        self._by_class: dict[type[Message], Row] = {}
        for row in rows:
            key = (int(row.msg_class), int(row.msg_type))
            if key in self._by_number:
                raise TypeError(
                    f"{row.cls.__name__} reuses the wire numbers {key} of "
                    f"{self._by_number[key].cls.__name__}"
                )
            if row.cls in self._by_class:
                raise TypeError(f"{row.cls.__name__} appears twice in the message table")
            if row.from_host and not row.handler:
                raise TypeError(f"{row.cls.__name__} is sent to the device but has no handler")
            if row.is_reply and not issubclass(row.cls, Reply):
                raise TypeError(f"{row.cls.__name__} is a reply but does not echo its request")
            self._by_number[key] = row
            self._by_class[row.cls] = row
        for row in rows:
            if row.reply is not None and (
                row.reply not in self._by_class or self._by_class[row.reply].from_host
            ):
                raise TypeError(
                    f"{row.cls.__name__}'s reply {row.reply.__name__} is not a "
                    "device-to-host message of the table"
                )

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def find(self, msg_class: int, msg_type: int) -> Row | None:
        """The row with these wire numbers, or None."""
        return self._by_number.get((int(msg_class), int(msg_type)))

    def row_of(self, cls: type[Message]) -> Row:
        """The row of a codec class (``KeyError`` if it is not in the table)."""
        return self._by_class[cls]

    def of_class(self, msg_class: MessageClass) -> tuple[Row, ...]:
        """The rows of one message class, in table order."""
        return tuple(row for row in self.rows if row.msg_class is msg_class)

    def type_enum(self, msg_class: MessageClass, name: str) -> type[enum.IntEnum]:
        """An ``IntEnum`` of the type numbers of one class, named after the rows."""
        members = {row.name: row.msg_type for row in self.of_class(msg_class)}
        return enum.IntEnum(name, members, module=__name__)  # type: ignore[return-value]

    def describe(self, nack: Nack) -> str:
        """A sentence for an exception message: the refused frame (by name) and the reason."""
        row = self.find(nack.ref_class, nack.ref_type)
        if row is None:
            what = f"class {nack.ref_class} type {nack.ref_type}"
        else:
            what = f"{row.msg_class.name} {row.name}"
        detail = "" if nack.detail == -1 else f" (detail {nack.detail})"
        return f"device refused {what} (seq {nack.ref_seq}): {nack.reason.text}{detail}"

    def markdown(self) -> str:
        """Section 6 of docs/protocol.md: one table line per message."""
        lines = [
            "| class | type | name | payload | direction | reply |",
            "|---|---:|---|---|---|---|",
        ]
        seen: set[MessageClass] = set()
        for row in self.rows:
            kind = (
                row.msg_class.name
                if row.msg_class in seen
                else (f"{row.msg_class.name}={int(row.msg_class)}")
            )
            seen.add(row.msg_class)
            direction = "host → device" if row.from_host else "device → host"
            name = f"{row.name} (lockstep)" if row.lockstep_only else row.name
            lines.append(
                f"| {kind} | {row.msg_type} | {name} | {row.cls.SIZE_TEXT} | "
                f"{direction} | {row.reply_text} |"
            )
        return "\n".join(lines)


#: Every message of the protocol, in document order. Types 1-7 of CMD, 1-5 of REQ and 1 of
#: DATA are Player actarray's numbers; ACK types are numbered after the request they answer.
TABLE = MessageTable(
    (
        Row(
            CMD,
            1,
            "POS",
            PositionCommand,
            handler="player.position",
            summary="move one joint to a position",
        ),
        Row(
            CMD,
            2,
            "MULTI_POS",
            MultiPositionCommand,
            handler="player.multi_position",
            summary="move every joint to a position",
        ),
        Row(
            CMD,
            3,
            "SPEED",
            SpeedCommand,
            handler="player.speed",
            summary="move one joint at a speed",
        ),
        Row(
            CMD,
            4,
            "MULTI_SPEED",
            MultiSpeedCommand,
            handler="player.multi_speed",
            summary="move every joint at a speed",
        ),
        Row(
            CMD,
            5,
            "HOME",
            HomeCommand,
            handler="player.home",
            summary="move one joint, or all, home",
        ),
        Row(
            CMD,
            6,
            "CURRENT",
            CurrentCommand,
            handler="player.current",
            summary="drive one joint, or all, with a motor current",
        ),
        Row(
            CMD,
            7,
            "MULTI_CURRENT",
            MultiCurrentCommand,
            handler="player.multi_current",
            summary="drive every joint with a motor current",
        ),
        Row(CMD, 16, "NJOINT", NJointCommand, handler="njoint", summary="a whole NJointAction"),
        Row(REQ, 1, "POWER", PowerRequest, Ack, "power", summary="motor power on or off"),
        Row(REQ, 2, "BRAKES", BrakesRequest, Ack, "brakes", summary="engage or release brakes"),
        Row(
            REQ,
            3,
            "GET_GEOM",
            GeometryRequest,
            GeometryReply,
            "geometry",
            summary="the array's geometry",
        ),
        Row(
            REQ,
            4,
            "SPEED",
            SpeedRequest,
            Ack,
            "configure_speed",
            summary="configured speed of one joint",
        ),
        Row(
            REQ,
            5,
            "ACCEL",
            AccelRequest,
            Ack,
            "configure_accel",
            summary="configured acceleration of one joint",
        ),
        Row(REQ, 16, "HELLO", HelloRequest, HelloReply, "hello", summary="open a session"),
        Row(REQ, 17, "ARM", ArmRequest, Ack, "arm", summary="accept motion commands"),
        Row(REQ, 18, "DISARM", DisarmRequest, Ack, "disarm", summary="refuse motion commands"),
        Row(REQ, 19, "STOP", StopRequest, Ack, "stop", summary="hold still, now or decelerating"),
        Row(REQ, 20, "HEARTBEAT", HeartbeatRequest, Ack, "heartbeat", summary="link check"),
        Row(
            REQ,
            21,
            "WATCHDOG",
            WatchdogRequest,
            Ack,
            "watchdog",
            summary="configure the command watchdog",
        ),
        Row(REQ, 22, "STREAM", StreamRequest, Ack, "stream", summary="DATA STATE period"),
        Row(
            REQ,
            23,
            "STEP",
            StepRequest,
            StateData,
            "step",
            lockstep_only=True,
            summary="run ticks now, answer with the state",
        ),
        Row(
            REQ,
            24,
            "SET_STATE",
            SetStateRequest,
            Ack,
            "set_state",
            lockstep_only=True,
            summary="put the joints at a position and velocity",
        ),
        Row(DATA, 1, "STATE", StateData, summary="the state at the end of a tick"),
        Row(ACK, 0, "ACK", Ack, summary="a request was carried out"),
        Row(ACK, 3, "GEOMETRY", GeometryReply, summary="reply to GET_GEOM"),
        Row(ACK, 16, "HELLO", HelloReply, summary="reply to HELLO"),
        Row(NACK, 0, "NACK", Nack, summary="a command or request was refused"),
    )
)

for _row in TABLE:
    _row.cls.msg_class = _row.msg_class
    _row.cls.msg_type = _row.msg_type

#: Types of class CMD (1-7: Player actarray command numbers).
CmdType = TABLE.type_enum(CMD, "CmdType")
#: Types of class REQ (1-5: Player actarray request numbers).
ReqType = TABLE.type_enum(REQ, "ReqType")
#: Types of class DATA (Player's DATA STATE number).
DataType = TABLE.type_enum(DATA, "DataType")
#: Types of class ACK, numbered as the request they answer (0: the plain ACK).
AckType = TABLE.type_enum(ACK, "AckType")
#: Types of class NACK.
NackType = TABLE.type_enum(NACK, "NackType")
#: Header byte 2's enum for each message class.
TYPE_ENUMS: dict[int, type[enum.IntEnum]] = {
    CMD: CmdType,
    REQ: ReqType,
    DATA: DataType,
    ACK: AckType,
    NACK: NackType,
}
#: Every codec class by ``(msg_class, msg_type)``.
MESSAGE_TYPES: dict[tuple[int, int], type[Message]] = {
    (int(row.msg_class), row.msg_type): row.cls for row in TABLE
}
