"""The firmware core (host build, through ctypes) against JointLab's Python protocol code.

Frames are encoded by the Python codec (``jointlab.hardware.protocol``); the same bytes go
to the C core and to the Python emulator's ``Device`` (the reference device logic), and
their replies, decoded by the Python ``FrameDecoder``, must be equal. The law is checked
against ``NJointAction.resolve`` (the NaN rules) and the effort clamp for random actions,
through the wire; malformed frames must be dropped and counted, never applied.
"""

from __future__ import annotations

import binascii
import struct
import zlib

import numpy as np
import pytest
from cobs import cobs
from firmware_build import HostFirmware
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jointlab.hardware import Device
from jointlab.hardware.protocol import (
    AccelRequest,
    ArmRequest,
    BrakesRequest,
    DisarmRequest,
    FrameDecoder,
    GeometryReply,
    GeometryRequest,
    HeartbeatRequest,
    HelloReply,
    HelloRequest,
    HomeCommand,
    Message,
    Nack,
    NackReason,
    NJointCommand,
    PositionCommand,
    PowerRequest,
    SetStateRequest,
    SpeedRequest,
    StateData,
    StepRequest,
    StopRequest,
    StreamRequest,
    Unparsed,
    WatchdogAction,
    WatchdogRequest,
    encode_frame,
)
from jointlab.interface import NJointAction
from jointlab.robots import description_digest, load_robot
from jointlab.sim import SimRobot

ROBOT = "arm6"
DESCRIPTION = load_robot(ROBOT)
DOF = DESCRIPTION.dof
HOME = np.asarray(DESCRIPTION.home)
DIGEST = bytes.fromhex(description_digest(DESCRIPTION))
NAN = float("nan")


@pytest.fixture(scope="module")
def firmware() -> HostFirmware:
    return HostFirmware()


def replies(data: bytes) -> list[Message]:
    """The device-to-host messages in ``data`` (the DATA STATE stream left out)."""
    decoder = FrameDecoder()
    frames = decoder.feed(data)
    assert decoder.stats.errors == 0, decoder.stats
    return [f.message for f in frames if not isinstance(f.message, StateData)]


def raw_frame(
    msg_class: int,
    msg_type: int,
    seq: int,
    payload: bytes,
    length: int | None = None,
    version: int = 2,
) -> bytes:
    """A frame with a good CRC-32 whose header may lie about the payload."""
    n = len(payload) if length is None else length
    body = struct.pack("<BBBHH", version, msg_class, msg_type, seq, n) + payload
    return b"\x00" + cobs.encode(body + zlib.crc32(body).to_bytes(4, "little")) + b"\x00"


def njoint_values(torque: object, position: object = NAN) -> NJointCommand:
    values = np.full((5, DOF), NAN)
    values[0], values[1] = torque, position
    return NJointCommand(values)


