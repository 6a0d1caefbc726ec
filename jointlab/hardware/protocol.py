"""The JointLab serial wire protocol: the one import for backends, emulators and tools.

The specification is docs/protocol.md. The code is layered as pyserial's
``serial.threaded`` suggests, one concept per module:

* :mod:`jointlab.hardware.wire`: wire numbers (enums), the :class:`Message` base class;
* :mod:`jointlab.hardware.messages`: fixed-size commands, requests, ACK/NACK, HELLO reply;
* :mod:`jointlab.hardware.vectors`: MULTI_* commands and NJOINT (float32 vectors);
* :mod:`jointlab.hardware.feedback`: DATA STATE and the GET_GEOM reply (packed records);
* :mod:`jointlab.hardware.framing`: header, CRC-16, COBS, :class:`FrameDecoder`,
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

from jointlab.hardware.feedback import GEOMETRY_DTYPE, STATE_DTYPE, GeometryReply, StateData
from jointlab.hardware.framing import (
    CRC_INIT,
    HEADER,
    MAX_ENCODED_SIZE,
    MAX_PAYLOAD,
    MESSAGE_TYPES,
    Frame,
    FrameDecoder,
    FrameEncoder,
    LinkStats,
    Unparsed,
    crc16,
    decode_frame,
    encode_frame,
    frame_body,
)
from jointlab.hardware.messages import (
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
    StopRequest,
    StreamRequest,
    WatchdogRequest,
)
from jointlab.hardware.vectors import (
    NJOINT_FIELDS,
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
    NJointCommand,
)
from jointlab.hardware.wire import (
    FLOAT32_MAX,
    MAX_DOF,
    PROTOCOL_VERSION,
    AckType,
    CmdType,
    DataType,
    Message,
    MessageClass,
    NackReason,
    NackType,
    PayloadLengthError,
    ReqType,
    StopMode,
    WatchdogAction,
)

__all__ = [
    "CRC_INIT",
    "FLOAT32_MAX",
    "GEOMETRY_DTYPE",
    "HEADER",
    "MAX_DOF",
    "MAX_ENCODED_SIZE",
    "MAX_PAYLOAD",
    "MESSAGE_TYPES",
    "NJOINT_FIELDS",
    "PROTOCOL_VERSION",
    "STATE_DTYPE",
    "AccelRequest",
    "Ack",
    "AckType",
    "ArmRequest",
    "BrakesRequest",
    "CmdType",
    "CurrentCommand",
    "DataType",
    "DisarmRequest",
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
    "ReqType",
    "SpeedCommand",
    "SpeedRequest",
    "StateData",
    "StopMode",
    "StopRequest",
    "StreamRequest",
    "Unparsed",
    "WatchdogAction",
    "WatchdogRequest",
    "crc16",
    "decode_frame",
    "encode_frame",
    "frame_body",
]
