"""Message codecs of the wire protocol: round trips, validation, bad input, docs examples."""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from jointlab.errors import ActionError, PackingError
from jointlab.hardware import protocol
from jointlab.hardware.protocol import (
    HELLO_FRAME_VERSION,
    MAX_DOF,
    MESSAGE_TYPES,
    NJOINT_FIELDS,
    PROTOCOL_VERSION,
    STATE_DTYPE,
    TABLE,
    AccelRequest,
    Ack,
    ArmRequest,
    BrakesRequest,
    CmdType,
    CurrentCommand,
    DisarmRequest,
    GeometryReply,
    GeometryRequest,
    HeartbeatRequest,
    HelloReply,
    HelloRequest,
    HomeCommand,
    Message,
    MessageClass,
    MessageTable,
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
    Nack,
    NackReason,
    NJointCommand,
    PositionCommand,
    PowerRequest,
    ReqType,
    Row,
    SetStateRequest,
    SpeedCommand,
    SpeedRequest,
    StateData,
    StepRequest,
    StopMode,
    StopRequest,
    StreamRequest,
    WatchdogAction,
    WatchdogRequest,
    decode_frame,
    encode_frame,
)
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots import description_digest, load_robot

FAST = settings(max_examples=200, deadline=None, derandomize=True)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"

u8 = st.integers(0, 255)
u16 = st.integers(0, 0xFFFF)
i32 = st.integers(-(2**31), 2**31 - 1)
f32 = st.floats(width=32)  # NaN and infinities included: the codec carries them
dofs = st.integers(0, 12)
digests = st.binary(min_size=32, max_size=32)


def f32_vectors(n: int) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float32, n, elements=f32)


@st.composite
def njoint_commands(draw: st.DrawFn) -> NJointCommand:
    n = draw(dofs)
    return NJointCommand(draw(hnp.arrays(np.float32, (5, n), elements=f32)))


@st.composite
def states(draw: st.DrawFn) -> StateData:
    n = draw(dofs)
    floats = [draw(f32_vectors(n)) for _ in range(5)]
    return StateData.from_arrays(
        draw(st.integers(0, 2**64 - 1)),
        *floats,
        draw(hnp.arrays(np.uint8, n)),
        motor_power=draw(st.booleans()),
        armed=draw(st.booleans()),
        brakes=draw(st.booleans()),
        watchdog=draw(st.booleans()),
    )


@st.composite
def geometries(draw: st.DrawFn) -> GeometryReply:
    n = draw(dofs)
    records = np.zeros(n, protocol.GEOMETRY_DTYPE)
    records["type"] = draw(hnp.arrays(np.uint8, n, elements=st.sampled_from([1, 2])))
    records["has_brakes"] = draw(hnp.arrays(np.uint8, n, elements=st.sampled_from([0, 1])))
    for name in ("length", "min", "centre", "max", "home", "config_speed"):
        records[name] = draw(f32_vectors(n))
    records["orientation"] = draw(hnp.arrays(np.float32, (n, 3), elements=f32))
    records["axis"] = draw(hnp.arrays(np.float32, (n, 3), elements=f32))
    return GeometryReply(
        draw(u8), draw(u8), draw(u16), records, draw(f32_vectors(3)), draw(f32_vectors(3))
    )