#: Every host-to-device message the protocol defines, valid and invalid, in an order that
#: walks the device through its states. Player commands (POS ... MULTI_CURRENT) are left
#: out: the reference firmware NACKs them UNSUPPORTED (checked below).
SCRIPT: list[Message | bytes] = [
    HelloRequest(),
    GeometryRequest(),
    NJointCommand.from_action(NJointAction.Position(HOME)),  # disarmed
    NJointCommand.from_action(NJointAction.Zero(DOF)),  # Zero: accepted in every state
    ArmRequest(),
    NJointCommand.from_action(NJointAction.Position(HOME)),
    NJointCommand.from_action(NJointAction.Position(HOME[:3])),  # BAD_LENGTH, detail dof
    njoint_values(np.r_[np.inf, np.zeros(DOF - 1)]),  # INVALID_VALUE
    njoint_values(np.zeros(DOF), np.r_[0.0, 0.0, np.inf, np.zeros(DOF - 3)]),
    SpeedRequest(DOF, 0.5),
    SpeedRequest(0, NAN),
    SpeedRequest(0, 1e6),
    SpeedRequest(0, -1.0),
    SpeedRequest(1, 0.5),
    AccelRequest(2, 1.0),
    AccelRequest(-1, 1.0),
    StopRequest(),
    HeartbeatRequest(),
    WatchdogRequest(250, WatchdogAction.HOLD),
    StreamRequest(1),
    StepRequest(5),  # real-time device: UNSUPPORTED
    SetStateRequest.from_arrays(HOME, np.zeros(DOF)),
    BrakesRequest(True),
    NJointCommand.from_action(NJointAction.Position(HOME)),
    BrakesRequest(False),
    PowerRequest(False),
    ArmRequest(),  # UNPOWERED
    BrakesRequest(False),  # UNPOWERED
    NJointCommand.from_action(NJointAction.Position(HOME)),  # UNPOWERED before DISARMED
    PowerRequest(True),
    ArmRequest(),
    DisarmRequest(),
    Unparsed(2, 1, b"\x02", NackReason.INVALID_VALUE, ""),  # POWER with a bool of 2
    Unparsed(2, 19, b"\x07", NackReason.INVALID_VALUE, ""),  # unknown STOP mode
    Unparsed(2, 17, b"\x00", NackReason.BAD_LENGTH, ""),  # ARM with a payload
    Unparsed(1, 16, b"\x02" + bytes(39), NackReason.BAD_LENGTH, ""),  # NJOINT count vs length
    Unparsed(2, 99, b"", NackReason.UNSUPPORTED, ""),  # unknown type
    Unparsed(9, 1, b"", NackReason.UNSUPPORTED, ""),  # unknown class
    Unparsed(4, 0, b"\x02\x11\x00\x00", NackReason.UNSUPPORTED, ""),  # an ACK: no answer
    raw_frame(2, 20, 0, b"", length=3),  # header length lies: BAD_LENGTH
    raw_frame(2, 20, 0, b"", version=3),  # another version: VERSION_MISMATCH
    HelloRequest(),
]


def test_the_firmware_answers_every_frame_as_the_python_device_does(
    firmware: HostFirmware,
) -> None:
    firmware.start(DESCRIPTION, DIGEST, HOME)
    sim = SimRobot(ROBOT, dt=0.001, control_dt=0.001)
    try:
        device = Device(sim)
        for seq, item in enumerate(SCRIPT):
            wire = item if isinstance(item, bytes) else encode_frame(item, seq)
            frames = FrameDecoder().feed(wire)
            expected = [r for f in frames if (r := device.handle(f)) is not None]
            firmware.take()
            firmware.feed(wire)
            got = replies(firmware.take())
            assert len(got) == len(expected), (item, got, expected)
            for mine, theirs in zip(got, expected, strict=True):
                if isinstance(theirs, GeometryReply):
                    assert isinstance(mine, GeometryReply)
                    assert len(mine.actuators) == len(theirs.actuators) == DOF
                    for field in ("min", "centre", "max", "home", "config_speed", "has_brakes"):
                        np.testing.assert_allclose(
                            mine.actuators[field],
                            theirs.actuators[field],
                            rtol=1e-6,
                            atol=1e-7,
                            err_msg=field,
                        )
                else:
                    assert mine == theirs, (item, mine, theirs)
            if isinstance(item, HelloRequest):
                assert isinstance(got[0], HelloReply) and got[0].digest == DIGEST
    finally:
        sim.close()


@pytest.mark.parametrize("message", [PositionCommand(0, 0.1), HomeCommand(-1)])
def test_player_commands_are_refused_unsupported_never_silently(
    firmware: HostFirmware, message: Message
) -> None:
    firmware.start(DESCRIPTION, DIGEST, HOME)
    firmware.feed(encode_frame(ArmRequest(), 0) + encode_frame(message, 1))
    got = replies(firmware.take())
    assert got[-1] == Nack(1, message.msg_type, 1, NackReason.UNSUPPORTED, -1)


