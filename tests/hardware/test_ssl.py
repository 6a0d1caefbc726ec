"""The SSL ControlMessage codec (bit-exact with the crate) and the holonomic joint mapping."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlab.errors import PackingError
from jointlab.hardware.ssl.codec import (
    ControlMessage,
    Mode,
    ShootMode,
    Team,
    TriggerMode,
    holonomic_joint_velocities,
)

FAST = settings(max_examples=200, deadline=None, derandomize=True)

KNOWN = bytes.fromhex("9E 20 4E 10 27 FF 7F FB 03 40")

messages = st.builds(
    ControlMessage,
    team=st.sampled_from(Team),
    robot_id=st.integers(0, 15),
    shoot_mode=st.sampled_from(ShootMode),
    trigger_mode=st.sampled_from(TriggerMode),
    body_x=st.integers(-32768, 32767),
    body_y=st.integers(-32768, 32767),
    body_w=st.integers(-32768, 32767),
    dribbler_speed=st.integers(-128, 127),
    kick_strength=st.integers(0, 255),
    role=st.integers(0, 3),
    mode=st.sampled_from(Mode),
)


def known_message() -> ControlMessage:
    return ControlMessage.from_velocity(
        Team.YELLOW,
        3,
        20.0,
        10.0,
        45.0,
        dribbler_speed=-5,
        kick_strength=3,
        shoot_mode=ShootMode.CHIP,
        trigger_mode=TriggerMode.ON_BREAK_BEAM,
        role=1,
        mode=Mode.DEFAULT,
    )


def test_known_vector_packs_byte_for_byte() -> None:
    message = known_message()
    assert message.pack() == KNOWN
    assert (message.body_x, message.body_y, message.body_w) == (20000, 10000, 32767)
    assert ControlMessage.unpack(KNOWN) == message
    assert len(message) == ControlMessage.size == 10


def test_enum_numbers() -> None:
    assert [int(m) for m in Mode] == list(range(8))
    assert Mode.PROGRAM_KICK_ON_BREAKBEAM == 4 and Mode.FPGA_TEST == 7
    assert (Team.BLUE, Team.YELLOW, ShootMode.KICK, ShootMode.CHIP) == (0, 1, 0, 1)
    assert (TriggerMode.STAND_DOWN, TriggerMode.IMMEDIATE, TriggerMode.ON_BREAK_BEAM) == (0, 1, 2)


@FAST
@given(messages)
def test_round_trip_over_all_field_ranges(message: ControlMessage) -> None:
    data = message.pack()
    assert len(data) == 10
    assert ControlMessage.unpack(data) == message


@FAST
@given(st.binary(min_size=10, max_size=10))
def test_any_ten_bytes_unpack_or_raise_packing_error(data: bytes) -> None:
    try:
        message = ControlMessage.unpack(data)
    except PackingError:
        assert data[0] & 0x03 == 3 or data[9] & 0x3F > 7  # the only invalid encodings
        return
    assert message.pack() == data


@pytest.mark.parametrize("length", [0, 1, 5, 9, 11, 20])
def test_wrong_buffer_length_raises_packing_error(length: int) -> None:
    with pytest.raises(PackingError, match="10 bytes"):
        ControlMessage.unpack(KNOWN[:length] if length <= 10 else KNOWN + bytes(length - 10))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("team", 2),
        ("robot_id", 16),
        ("robot_id", -1),
        ("shoot_mode", 2),
        ("trigger_mode", 3),
        ("body_x", 32768),
        ("body_y", -32769),
        ("body_w", 1.5),
        ("dribbler_speed", 128),
        ("dribbler_speed", -129),
        ("kick_strength", 256),
        ("role", 4),
        ("mode", 8),
    ],
)
def test_out_of_range_fields_raise_packing_error(field: str, value: object) -> None:
    fields = {
        "team": 0,
        "robot_id": 0,
        "shoot_mode": 0,
        "trigger_mode": 0,
        "body_x": 0,
        "body_y": 0,
        "body_w": 0,
        "dribbler_speed": 0,
        "kick_strength": 0,
        "role": 0,
        "mode": 0,
    }
    fields[field] = value
    with pytest.raises(PackingError, match=field):
        ControlMessage(**fields)


def test_from_velocity_truncates_saturates_and_refuses_nan() -> None:
    message = ControlMessage.from_velocity(0, 1, 1.2345, -1.2345, -1e9)
    assert (message.body_x, message.body_y, message.body_w) == (1234, -1234, -32768)
    assert ControlMessage.from_velocity(0, 1, math.inf, -math.inf, 0.0).body_x == 32767
    assert message.get_velocity() == (1.234, -1.234, -32.768)
    with pytest.raises(PackingError, match="body_y"):
        ControlMessage.from_velocity(0, 1, 0.0, math.nan, 0.0)
    with pytest.raises(PackingError, match="body_w"):
        ControlMessage.from_velocity(0, 1, 0.0, 0.0, "fast")


@FAST
@given(st.floats(-30.0, 30.0), st.floats(-30.0, 30.0), st.floats(-30.0, 30.0))
def test_velocity_round_trip_within_one_millimetre_per_second(x, y, w) -> None:
    message = ControlMessage.from_velocity(Team.BLUE, 0, x, y, w)
    got = message.get_velocity()
    for sent, back in zip((x, y, w), got, strict=True):
        assert abs(sent - back) <= 1e-3 + 1e-6 or abs(back) == 32.767


def test_holonomic_mapping_rotates_body_velocity_and_fires_the_kicker() -> None:
    message = ControlMessage.from_velocity(
        Team.BLUE,
        0,
        1.0,
        0.0,
        0.5,
        dribbler_speed=127,
        kick_strength=255,
        trigger_mode=TriggerMode.ON_BREAK_BEAM,
    )
    targets = holonomic_joint_velocities(
        message, math.pi / 2, dribbler_max_speed=200.0, kicker_speed=6.0
    )
    np.testing.assert_allclose(targets, [0.0, 1.0, 0.5, 200.0, 0.0], atol=1e-12)
    fired = holonomic_joint_velocities(
        message, 0.0, dribbler_max_speed=200.0, kicker_speed=6.0, break_beam=True
    )
    np.testing.assert_allclose(fired, [1.0, 0.0, 0.5, 200.0, 6.0])
    stand_down = ControlMessage.from_velocity(
        0, 0, 0.0, 0.0, 0.0, kick_strength=255, dribbler_speed=-128
    )
    assert holonomic_joint_velocities(
        stand_down, dribbler_max_speed=10.0, kicker_speed=6.0, break_beam=True
    ).tolist() == [0.0, 0.0, 0.0, -10.0, 0.0]