#: One strategy per message class; test_every_message_type_has_a_strategy keeps it complete.
STRATEGIES: dict[type[Message], st.SearchStrategy[Message]] = {
    PositionCommand: st.builds(PositionCommand, i32, f32),
    MultiPositionCommand: dofs.flatmap(f32_vectors).map(MultiPositionCommand),
    SpeedCommand: st.builds(SpeedCommand, i32, f32),
    MultiSpeedCommand: dofs.flatmap(f32_vectors).map(MultiSpeedCommand),
    HomeCommand: st.builds(HomeCommand, i32),
    CurrentCommand: st.builds(CurrentCommand, i32, f32),
    MultiCurrentCommand: dofs.flatmap(f32_vectors).map(MultiCurrentCommand),
    NJointCommand: njoint_commands(),
    PowerRequest: st.builds(PowerRequest, st.booleans()),
    BrakesRequest: st.builds(BrakesRequest, st.booleans()),
    GeometryRequest: st.just(GeometryRequest()),
    SpeedRequest: st.builds(SpeedRequest, i32, f32),
    AccelRequest: st.builds(AccelRequest, i32, f32),
    HelloRequest: st.builds(HelloRequest, u8),
    ArmRequest: st.just(ArmRequest()),
    DisarmRequest: st.just(DisarmRequest()),
    StopRequest: st.builds(StopRequest, st.sampled_from(StopMode)),
    HeartbeatRequest: st.just(HeartbeatRequest()),
    WatchdogRequest: st.builds(WatchdogRequest, u16, st.sampled_from(WatchdogAction)),
    StreamRequest: st.builds(StreamRequest, u16),
    StepRequest: st.builds(StepRequest, u16),
    SetStateRequest: dofs.flatmap(lambda n: hnp.arrays(np.float32, (2, n), elements=f32)).map(
        SetStateRequest
    ),
    StateData: states(),
    Ack: st.builds(Ack, u8, u8, u16),
    Nack: st.builds(Nack, u8, u8, u16, st.sampled_from(NackReason), i32),
    HelloReply: st.builds(HelloReply, u8, u8, u16, u8, u8, u16, u16, u16, digests),
    GeometryReply: geometries(),
}
ANY_MESSAGE = st.one_of(*STRATEGIES.values())


def test_every_message_type_has_a_strategy() -> None:
    assert set(STRATEGIES) == set(MESSAGE_TYPES.values())


def test_wire_numbers_reuse_player_numbers() -> None:
    assert [int(t) for t in CmdType][:7] == [1, 2, 3, 4, 5, 6, 7]
    assert [ReqType.POWER, ReqType.BRAKES, ReqType.GET_GEOM, ReqType.SPEED, ReqType.ACCEL] == [
        1,
        2,
        3,
        4,
        5,
    ]
    assert StateData.msg_class == MessageClass.DATA and StateData.msg_type == 1


def test_two_messages_cannot_share_wire_numbers() -> None:
    class Clash(Message):
        pass

    with pytest.raises(TypeError, match="NJointCommand"):
        MessageTable(
            (
                Row(MessageClass.CMD, 16, "NJOINT", NJointCommand, handler="njoint"),
                Row(MessageClass.CMD, 16, "CLASH", Clash, handler="clash"),
            )
        )
    assert MESSAGE_TYPES[(1, 16)] is NJointCommand


@FAST
@given(ANY_MESSAGE)
def test_every_message_round_trips(message: Message) -> None:
    payload = message.pack()
    assert len(payload) == message.size == len(message)
    again = type(message).unpack(payload)
    assert again == message
    assert again.pack() == payload
    frame = decode_frame(encode_frame(message, 7))
    hello = isinstance(message, (HelloRequest, HelloReply))
    version = HELLO_FRAME_VERSION if hello else PROTOCOL_VERSION
    assert (frame.version, frame.seq, frame.message) == (version, 7, message)


@FAST
@given(ANY_MESSAGE, st.data())
def test_short_and_long_payloads_raise_packing_error(message: Message, data: st.DataObject) -> None:
    payload = message.pack()
    extra = data.draw(st.binary(min_size=1, max_size=30))
    with pytest.raises(PackingError):
        type(message).unpack(payload + extra)
    if payload:
        cut = data.draw(st.integers(0, len(payload) - 1))
        with pytest.raises(PackingError):
            type(message).unpack(payload[:cut])


@FAST
@given(st.sampled_from(sorted(MESSAGE_TYPES.values(), key=lambda c: c.__name__)), st.binary())
def test_random_payloads_raise_only_packing_error(cls: type[Message], data: bytes) -> None:
    try:
        message = cls.unpack(data)
    except PackingError:
        return
    assert message.pack() == data  # whatever parses is exactly what was sent