def _expected_torque(action: NJointAction, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """JointLab's law (docs/protocol.md 7.1) in float64 from the action's own resolve()."""
    r = action.resolve(DESCRIPTION.default_kp, DESCRIPTION.default_kd)
    tau = r.torque + r.kp * (r.position - q) + r.kd * (r.velocity - qd)
    effort = np.asarray(DESCRIPTION.effort_limit)
    return np.clip(tau, -effort, effort)


_f32 = st.floats(-50, 50, width=32)
_maybe_nan = st.one_of(st.just(NAN), _f32)
_gain = st.one_of(st.just(NAN), st.floats(0, 500, width=32))
_vec = lambda element: st.lists(element, min_size=DOF, max_size=DOF)  # noqa: E731


@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    torque=_vec(_f32),
    position=_vec(_maybe_nan),
    kp=_vec(_gain),
    kd=_vec(_gain),
    velocity=_vec(_maybe_nan),
    q=_vec(st.floats(-3, 3, width=32)),
    qd=_vec(st.floats(-10, 10, width=32)),
)
def test_the_law_at_the_tick_matches_jointlabs_law(
    firmware: HostFirmware, torque, position, kp, kd, velocity, q, qd
) -> None:
    action = NJointAction(torque, position, kp, kd, velocity)
    firmware.start(DESCRIPTION, DIGEST, q)
    firmware.set_joints(q, qd)
    firmware.feed(
        encode_frame(ArmRequest(), 0) + encode_frame(NJointCommand.from_action(action), 1)
    )
    firmware.tick()
    got = firmware.torque()
    want = _expected_torque(action, np.asarray(q, float), np.asarray(qd, float))
    r = action.resolve(DESCRIPTION.default_kp, DESCRIPTION.default_kd)
    scale = (
        np.abs(r.torque)
        + np.abs(r.kp * (r.position - np.asarray(q)))
        + np.abs(r.kd * (r.velocity - np.asarray(qd)))
    )
    # float32 arithmetic on the device: a few ulps of the terms' magnitude.
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 + 4e-7 * float(scale.max()))
    if action.is_zero:
        assert (got == 0).all()
    np.testing.assert_array_equal(got, firmware.law(action, q, qd))


_ERRORS = (
    "cobs_errors",
    "runts",
    "crc_errors",
    "overruns",
    "malformed",
    "unknown_types",
    "version_mismatches",
)


@st.composite
def _damage(draw: st.DrawFn) -> tuple[str, bytes]:
    """A good frame, damaged: a flipped bit, a truncation or a lying length.

    The frame is an NJOINT (CRC-32) or a HELLO (version 1's CRC-16), which would disarm.
    """
    if draw(st.booleans()):
        good = encode_frame(njoint_values(np.full(DOF, draw(st.floats(0.5, 2.0)))), 1)
    else:
        good = encode_frame(HelloRequest(), 1)
    kind = draw(st.sampled_from(["flip", "truncate", "length"]))
    if kind == "flip":
        bit = draw(st.integers(8, 8 * (len(good) - 1) - 1))
        damaged = bytearray(good)
        damaged[bit // 8] ^= 1 << (bit % 8)
        return kind, bytes(damaged)
    if kind == "truncate":
        cut = draw(st.integers(2, len(good) - 2))
        return kind, good[:cut] + b"\x00"
    raw = cobs.decode(good[1:-1])
    trailer = 2 if raw[0] == 1 else 4
    length = draw(st.integers(0, 0xFFFF).filter(lambda n: n != len(raw) - 7 - trailer))
    body = bytearray(raw[:-trailer])
    body[5:7] = length.to_bytes(2, "little")
    if trailer == 2:
        body += binascii.crc_hqx(bytes(body), 0xFFFF).to_bytes(2, "big")
    else:
        body += zlib.crc32(body).to_bytes(4, "little")
    return kind, b"\x00" + cobs.encode(bytes(body)) + b"\x00"


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=_damage())
def test_malformed_frames_are_dropped_counted_and_never_applied(
    firmware: HostFirmware, case: tuple[str, bytes]
) -> None:
    kind, wire = case
    firmware.start(DESCRIPTION, DIGEST, HOME)
    firmware.feed(encode_frame(ArmRequest(), 0))
    firmware.tick()
    hold = firmware.torque()  # ARM latched the present position: zero error, zero torque
    firmware.take()
    before = firmware.stats()
    firmware.feed(wire + b"\x00")
    firmware.tick(3)
    after = firmware.stats()
    np.testing.assert_array_equal(firmware.torque(), hold)
    assert after["commands_accepted"] == before["commands_accepted"]
    assert firmware.lib.jl_armed()  # a damaged HELLO did not start a session (disarm)
    assert sum(after[k] - before[k] for k in _ERRORS) >= 1, (kind, after)
    for message in replies(firmware.take()):  # only NACKs, for a good-CRC lying length
        assert isinstance(message, Nack) and message.reason is NackReason.BAD_LENGTH


