"""Every register of the vendors' published control tables, checked against our models.

The expectations come from sources we did not write:

* the ROBOTIS e-Manual's control tables (address, size, access, initial value), transcribed
  into ``vendor_tables/<model>.csv`` (each file's header cites its page);
* LeRobot's own tables (``lerobot.motors.dynamixel.tables``, ``lerobot.motors.feetech.tables``:
  addresses, sizes, sign encodings, model numbers, resolutions, baud codes, operating modes);
* the ``.model`` files ROBOTIS ships in ``dynamixel-sdk`` (``test_tables.py``).

A register the vendor lists that our table lacks, or has at another address or size, with
another access right or another power-up value, fails here.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import yaml
from servo_helpers import emulated_bus, sdk_port

import jointlab.robots
from jointlab.hardware.dynamixel.tables import MODELS as DYNAMIXEL
from jointlab.hardware.feetech.tables import MODELS as FEETECH
from jointlab.hardware.servo.control_table import Access, Encoding, Register, ServoModel

VENDOR_TABLES = Path(__file__).parent / "vendor_tables"
LIBRARY = Path(jointlab.robots.__file__).parent / "library"
#: Registers LeRobot's single X-series table lists that the e-Manual's table of the model does
#: not have (LeRobot uses one table for the whole X series).
LEROBOT_X_EXTRAS = {
    "xl430-w250": {"Current_Limit", "Acceleration_Limit", "Goal_Current"},
    "xl330-m288": {"Acceleration_Limit"},
    "xl330-m077": {"Acceleration_Limit"},
}
#: LeRobot's names that differ from the e-Manual's for the same register (address and size).
LEROBOT_X_RENAMED = {"xl430-w250": {"Present_Current": "Present Load"}}


def published(model: str) -> list[dict[str, str]]:
    """The rows of the e-Manual table of ``model`` (``vendor_tables/<model>.csv``)."""
    lines = (VENDOR_TABLES / f"{model}.csv").read_text().splitlines()
    return list(csv.DictReader(line for line in lines if not line.startswith("#")))


def at(model: ServoModel, address: int) -> Register | None:
    """Our register of ``model`` that starts at ``address``, if any."""
    return next((r for r in model.table.registers if r.address == address), None)


def test_every_emulated_dynamixel_model_has_a_published_table() -> None:
    assert sorted(DYNAMIXEL) == sorted(p.stem for p in VENDOR_TABLES.glob("x*.csv"))


@pytest.mark.parametrize("name", sorted(DYNAMIXEL))
def test_every_published_dynamixel_register(name: str) -> None:
    model = DYNAMIXEL[name]
    rows = published(name)
    assert len(rows) >= 60
    for row in rows:
        address, size = int(row["address"]), int(row["size"])
        register = at(model, address)
        where = f"{name} {row['name']} ({address})"
        assert register is not None, f"{where}: missing from our table"
        assert register.label == row["name"], where
        assert register.size == size, where
        assert register.access is Access(row["access"]), where
        if row["initial"] != "-":
            assert register.initial == int(row["initial"]), where
    # and nothing of ours that the vendor does not list
    listed = {int(row["address"]) for row in rows}
    assert {r.address for r in model.table.registers} == listed


@pytest.mark.parametrize("name", sorted(DYNAMIXEL))
def test_the_power_up_image_holds_the_published_initial_values(name: str) -> None:
    model = DYNAMIXEL[name]
    image = model.table.initial_memory()
    for row in published(name):
        if row["initial"] == "-":
            continue
        register = at(model, int(row["address"]))
        raw = image[register.address : register.address + register.size]
        assert register.decode(raw)[0] == int(row["initial"]), row["name"]
    assert int.from_bytes(bytes(image[0:2]), "little") == model.model_number


@pytest.mark.parametrize("name", sorted(DYNAMIXEL))
def test_dynamixel_models_against_lerobots_tables(name: str) -> None:
    tables = pytest.importorskip("lerobot.motors.dynamixel.tables")
    model = DYNAMIXEL[name]
    missing = set()
    for label, (address, size) in tables.MODEL_CONTROL_TABLE[name].items():
        register = at(model, address)
        if register is None or register.size != size:
            missing.add(label)
            continue
        expected = LEROBOT_X_RENAMED.get(name, {}).get(label, label)
        assert register.label.replace("(Shadow)", "").replace(" ", "_") == expected.replace(
            " ", "_"
        ), label
    assert missing == LEROBOT_X_EXTRAS[name]
    for label in tables.MODEL_ENCODING_TABLE[name]:
        if label in missing:
            continue
        register = at(model, tables.MODEL_CONTROL_TABLE[name][label][0])
        assert register.encoding is Encoding.SIGNED, label
    assert tables.MODEL_NUMBER_TABLE[name] == model.model_number
    assert tables.MODEL_RESOLUTION[name] == model.resolution
    for rate, code in tables.MODEL_BAUDRATE_TABLE[name].items():
        assert model.baud_rates[code] == rate
    modes = {**model.modes, **model.other_modes}.values()
    assert sorted(modes) == sorted(tables.MODEL_OPERATING_MODES[name])


@pytest.mark.parametrize("name", sorted(FEETECH))
def test_feetech_models_against_lerobots_tables(name: str) -> None:
    tables = pytest.importorskip("lerobot.motors.feetech.tables")
    model = FEETECH[name]
    listed = tables.MODEL_CONTROL_TABLE[name]
    for label, (address, size) in listed.items():
        register = at(model, address)
        assert register is not None, f"{name} {label} ({address}): missing from our table"
        assert register.size == size, label
    assert {r.address for r in model.table.registers} == {a for a, _ in listed.values()}
    for label, bit in tables.MODEL_ENCODING_TABLE[name].items():
        if label not in listed:  # aliases (Goal_Speed, Present_Speed) of listed registers
            continue
        register = at(model, listed[label][0])
        assert (register.encoding, register.sign_bit) == (Encoding.SIGN_MAGNITUDE, bit), label
    assert tables.MODEL_NUMBER_TABLE[name] == model.model_number
    assert model.table["model_number"].initial == model.model_number
    assert tables.MODEL_RESOLUTION[name] == model.resolution
    # LeRobot's codes 5-7 are not Feetech's (see the next test): the rest agree
    lerobot = {code: rate for rate, code in tables.MODEL_BAUDRATE_TABLE[name].items()}
    assert {c: r for c, r in model.baud_rates.items() if c <= 4} == {
        c: r for c, r in lerobot.items() if c <= 4
    }
    assert {c: lerobot[c] for c in (5, 6, 7)} == {5: 57_600, 6: 38_400, 7: 19_200}
    read_only = {
        "Firmware_Major_Version",
        "Firmware_Minor_Version",
        "Model_Number",
        "Present_Position",
        "Present_Velocity",
        "Present_Load",
        "Present_Voltage",
        "Present_Temperature",
        "Status",
        "Moving",
        "Present_Current",
        "Goal_Position_2",
    }  # fmt: skip  (LeRobot's "# read-only" comments)
    for label in read_only:
        assert at(model, listed[label][0]).access is Access.READ, label


def test_sts3215_against_feetechs_own_sdk() -> None:
    """Addresses and baud codes of Feetech's FTServo SDK (``vendor_tables/sts3215-ftservo.csv``)."""
    model = FEETECH["sts3215"]
    rows = published("sts3215-ftservo")
    registers = [row for row in rows if row["kind"] == "register"]
    assert len(registers) >= 20
    for row in registers:
        register = at(model, int(row["address"]))
        assert register is not None, row["name"]
        assert register.size == int(row["size"]), row["name"]
    bauds = {int(row["address"]): int(row["name"]) for row in rows if row["kind"] == "baud"}
    assert bauds == model.baud_rates