@FAST
@given(ANY_MESSAGE, st.data())
def test_mutated_payloads_raise_only_packing_error(message: Message, data: st.DataObject) -> None:
    payload = bytearray(message.pack())
    if not payload:
        return
    for _ in range(data.draw(st.integers(1, 4))):
        payload[data.draw(st.integers(0, len(payload) - 1))] = data.draw(u8)
    try:
        parsed = type(message).unpack(bytes(payload))
    except PackingError:
        return
    assert parsed.pack() == bytes(payload)


def test_njoint_keeps_nan_and_rounds_to_float32() -> None:
    action = NJointAction.TorqueAndPosition(
        [0.1, -2.0, 3.5], [np.nan, 0.25, 1.0 / 3.0], position_kp=[np.nan, 50.0, np.nan]
    )
    message = NJointCommand.unpack(NJointCommand.from_action(action).pack())
    back = message.to_action()
    for name in NJOINT_FIELDS:
        expected = getattr(action, name).astype(np.float32).astype(np.float64)
        np.testing.assert_array_equal(getattr(back, name), expected)  # NaN where NaN
        np.testing.assert_array_equal(getattr(message, name), expected.astype(np.float32))
    assert message.dof == 3 and message.size == 61


def test_njoint_to_action_refuses_a_nan_torque() -> None:
    message = NJointCommand(np.full((5, 2), np.nan))
    with pytest.raises(ActionError, match="torque"):
        message.to_action()


def test_float32_overflow_is_refused_but_nan_and_inf_travel() -> None:
    with pytest.raises(PackingError, match="float32 range"):
        MultiPositionCommand([0.0, 1e39])
    with pytest.raises(PackingError, match="position"):
        PositionCommand(0, -1e300)
    carried = MultiSpeedCommand([np.nan, np.inf, -np.inf])
    assert np.array_equal(
        MultiSpeedCommand.unpack(carried.pack()).speeds, carried.speeds, equal_nan=True
    )


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: PositionCommand(2**31, 0.0), "joint"),
        (lambda: HomeCommand(-(2**31) - 1), "joint"),
        (lambda: PowerRequest(2), "on"),
        (lambda: StopRequest(7), "mode"),
        (lambda: WatchdogRequest(70000), "timeout_ms"),
        (lambda: WatchdogRequest(10, 9), "action"),
        (lambda: StreamRequest(-1), "period_ticks"),
        (lambda: HelloRequest(256), "version"),
        (lambda: Ack(1, 2, 65536), "ref_seq"),
        (lambda: Nack(1, 2, 3, 99), "reason"),
        (lambda: HelloReply(2, 16, 0, 1, 6, 1000, 100, 1, b"short"), "digest"),
        (lambda: NJointCommand(np.zeros((4, 3))), "values"),
        (lambda: MultiCurrentCommand(np.zeros(MAX_DOF + 1)), "256 actuators"),
        (lambda: MultiPositionCommand("abc"), "positions"),
    ],
)
def test_invalid_fields_raise_packing_error_naming_the_field(build, field: str) -> None:
    with pytest.raises(PackingError, match=field):
        build()


def test_state_from_and_to_array_state() -> None:
    rng = np.random.default_rng(3)
    state = ArrayState(
        time=1.25,
        position=rng.normal(size=4).astype(np.float32).astype(np.float64),
        velocity=rng.normal(size=4).astype(np.float32).astype(np.float64),
        acceleration=np.zeros(4),
        torque=np.array([0.5, -0.5, np.nan, 1.0]),
        current=np.ones(4),
        actuator_state=np.array([1, 2, 4, 8], dtype=np.uint8),
        motor_power=True,
        armed=False,
        brakes=True,
        watchdog=True,
    )
    message = StateData.unpack(StateData.from_state(state).pack())
    assert message.time_us == 1_250_000 and message.dof == 4
    assert message.to_state() == state
    assert message.size == 13 + 21 * 4


def test_state_rejects_flags_other_than_zero_or_one() -> None:
    payload = bytearray(
        StateData.from_arrays(5, *[np.zeros(1)] * 5, [1], motor_power=True, armed=True).pack()
    )
    payload[10] = 2  # armed
    with pytest.raises(PackingError, match="flags"):
        StateData.unpack(bytes(payload))


