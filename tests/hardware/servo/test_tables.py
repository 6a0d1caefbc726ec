"""Control tables against the vendors' own data; codecs against the vendors' SDKs."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointlab.errors import ConfigurationError
from jointlab.hardware.dynamixel import protocol as dxp
from jointlab.hardware.dynamixel.tables import XL330_M077, XL330_M288, XL430_W250
from jointlab.hardware.feetech import protocol as ftp
from jointlab.hardware.feetech.tables import STS3215
from jointlab.hardware.servo.control_table import Encoding

dynamixel_sdk = pytest.importorskip("dynamixel_sdk")
scservo_sdk = pytest.importorskip("scservo_sdk")


def sdk_model_file(name: str) -> dict[str, tuple[int, int]]:
    """``Data Name -> (address, size)`` from the .model file ROBOTIS ships in dynamixel-sdk."""
    text = resources.files("dynamixel_easy_sdk").joinpath(f"control_table/{name}.model").read_text()
    table = text.split("[control table]")[1].strip().splitlines()[2:]
    entries = {}
    for line in table:
        address, size, label = line.split("\t")
        entries.setdefault(label.strip(), (int(address), int(size)))
    return entries


@pytest.mark.parametrize(
    ("model", "file"),
    # The XL330 files for firmware 52 (our Firmware Version register's value): earlier XL330
    # firmware had Indirect Data 1 at 224, firmware 52 and the e-Manual have it at 208.
    [
        (XL430_W250, "xl430_w250"),
        (XL330_M288, "xl330_m288_fw52"),
        (XL330_M077, "xl330_m077_fw52"),
    ],
)
def test_dynamixel_addresses_and_sizes_are_robotis_own(model, file) -> None:
    shipped = sdk_model_file(file)
    checked = 0
    for register in model.table:
        if register.label in shipped:
            assert (register.address, register.size) == shipped[register.label], register.label
            checked += 1
    assert checked >= 40  # nearly every register of ours is in ROBOTIS' file
    numbers = resources.files("dynamixel_easy_sdk").joinpath("control_table/dynamixel.model")
    listed = dict(line.split("\t")[::-1] for line in numbers.read_text().splitlines()[1:] if line)
    base = file.removesuffix("_fw52")
    assert int(listed[f"{base}.model"]) == model.model_number
    assert model.table["firmware_version"].initial == 52


def test_the_documented_registers_of_each_model() -> None:
    t = XL430_W250.table
    assert (t["operating_mode"].address, t["torque_enable"].address) == (11, 64)
    assert (
        t["goal_position"].address,
        t["present_position"].address,
        t["bus_watchdog"].address,
    ) == (116, 132, 98)
    assert "goal_current" not in t and XL430_W250.modes == {"position": 3}
    assert XL330_M288.table["goal_current"].address == 102 and XL330_M288.modes["current"] == 0
    s = STS3215.table
    assert (
        s["goal_position"].address,
        s["present_position"].address,
        s["present_load"].address,
    ) == (42, 56, 60)
    assert (s["torque_enable"].address, s["present_current"].address, STS3215.model_number) == (
        40,
        69,
        777,
    )
    assert (
        s["present_position"].sign_bit,
        s["present_load"].sign_bit,
        s["homing_offset"].sign_bit,
    ) == (15, 10, 11)


def test_sign_magnitude_values_as_the_vendor_library_reads_them() -> None:
    load, speed = STS3215.table["present_load"], STS3215.table["present_velocity"]
    assert load.encode(np.array([-5]))[0].tolist() == [0x05, 0x04]  # bit 10 is the sign
    assert speed.encode(np.array([-5]))[0].tolist() == [0x05, 0x80]  # bit 15
    assert speed.decode(np.array([[0x05, 0x80]]))[0] == scservo_sdk.SCS_TOHOST(0x8005, 15)
    with pytest.raises(ConfigurationError, match="Present Load"):
        load.encode(np.array([1 << 10]))


@given(
    st.sampled_from([r for m in (XL430_W250, XL330_M288, XL330_M077, STS3215) for r in m.table]),
    st.integers(-(2**31), 2**31 - 1),
)
def test_register_encodings_round_trip(register, value) -> None:
    low, high = register.raw_range
    value = min(max(value, low), high)
    raw = register.encode(np.array([value]))
    assert raw.shape == (1, register.size)
    assert register.decode(raw)[0] == value
    if register.encoding is Encoding.SIGNED and register.size in (2, 4):
        assert raw[0].tobytes() == int(value).to_bytes(register.size, "little", signed=True)


@given(st.binary(max_size=64))
def test_crc16_is_the_sdks(data) -> None:
    handler = dynamixel_sdk.PacketHandler(2.0)
    assert dxp.crc16(data) == handler.updateCRC(0, list(data), len(data))


@given(st.integers(0, 252), st.sampled_from(list(dxp.Instruction)), st.binary(max_size=40))
def test_dynamixel_packets_stuff_and_parse_as_the_sdk_does(servo_id, instruction, params) -> None:
    params = params + b"\xff\xff\xfd"  # always something to stuff
    packet = dxp.encode_packet(servo_id, instruction, params)
    handler = dynamixel_sdk.PacketHandler(2.0)
    sdk = [
        0,
        0,
        0,
        0,
        servo_id,
        (len(params) + 3) & 0xFF,
        (len(params) + 3) >> 8,
        int(instruction),
        *params,
        0,
        0,
    ]
    stuffed = handler.addStuffing(sdk)
    length = stuffed[5] | stuffed[6] << 8
    crc = handler.updateCRC(0, [0xFF, 0xFF, 0xFD, 0, *stuffed[4 : 7 + length - 2]], 5 + length)
    expected = bytes([0xFF, 0xFF, 0xFD, 0, *stuffed[4 : 7 + length - 2], crc & 0xFF, crc >> 8])
    assert packet == expected
    decoded = dxp.PacketDecoder().feed(b"\x00\x12" + packet)
    assert decoded == [dxp.Packet(servo_id, int(instruction), params, len(packet))]


@given(st.integers(0, 253), st.integers(0, 255), st.binary(max_size=30))
def test_feetech_packets_carry_the_sdks_checksum(servo_id, code, params) -> None:
    packet = ftp.encode_packet(servo_id, code, params)
    assert packet[:2] == b"\xff\xff" and packet[3] == len(params) + 2
    assert packet[-1] == (~sum(packet[2:-1])) & 0xFF
    assert ftp.PacketDecoder().feed(packet) == [ftp.Packet(servo_id, code, params, len(packet))]
    corrupt = packet[:-1] + bytes([packet[-1] ^ 1])
    assert not ftp.PacketDecoder().feed(corrupt)[0].crc_ok
