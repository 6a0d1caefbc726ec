"""The message table: one place per message, and everything derived from it agrees.

A request with no device handler used to get no reply, and a reply class the host did not
list was dropped as junk: both ended as a dead link. These tests prove, end to end through
a real pseudo-terminal, that every request of the table is handled by the emulator and that
its reply reaches the caller, and that docs/protocol.md's table is the table.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hardware_helpers import PATIENT, emulator_process

from jointlab.errors import CommandRefused
from jointlab.hardware import Device, EmulatorProcess, SerialRobot
from jointlab.hardware.protocol import (
    TABLE,
    AccelRequest,
    ArmRequest,
    BrakesRequest,
    CurrentCommand,
    DisarmRequest,
    GeometryRequest,
    HeartbeatRequest,
    HelloRequest,
    HomeCommand,
    Message,
    MessageClass,
    MessageTable,
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
    NJointCommand,
    PositionCommand,
    PowerRequest,
    Row,
    SetStateRequest,
    SpeedCommand,
    SpeedRequest,
    StepRequest,
    StopRequest,
    StreamRequest,
    WatchdogRequest,
)
from jointlab.interface import NJointAction
from jointlab.robots import load_robot
from jointlab.sim import SimRobot

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
HOME = load_robot("arm6").home
#: A valid example of every host-to-device message (a new row needs one: see below).
EXAMPLES: dict[type[Message], Message] = {
    PositionCommand: PositionCommand(0, 0.1),
    MultiPositionCommand: MultiPositionCommand(HOME),
    SpeedCommand: SpeedCommand(1, 0.1),
    MultiSpeedCommand: MultiSpeedCommand(np.full(6, 0.05)),
    HomeCommand: HomeCommand(-1),
    CurrentCommand: CurrentCommand(2, 0.1),
    MultiCurrentCommand: MultiCurrentCommand(np.full(6, 0.1)),
    NJointCommand: NJointCommand.from_action(NJointAction.Position(HOME)),
    PowerRequest: PowerRequest(True),
    BrakesRequest: BrakesRequest(False),
    GeometryRequest: GeometryRequest(),
    SpeedRequest: SpeedRequest(0, 0.5),
    AccelRequest: AccelRequest(0, 1.0),
    HelloRequest: HelloRequest(),
    ArmRequest: ArmRequest(),
    DisarmRequest: DisarmRequest(),
    StopRequest: StopRequest(),
    HeartbeatRequest: HeartbeatRequest(),
    WatchdogRequest: WatchdogRequest(100),
    StreamRequest: StreamRequest(1),
    StepRequest: StepRequest(0),
    SetStateRequest: SetStateRequest.from_arrays(HOME, np.zeros(6)),
}
REQUESTS = [row for row in TABLE if row.msg_class is MessageClass.REQ]
COMMANDS = [row for row in TABLE if row.msg_class is MessageClass.CMD]


def test_every_host_to_device_message_has_an_example_here() -> None:
    assert set(EXAMPLES) == {row.cls for row in TABLE if row.from_host}


def test_every_host_to_device_row_names_a_device_handler() -> None:
    sim = SimRobot("arm6")
    try:
        device = Device(sim)
        for row in TABLE:
            if row.from_host:
                handler = device
                for part in str(row.handler).split("."):
                    handler = getattr(handler, part)
                assert callable(handler), row
    finally:
        sim.close()


def test_every_request_has_a_reply_of_the_device_and_commands_none() -> None:
    for row in TABLE:
        if row.msg_class is MessageClass.REQ:
            reply = TABLE.row_of(row.reply)
            assert not reply.from_host and (reply.is_reply or reply.name == "STATE"), row
        else:
            assert row.reply is None, row


@pytest.fixture(scope="module")
def devices() -> Iterator[dict[str, EmulatorProcess]]:
    with emulator_process("arm6") as realtime, emulator_process("arm6", lockstep=True) as step:
        yield {"realtime": realtime, "lockstep": step}


@pytest.mark.parametrize("mode", ["realtime", "lockstep"])
@pytest.mark.parametrize("row", REQUESTS, ids=lambda row: row.name)
def test_every_request_is_answered_with_its_reply_or_unsupported(
    devices: dict[str, EmulatorProcess], mode: str, row: Row
) -> None:
    emulator = devices[mode]
    emulator.reset()
    with SerialRobot(emulator.path, "arm6", lockstep=mode == "lockstep", **PATIENT) as robot:
        robot.arm()
        unsupported = row.lockstep_only != (mode == "lockstep") and (
            row.lockstep_only or row.cls is StreamRequest
        )
        if unsupported:  # answered, never silent: NACK UNSUPPORTED
            with pytest.raises(CommandRefused) as info:
                robot.request(EXAMPLES[row.cls])
            assert info.value.reason == "unsupported"
        else:
            reply = robot.request(EXAMPLES[row.cls])
            assert type(reply) is row.reply


@pytest.mark.parametrize("row", COMMANDS, ids=lambda row: row.name)
def test_every_command_is_accepted_by_an_armed_device(
    devices: dict[str, EmulatorProcess], row: Row
) -> None:
    emulator = devices["lockstep"]
    emulator.reset()
    with SerialRobot(emulator.path, "arm6", lockstep=True, **PATIENT) as robot:
        robot.arm()
        robot.send_command(EXAMPLES[row.cls])  # raises the NACK if refused
        robot.step()
    applied = emulator.report().applied
    assert applied and applied[-1].msg_type == row.msg_type


def test_the_protocol_document_lists_exactly_the_table() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert TABLE.markdown() in text


def test_the_document_describes_every_fixed_layout_field_by_field() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for row in TABLE:
        heading = f"[`{row.cls.__name__}`]"
        assert heading in text, f"no section for {row.cls.__name__}"
        layout = getattr(row.cls, "layout", None)
        if layout is None:
            continue
        section = text[text.index(heading) :]
        section = section[: section.index("\n**", 1)] if "\n**" in section[1:] else section
        for offset, name, kind in layout():
            if name.startswith("ref_") and "| echo | 4 bytes |" in section:
                continue  # the echo of a reply, described once in section 7.4
            assert f"| {offset} | `{name}` | {kind} |" in section or (
                f"| {offset} | `" in section and f"`{name}`" in section
            ), f"{row.cls.__name__}.{name} at {offset} ({kind})"


def test_a_broken_table_is_refused_when_built() -> None:
    ok = Row(MessageClass.REQ, 30, "PING", HeartbeatRequest, StepRequest, "heartbeat")
    with pytest.raises(TypeError, match="not a device-to-host message"):
        MessageTable((ok,))
    with pytest.raises(TypeError, match="no handler"):
        MessageTable((Row(MessageClass.REQ, 30, "PING", HeartbeatRequest),))
    with pytest.raises(TypeError, match="does not echo"):
        MessageTable((Row(MessageClass.ACK, 30, "PONG", HeartbeatRequest),))