def test_geometry_reply_carries_a_description_geometry() -> None:
    description = load_robot("arm6")
    geometry = description.geometry()
    reply = GeometryReply.unpack(GeometryReply.from_geometry(geometry, ref_seq=9).pack())
    assert (reply.ref_class, reply.ref_type, reply.ref_seq) == (MessageClass.REQ, 3, 9)
    back = reply.to_geometry()
    assert len(back.actuators) == description.dof
    for sent, got in zip(geometry.actuators, back.actuators, strict=True):
        assert got.type == sent.type and got.has_brakes == sent.has_brakes
        np.testing.assert_allclose(got.axis, sent.axis, atol=1e-6)
        np.testing.assert_allclose(
            [got.min, got.max, got.length], [sent.min, sent.max, sent.length], rtol=1e-6
        )
    np.testing.assert_allclose(back.base_pos, geometry.base_pos, atol=1e-6)


def test_geometry_reply_rejects_unknown_actuator_type() -> None:
    reply = GeometryReply.from_geometry(load_robot("planar2").geometry(), ref_seq=1)
    payload = bytearray(reply.pack())
    payload[29] = 7  # first record's type byte
    with pytest.raises(PackingError, match="type"):
        GeometryReply.unpack(bytes(payload))


def test_hello_reply_carries_the_description_digest() -> None:
    description = load_robot("arm6")
    request_frame = decode_frame(encode_frame(HelloRequest(), 0))
    reply = HelloReply.reply_to(
        request_frame,
        version=PROTOCOL_VERSION,
        dof=description.dof,
        rate_hz=1000,
        watchdog_ms=100,
        stream_period=1,
        digest=bytes.fromhex(description_digest(description)),
    )
    again = HelloReply.unpack(reply.pack())
    assert again.digest_hex == description_digest(description)
    assert (again.ref_class, again.ref_type, again.ref_seq) == (MessageClass.REQ, 16, 0)
    assert HelloReply.size == 44 and HelloRequest.size == 1


def test_nack_reasons_have_text_and_slug() -> None:
    for reason in NackReason:
        assert reason.text and reason.slug == reason.name.lower()
    nack = Nack(MessageClass.CMD, CmdType.NJOINT, 41, NackReason.DISARMED)
    assert TABLE.describe(nack) == "device refused CMD NJOINT (seq 41): the robot is disarmed"
    assert "detail 3" in TABLE.describe(Nack(2, 4, 1, NackReason.UNKNOWN_JOINT, 3))
    assert "class 9 type 9" in TABLE.describe(Nack(9, 9, 1, NackReason.UNSUPPORTED))


def test_equality_is_wire_equality() -> None:
    assert PositionCommand(1, 0.1) == PositionCommand(1, float(np.float32(0.1)))
    assert PositionCommand(1, math.nan) == PositionCommand(1, math.nan)
    assert PositionCommand(1, 0.1) != SpeedCommand(1, 0.1)
    assert len({Ack(1, 2, 3), Ack(1, 2, 3), Ack(1, 2, 4)}) == 2


def test_fixed_sizes_match_the_layouts() -> None:
    sizes = {
        PositionCommand: "<if",
        HomeCommand: "<i",
        PowerRequest: "<B",
        Nack: "<BBHBi",
        WatchdogRequest: "<HB",
        ArmRequest: "<",
    }
    for cls, layout in sizes.items():
        assert cls.size == struct.calcsize(layout)
    assert STATE_DTYPE.itemsize == 21 and protocol.GEOMETRY_DTYPE.itemsize == 50


_EXAMPLE = re.compile(r"<!-- example: (.+?) -->\s*```text\n(.*?)```", re.DOTALL)


def test_docs_worked_examples_are_what_the_code_produces() -> None:
    text = DOCS.read_text(encoding="utf-8")
    examples = _EXAMPLE.findall(text)
    assert len(examples) >= 3
    namespace = {name: getattr(protocol, name) for name in protocol.__all__}
    namespace.update(np=np, nan=math.nan, NJointAction=NJointAction)
    for expression, hex_text in examples:
        produced = eval(expression, namespace)  # our own docs
        assert produced.hex(" ") == " ".join(hex_text.split()).lower(), expression
