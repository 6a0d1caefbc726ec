"""Framing: CRC, COBS, the streaming FrameDecoder, resynchronisation and link counters."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from cobs import cobs
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlab.errors import PackingError
from jointlab.hardware.protocol import (
    CRC32_RESIDUE,
    HEADER,
    HELLO_FRAME_VERSION,
    MAX_ENCODED_SIZE,
    MAX_PAYLOAD,
    PROTOCOL_VERSION,
    Ack,
    ArmRequest,
    FrameDecoder,
    FrameEncoder,
    HeartbeatRequest,
    HelloReply,
    HelloRequest,
    LinkStats,
    MessageClass,
    MultiPositionCommand,
    NackReason,
    NJointCommand,
    PositionCommand,
    StateData,
    Unparsed,
    crc16,
    crc32,
    decode_frame,
    encode_frame,
    frame_body,
)
from jointlab.interface import NJointAction

FAST = settings(max_examples=200, deadline=None, derandomize=True)


def njoint(dof: int, seed: int) -> NJointCommand:
    rng = np.random.default_rng(seed)
    position = rng.normal(size=dof)
    position[rng.random(dof) < 0.3] = np.nan
    return NJointCommand.from_action(NJointAction.TorqueAndPosition(rng.normal(size=dof), position))


def state(dof: int, seed: int) -> StateData:
    rng = np.random.default_rng(seed)
    floats = rng.normal(size=(5, dof))
    return StateData.from_arrays(
        seed, *floats, np.ones(dof, np.uint8), motor_power=True, armed=True
    )


MESSAGES = st.one_of(
    st.builds(njoint, st.integers(1, 8), st.integers(0, 1000)),  # an action has >= 1 joint
    st.builds(state, st.integers(0, 8), st.integers(0, 1000)),
    st.builds(Ack, st.integers(0, 255), st.integers(0, 255), st.integers(0, 0xFFFF)),
    st.builds(PositionCommand, st.integers(-5, 5), st.floats(width=32)),
    st.just(ArmRequest()),
)


def encode_all(messages: list, first_seq: int = 0) -> bytes:
    encoder = FrameEncoder(first_seq=first_seq)
    return b"".join(encoder.encode(m)[1] for m in messages)


def summary(frame) -> tuple:
    """What a frame says on the wire, for comparison with the oracle."""
    message = frame.message
    return frame.version, frame.msg_class, frame.msg_type, frame.seq, message.pack()


def oracle(stream: bytes) -> list[tuple]:
    """Every complete run between delimiters that is valid COBS and has a good CRC.

    Written from the specification, independently of the decoder: the header's version
    byte says which CRC the frame carries (1: CRC-16 big-endian, else CRC-32 little-endian).
    """
    good = []
    for chunk in stream.split(b"\x00")[:-1]:
        try:
            raw = cobs.decode(chunk)
        except cobs.DecodeError:
            continue
        if not chunk or len(raw) < 9:
            continue
        if raw[0] == 1:
            trailer, ok = 2, crc16(raw[:-2]).to_bytes(2, "big") == raw[-2:]
        else:
            trailer = 4
            ok = len(raw) >= 11 and crc32(raw[:-4]).to_bytes(4, "little") == raw[-4:]
        if ok:
            version, msg_class, msg_type, seq, _ = HEADER.unpack_from(raw)
            good.append((version, msg_class, msg_type, seq, raw[7:-trailer]))
    return good


def feed_in_pieces(decoder: FrameDecoder, stream: bytes, cuts: list[int]) -> list:
    frames = []
    bounds = [0, *sorted(c % (len(stream) + 1) for c in cuts), len(stream)]
    for start, end in itertools.pairwise(bounds):
        frames += decoder.feed(stream[start:end])
        assert decoder.pending <= MAX_ENCODED_SIZE
    return frames


def test_crc32_is_ieee_and_appended_little_endian() -> None:
    assert crc32(b"123456789") == 0xCBF43926
    raw = cobs.decode(encode_frame(ArmRequest(), 0x1234)[1:-1])
    assert raw[:7] == HEADER.pack(PROTOCOL_VERSION, MessageClass.REQ, 17, 0x1234, 0)
    assert raw[7:] == crc32(raw[:7]).to_bytes(4, "little")
    assert crc32(raw) == CRC32_RESIDUE  # one pass over the whole frame checks it
    assert raw == frame_body(ArmRequest(), 0x1234)


def test_hello_frames_keep_the_version_1_format_in_every_version() -> None:
    """REQ HELLO and ACK HELLO: header version 1 and CRC-16, whatever the payload says."""
    assert crc16(b"123456789") == 0x29B1
    for message in (
        HelloRequest(PROTOCOL_VERSION),
        HelloReply(2, 16, 0, 2, 6, 1000, 100, 1, bytes(32)),
    ):
        raw = frame_body(message, 7)
        assert raw[0] == HELLO_FRAME_VERSION and crc16(raw) == 0  # a v1 peer can check it
        assert decode_frame(encode_frame(message, 7)).message == message


@FAST
@given(MESSAGES, st.integers(0, 0xFFFF))
def test_frames_are_delimited_and_decode_back(message, seq: int) -> None:
    frame = encode_frame(message, seq)
    assert frame[0] == 0 and frame[-1] == 0 and 0 not in frame[1:-1]
    assert len(frame) <= MAX_ENCODED_SIZE + 2
    decoded = decode_frame(frame)
    assert (decoded.seq, decoded.message) == (seq, message)
    assert FrameDecoder().feed(frame) == [decoded]


@FAST
@given(st.lists(MESSAGES, max_size=6), st.lists(st.integers(0, 10_000), max_size=8))
def test_any_split_of_the_stream_gives_the_same_frames(messages, cuts) -> None:
    stream = encode_all(messages)
    decoder = FrameDecoder()
    frames = feed_in_pieces(decoder, stream, cuts)
    assert [f.message for f in frames] == messages
    assert [f.seq for f in frames] == list(range(len(messages)))
    stats = decoder.stats
    assert stats.frames == len(messages) and stats.errors == 0 and stats.sequence_gaps == 0
    assert stats.bytes_received == len(stream) and stats.bytes_dropped == 0


@FAST
@given(MESSAGES, st.data())
def test_a_frame_with_any_corrupted_byte_is_never_delivered(message, data) -> None:
    frame = encode_frame(message, 3)
    raw = bytearray(cobs.decode(frame[1:-1]))
    index = data.draw(st.integers(0, len(raw) - 1))
    raw[index] ^= data.draw(st.integers(1, 255))  # one byte changed: a CRC always catches it
    corrupted = b"\x00" + cobs.encode(bytes(raw)) + b"\x00"
    decoder = FrameDecoder()
    assert decoder.feed(corrupted) == []
    assert decoder.stats.crc_errors == 1 and decoder.stats.frames == 0
    with pytest.raises(PackingError, match="CRC"):
        decode_frame(corrupted)


@FAST
@given(st.lists(MESSAGES, min_size=1, max_size=5), st.data())
def test_mutated_streams_deliver_exactly_the_good_crc_frames(messages, data) -> None:
    stream = bytearray(encode_all(messages))
    for _ in range(data.draw(st.integers(1, 6))):
        stream[data.draw(st.integers(0, len(stream) - 1))] = data.draw(st.integers(0, 255))
    stream = bytes(stream)
    decoder = FrameDecoder()
    frames = feed_in_pieces(decoder, stream, data.draw(st.lists(st.integers(0, 5000), max_size=4)))
    assert [summary(f) for f in frames] == oracle(stream)
    intact = [m for m, s in zip(messages, _frames_of(messages), strict=True) if s in stream]
    assert all(m in [f.message for f in frames] for m in intact)


def _frames_of(messages: list) -> list[bytes]:
    encoder = FrameEncoder()
    return [encoder.encode(m)[1] for m in messages]


@FAST
@given(MESSAGES, MESSAGES, st.binary(max_size=400), st.lists(st.integers(0, 2000), max_size=4))
def test_decoder_recovers_on_the_next_frame_after_garbage(first, second, garbage, cuts) -> None:
    stream = encode_frame(first, 0) + garbage + encode_frame(second, 1)
    decoder = FrameDecoder()
    frames = feed_in_pieces(decoder, stream, cuts)
    assert frames[0].message == first and frames[0].seq == 0
    assert frames[-1].message == second and frames[-1].seq == 1
    assert [summary(f) for f in frames] == oracle(stream)


@FAST
@given(st.binary(max_size=600), MESSAGES)
def test_decoder_joining_mid_stream_recovers(garbage, message) -> None:
    decoder = FrameDecoder()
    assert decoder.feed(garbage) is not None  # never raises, whatever the bytes
    frames = decoder.feed(encode_frame(message, 42))
    assert frames[-1].message == message and frames[-1].seq == 42


def test_overlong_garbage_is_dropped_with_bounded_memory() -> None:
    rng = np.random.default_rng(0)
    garbage = rng.integers(1, 256, MAX_ENCODED_SIZE + 5000, dtype=np.uint8).tobytes()
    decoder = FrameDecoder()
    for start in range(0, len(garbage), 1000):
        assert decoder.feed(garbage[start : start + 1000]) == []
        assert decoder.pending <= MAX_ENCODED_SIZE
    frames = decoder.feed(encode_frame(ArmRequest(), 5))
    assert [f.message for f in frames] == [ArmRequest()]
    stats = decoder.stats
    assert stats.overruns == 1 and stats.bytes_dropped == len(garbage) and stats.errors == 1


def test_sequence_gaps_wraps_and_restarts_are_counted() -> None:
    decoder = FrameDecoder()
    for seq in (65534, 65535, 0, 1, 4, 5, 9):  # wraps cleanly; gaps of 2 and 3
        decoder.feed(encode_frame(HeartbeatRequest(), seq))
    stats = decoder.stats
    assert (stats.sequence_gaps, stats.frames_missed, stats.out_of_order) == (2, 5, 0)
    decoder.feed(encode_frame(HeartbeatRequest(), 3))  # went back: duplicate or restart
    decoder.feed(encode_frame(HelloRequest(), 0))  # a new session: not counted
    decoder.feed(encode_frame(HeartbeatRequest(), 1))
    stats = decoder.stats
    assert (stats.sequence_gaps, stats.frames_missed, stats.out_of_order) == (2, 5, 1)


def test_frame_encoder_counts_and_wraps() -> None:
    encoder = FrameEncoder(first_seq=0xFFFE)
    seqs = [encoder.encode(ArmRequest())[0] for _ in range(4)]
    assert seqs == [0xFFFE, 0xFFFF, 0, 1] and encoder.next_seq == 2


def _raw_frame(version: int, msg_class: int, msg_type: int, seq: int, length: int, payload: bytes):
    body = HEADER.pack(version, msg_class, msg_type, seq, length) + payload
    return b"\x00" + cobs.encode(body + crc32(body).to_bytes(4, "little")) + b"\x00"


@pytest.mark.parametrize(
    ("frame", "reason", "counter"),
    [
        (
            encode_frame(Unparsed(9, 9, b"abc", NackReason.UNSUPPORTED), 0),
            "UNSUPPORTED",
            "unknown_types",
        ),
        (_raw_frame(PROTOCOL_VERSION, 2, 17, 0, 5, b""), "BAD_LENGTH", "malformed"),
        (
            encode_frame(Unparsed(2, 1, b"\x02", NackReason.INVALID_VALUE), 0),
            "INVALID_VALUE",
            "malformed",
        ),
        (
            encode_frame(Unparsed(2, 1, b"\x01\x01", NackReason.BAD_LENGTH), 0),
            "BAD_LENGTH",
            "malformed",
        ),
        (
            encode_frame(ArmRequest(), 0, version=PROTOCOL_VERSION + 1),
            "VERSION_MISMATCH",
            "version_mismatches",
        ),
        (encode_frame(ArmRequest(), 0, version=1), "VERSION_MISMATCH", "version_mismatches"),
    ],
)
def test_good_crc_frames_that_do_not_parse_come_back_unparsed(frame, reason, counter) -> None:
    decoder = FrameDecoder()
    (result,) = decoder.feed(frame)
    assert isinstance(result.message, Unparsed)
    assert result.message.reason is NackReason[reason] and result.message.error
    assert getattr(decoder.stats, counter) == 1 and decoder.stats.frames == 1
    if counter != "version_mismatches":  # decode_frame reports the version, not checks it
        with pytest.raises(PackingError):
            decode_frame(frame)


def test_hello_frames_of_another_version_are_still_parsed() -> None:
    reply = HelloReply(2, 16, 0, PROTOCOL_VERSION + 1, 6, 1000, 100, 1, bytes(32))
    for version in (1, PROTOCOL_VERSION + 1):  # a v1 peer's decoder; a future version's
        decoder = FrameDecoder(version)
        (frame,) = decoder.feed(encode_frame(reply, 0))
        assert frame.message == reply and frame.version == HELLO_FRAME_VERSION
        assert decoder.stats.version_mismatches == 0


def test_a_partial_frame_at_start_up_is_dropped_without_an_error() -> None:
    """A port opened mid-frame: the bytes before the first delimiter are not a CRC error."""
    frame = encode_frame(
        StateData.from_arrays(1, *np.zeros((5, 2)), [1, 1], motor_power=True, armed=False), 9
    )
    decoder = FrameDecoder(synced=False)
    frames = decoder.feed(frame[20:] + encode_frame(ArmRequest(), 10))
    assert [f.message for f in frames] == [ArmRequest()]
    assert decoder.stats.errors == 0 and decoder.stats.bytes_dropped == len(frame) - 21


@FAST
@given(st.binary(max_size=300))
def test_random_bytes_raise_only_packing_error_from_decode_frame(data: bytes) -> None:
    try:
        decode_frame(data)
    except PackingError:
        pass


def test_encode_frame_refuses_bad_sequence_numbers_and_huge_payloads() -> None:
    with pytest.raises(PackingError, match="seq"):
        encode_frame(ArmRequest(), 65536)
    with pytest.raises(PackingError, match="seq"):
        encode_frame(ArmRequest(), -1)
    too_big = Unparsed(9, 9, bytes(MAX_PAYLOAD + 1), NackReason.UNSUPPORTED)
    with pytest.raises(PackingError, match="MAX_PAYLOAD"):
        encode_frame(too_big, 0)
    assert len(encode_frame(MultiPositionCommand(np.zeros(255)), 0)) < MAX_ENCODED_SIZE


def test_link_stats_errors_sum_the_corruption_counters() -> None:
    stats = LinkStats(cobs_errors=1, crc_errors=2, runts=3, overruns=4, malformed=100)
    assert stats.errors == 10
    decoder = FrameDecoder()
    decoder.feed(b"\x00\x05\x01\x00" + b"\x01\x01\x00" + encode_frame(ArmRequest(), 0))
    assert decoder.stats.cobs_errors == 1 and decoder.stats.runts == 1
    decoder.reset()
    assert decoder.pending == 0 and decoder.stats.frames == 1
