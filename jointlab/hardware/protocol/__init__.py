"""The JointLab serial wire protocol: the one import for backends, emulators and tools.

The specification is docs/protocol.md. One concept per module:

* :mod:`~jointlab.hardware.protocol.table`: **the message table**, every message declared
  once (numbers, direction, codec class, reply, device handler); the type enums and lookups
  are derived from it;
* :mod:`~jointlab.hardware.protocol.wire`: constants, value enums, the message base classes;
* :mod:`~jointlab.hardware.protocol.messages`: fixed-size commands, requests, ACK/NACK,
  the HELLO reply;
* :mod:`~jointlab.hardware.protocol.vectors`: MULTI_* commands, NJOINT and SET_STATE
  (float32 vectors);
* :mod:`~jointlab.hardware.protocol.feedback`: DATA STATE and the GET_GEOM reply (packed
  records);
* :mod:`~jointlab.hardware.protocol.framing`: header, CRC-32, COBS, one frame at a time;
* :mod:`~jointlab.hardware.protocol.decoder`: the streaming :class:`FrameDecoder` and its
  :class:`LinkStats`.

Typical use::

    encoder, decoder = FrameEncoder(), FrameDecoder()
    seq, data = encoder.encode(NJointCommand.from_action(action))
    port.write(data)
    for frame in decoder.feed(port.read(port.in_waiting or 1)):
        if isinstance(frame.message, StateData):
            state = frame.message.to_state()
"""

from __future__ import annotations

from jointlab.hardware.protocol.decoder import FrameDecoder, LinkStats
from jointlab.hardware.protocol.feedback import (
    GEOMETRY_DTYPE,
    STATE_DTYPE,
    GeometryReply,
    StateData,
)
from jointlab.hardware.protocol.framing import (
    CRC16_INIT,
    CRC32_RESIDUE,
    HEADER,
    MAX_ENCODED_SIZE,
    MAX_PAYLOAD,
    Frame,
    FrameEncoder,
    Unparsed,
    crc16,
    crc32,
    decode_frame,
    encode_frame,
    frame_body,
)
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
from jointlab.hardware.protocol.table import (
    MESSAGE_TYPES,
    TABLE,
    TYPE_ENUMS,
    AckType,
    CmdType,
    DataType,
    MessageTable,
    NackType,
    ReqType,
    Row,
)
from jointlab.hardware.protocol.vectors import (
    NJOINT_FIELDS,
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
    NJointCommand,
    SetStateRequest,
)
from jointlab.hardware.protocol.wire import (
    FLOAT32_MAX,
    HELLO_FRAME_VERSION,
    MAX_DOF,
    PROTOCOL_VERSION,
    FixedMessage,
    Message,
    MessageClass,
    NackReason,
    PayloadLengthError,
    Reply,
    StopMode,
    WatchdogAction,
)

__all__ = [
    "CRC16_INIT",
    "CRC32_RESIDUE",
    "FLOAT32_MAX",
    "GEOMETRY_DTYPE",
    "HEADER",
    "HELLO_FRAME_VERSION",
    "MAX_DOF",
    "MAX_ENCODED_SIZE",
    "MAX_PAYLOAD",
    "MESSAGE_TYPES",
    "NJOINT_FIELDS",
    "PROTOCOL_VERSION",
    "STATE_DTYPE",
    "TABLE",
    "TYPE_ENUMS",
    "AccelRequest",
    "Ack",
    "AckType",
    "ArmRequest",
    "BrakesRequest",
    "CmdType",
    "CurrentCommand",
    "DataType",
    "DisarmRequest",
    "FixedMessage",
    "Frame",
    "FrameDecoder",
    "FrameEncoder",
    "GeometryReply",
    "GeometryRequest",
    "HeartbeatRequest",
    "HelloReply",
    "HelloRequest",
    "HomeCommand",
    "LinkStats",
    "Message",
    "MessageClass",
    "MessageTable",
    "MultiCurrentCommand",
    "MultiPositionCommand",
    "MultiSpeedCommand",
    "NJointCommand",
    "Nack",
    "NackReason",
    "NackType",
    "PayloadLengthError",
    "PositionCommand",
    "PowerRequest",
    "Reply",
    "ReqType",
    "Row",
    "SetStateRequest",
    "SpeedCommand",
    "SpeedRequest",
    "StateData",
    "StepRequest",
    "StopMode",
    "StopRequest",
    "StreamRequest",
    "Unparsed",
    "WatchdogAction",
    "WatchdogRequest",
    "crc16",
    "crc32",
    "decode_frame",
    "encode_frame",
    "frame_body",
]