#: Lockstep (jl_set_lockstep, the PIL board): the requests only a lockstep device serves.
LOCKSTEP_SCRIPT: list[Message] = [
    HelloRequest(),  # stream_period 0
    StreamRequest(1),  # UNSUPPORTED in lockstep
    StepRequest(60_001),  # OUT_OF_LIMITS, detail 60000
    SetStateRequest.from_arrays(HOME[:3], np.zeros(3)),  # BAD_LENGTH, detail dof
    SetStateRequest.from_arrays(HOME, np.r_[0.0, NAN, np.zeros(DOF - 2)]),  # INVALID_VALUE 1
    SetStateRequest.from_arrays(np.r_[HOME[:4], 100.0, HOME[5:]], np.zeros(DOF)),  # 4 beyond
    SetStateRequest.from_arrays(HOME + 0.05, np.zeros(DOF)),
    ArmRequest(),
    StepRequest(3),  # answered by the DATA STATE after tick 3
    StepRequest(2),  # already there: the state, no tick
]


def test_in_lockstep_the_firmware_answers_step_and_set_state_as_the_python_device_does(
    firmware: HostFirmware,
) -> None:
    firmware.start(DESCRIPTION, DIGEST, HOME)
    firmware.lib.jl_set_lockstep(True)
    sim = SimRobot(ROBOT, dt=0.001, control_dt=0.001)
    try:
        device = Device(sim, lockstep=True)
        for seq, item in enumerate(LOCKSTEP_SCRIPT):
            wire = encode_frame(item, seq)
            expected = [r for f in FrameDecoder().feed(wire) if (r := device.handle(f))]
            firmware.feed(wire)
            got = [f.message for f in FrameDecoder().feed(firmware.take())]
            assert [type(m) for m in got] == [type(m) for m in expected], item
            for mine, theirs in zip(got, expected, strict=True):
                if isinstance(theirs, StateData):  # the plants differ; the clock must not
                    assert (mine.time_us, mine.armed) == (theirs.time_us, theirs.armed)
                else:
                    assert mine == theirs, (item, mine, theirs)
        assert isinstance(got[0], StateData) and got[0].time_us == 3000
        np.testing.assert_allclose(firmware.joints()[0], HOME + 0.05, atol=1e-6)  # SET_STATE
    finally:
        sim.close()


def test_brakes_a_device_does_not_have_are_refused_as_by_the_python_device(
    firmware: HostFirmware,
) -> None:
    """BRAKES 1 on a robot without brakes: NACK UNSUPPORTED from both; BRAKES 0 is ACKed."""
    planar = load_robot("planar2")
    assert not planar.has_brakes.any()
    firmware.start(planar, bytes.fromhex(description_digest(planar)), planar.home)
    sim = SimRobot(planar, dt=0.001, control_dt=0.001)
    try:
        device = Device(sim)
        for seq, item in enumerate([ArmRequest(), BrakesRequest(True), BrakesRequest(False)]):
            wire = encode_frame(item, seq)
            expected = [device.handle(f) for f in FrameDecoder().feed(wire)]
            firmware.take()
            firmware.feed(wire)
            got = replies(firmware.take())
            assert got == expected, (item, got, expected)
            if isinstance(item, BrakesRequest) and item.on:
                assert got == [Nack(2, item.msg_type, seq, NackReason.UNSUPPORTED, -1)]
    finally:
        sim.close()