def test_the_indirect_blocks_point_at_their_own_data() -> None:
    t = DYNAMIXEL["xl430-w250"].table
    assert (t["indirect_address_29"].address, t["indirect_address_29"].initial) == (578, 634)
    assert t.size == 662  # up to Indirect Data 56
    assert DYNAMIXEL["xl330-m288"].table.size == 228
    first = np.array([t["indirect_data_1"].address])
    assert t["indirect_address_1"].decode(t["indirect_address_1"].encode(first))[0] == 224


def test_indirect_addressing_through_the_sdk() -> None:
    """The e-Manual's example: Present Position and Torque Enable gathered into Indirect Data."""
    dxl = pytest.importorskip("dynamixel_sdk")
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        for servo_id, data in ((1, 224), (3, 208)):  # an XL430, an XL330: their own layouts
            assert ph.read2ByteTxRx(port, servo_id, 168)[:2] == (data, dxl.COMM_SUCCESS)
            for i, target in enumerate((132, 133, 134, 135, 64)):
                assert ph.write2ByteTxRx(port, servo_id, 168 + 2 * i, target)[:2] == (0, 0)
            present = ph.read4ByteTxRx(port, servo_id, 132)[0]
            assert ph.read4ByteTxRx(port, servo_id, data)[:2] == (present, dxl.COMM_SUCCESS)
            assert ph.write1ByteTxRx(port, servo_id, data + 4, 1) == (dxl.COMM_SUCCESS, 0)
            assert ph.read1ByteTxRx(port, servo_id, 64)[0] == 1  # the torque went on
            # a window on a read-only register refuses writes: Data Access Error (7)
            assert ph.write1ByteTxRx(port, servo_id, data, 0) == (dxl.COMM_SUCCESS, 7)
        # the XL430's second block, past address 255 (Protocol 2.0 only), starts on itself
        assert ph.read2ByteTxRx(port, 1, 578)[0] == 634
        assert ph.write1ByteTxRx(port, 1, 634, 77) == (dxl.COMM_SUCCESS, 0)
        assert ph.read1ByteTxRx(port, 1, 634)[0] == 77
        assert ph.read1ByteTxRx(port, 1, 147)[1] == dxl.COMM_SUCCESS  # Backup Ready


@pytest.mark.parametrize("name", ["xl330-m077", "xl430-w250"])
def test_a_powered_up_servo_reads_the_published_initial_values(name: str, tmp_path) -> None:
    """Through the SDK, every register with a published initial value reads it at power-up,
    except the ones the emulated bus sets up (ID, Baud Rate, Return Delay Time, Operating Mode)
    and Goal Position (the present position at power-up)."""
    dxl = pytest.importorskip("dynamixel_sdk")
    data = yaml.safe_load((LIBRARY / "koch.yaml").read_text())
    for servo in data["bus"]["servos"].values():
        servo["model"], servo["mode"] = name, "position"
    robot = tmp_path / f"koch-{name}.yaml"
    robot.write_text(yaml.safe_dump(data))
    set_up = {"ID", "Baud Rate", "Return Delay Time", "Operating Mode"}
    with emulated_bus(str(robot), lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        assert ph.ping(port, 1)[:2] == (DYNAMIXEL[name].model_number, dxl.COMM_SUCCESS)
        checked = 0
        for row in published(name):
            if row["initial"] == "-" or row["name"] in set_up:
                continue
            address, size = int(row["address"]), int(row["size"])
            data, result, error = ph.readTxRx(port, 1, address, size)
            assert (result, error) == (dxl.COMM_SUCCESS, 0), row["name"]
            value = int.from_bytes(bytes(data), "little")
            assert value == int(row["initial"]), row["name"]
            checked += 1
        assert checked >= 50
