"""Processor in the loop: the plant link, the plant server, and the firmware in QEMU on it.

The plant-link codec and :class:`PlantServer` are checked on their own (hypothesis for the
codec: every frame round-trips, every damaged one is refused); then the firmware's PIL build
runs in ``qemu-system-arm`` behind ``emulated://arm6?device=firmware`` in lockstep: the
physics stepped exactly once per firmware tick, whatever the machine's load, and QEMU is
gone after ``close()``. Missing tools and emulator-only options give errors that say what
to do.
"""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jointlab
from jointlab.errors import ConfigurationError, LinkError, PackingError
from jointlab.hardware.emulator.plant import (
    BRAKES,
    LOCKSTEP,
    POWER,
    PlantFrame,
    PlantServer,
    PlantType,
    decode_plant,
    encode_plant,
)
from jointlab.hardware.emulator.qemu import FIRMWARE_ELF, FirmwareDevice
from jointlab.interface import NJointAction
from jointlab.robots import load_robot
from jointlab.sim import SimRobot

ARM6 = load_robot("arm6")
LOCKSTEP_FIRMWARE = "emulated://arm6?device=firmware&lockstep=1"


# ====================================================================== the codec
@st.composite
def frames(draw: st.DrawFn) -> PlantFrame:
    dof, count = draw(st.integers(1, 16)), draw(st.integers(0, 3))
    kind = draw(st.sampled_from([PlantType.HELLO, PlantType.STEP, PlantType.SET, PlantType.STATE]))
    values = draw(st.lists(st.floats(width=32), min_size=count * dof, max_size=count * dof))
    return PlantFrame(
        kind,
        draw(st.integers(0, 2**32 - 1)),
        draw(st.integers(0, 255)),
        dof,
        np.array(values, np.float32),
    )


@given(frames())
def test_every_plant_frame_round_trips(frame: PlantFrame) -> None:
    wire = encode_plant(frame)
    assert wire.endswith(b"\x00") and b"\x00" not in wire[:-1]
    back = decode_plant(wire[:-1])
    assert (back.type, back.tick, back.flags, back.dof) == (
        frame.type,
        frame.tick,
        frame.flags,
        frame.dof,
    )
    np.testing.assert_array_equal(back.values.view(np.uint32), frame.values.view(np.uint32))


@given(frames(), st.data())
def test_a_damaged_plant_frame_is_refused(frame: PlantFrame, data: st.DataObject) -> None:
    run = bytearray(encode_plant(frame)[:-1])
    if data.draw(st.booleans(), label="truncate"):
        del run[data.draw(st.integers(0, len(run) - 1), label="cut") :]
    else:
        index = data.draw(st.integers(0, len(run) - 1), label="byte")
        run[index] ^= 1 << data.draw(st.integers(0, 7), label="bit")
        if run[index] == 0:  # a 0x00 would have split the run: that is a truncation
            del run[index:]
    with pytest.raises(PackingError, match="plant frame"):
        decode_plant(bytes(run))


# ====================================================================== the plant server
@pytest.fixture
def plant() -> Iterator[PlantServer]:
    with tempfile.TemporaryDirectory() as directory:
        server = PlantServer(ARM6, os.path.join(directory, "plant.sock"), lockstep=True)
        yield server
        server.close()


def step(tick: int, tau: np.ndarray, flags: int = POWER) -> PlantFrame:
    return PlantFrame(PlantType.STEP, tick, flags, 6, np.asarray(tau, np.float32))


def test_the_plant_steps_once_per_tick_as_the_simulator_does(plant: PlantServer) -> None:
    hello = plant.answer(PlantFrame(PlantType.HELLO, 0, 0, 6, np.zeros(0, np.float32)))
    assert hello.type == PlantType.STATE and hello.flags == LOCKSTEP
    np.testing.assert_allclose(hello.values[:6], ARM6.home, atol=1e-7)
    twin = SimRobot(ARM6, dt=1e-3, control_dt=1e-3)
    try:
        tau = np.array([0.5, -3.0, 2.0, 0.1, 0.0, 0.2])
        for tick in (1, 2, 3):
            state = plant.answer(step(tick, tau))
            twin.apply(NJointAction.Torque(tau.astype(np.float32).astype(np.float64)))
            twin.step()
            assert state.tick == tick
            s = twin.read()
            expected = np.concatenate([s.position, s.velocity, s.torque])
            np.testing.assert_array_equal(state.values, expected.astype(np.float32))
        again = plant.answer(step(3, tau))  # the firmware asking again: no second step
        np.testing.assert_array_equal(again.values, state.values)
        assert plant.steps == 3
    finally:
        twin.close()


def test_brakes_and_power_off_reach_the_plant_and_hold_the_joints(plant: PlantServer) -> None:
    tau = np.full(6, 5.0)
    plant.answer(step(1, np.zeros(6)))
    engaged = plant.answer(step(2, tau, POWER | BRAKES)).values
    braked = plant.answer(step(3, tau, POWER | BRAKES)).values
    held = np.flatnonzero(ARM6.has_brakes)  # the joints with brakes; the others fall freely
    assert held.size
    # held, to the simulator's brake model (a stiff lock, not an exact one), under 5 N·m
    np.testing.assert_allclose(braked[6:12][held], 0.0, atol=1e-3)
    np.testing.assert_allclose(braked[:6][held], engaged[:6][held], atol=1e-6)
    moved = plant.answer(step(4, tau, POWER)).values  # released and powered: it moves
    assert np.abs(moved[6:12]).max() > 1e-3


def test_set_puts_the_joints_there_and_a_foreign_frame_is_a_link_error(
    plant: PlantServer,
) -> None:
    q = ARM6.home + 0.1
    values = np.concatenate([q, np.zeros(6)]).astype(np.float32)
    state = plant.answer(PlantFrame(PlantType.SET, 7, 0, 6, values))
    np.testing.assert_allclose(state.values[:6], q, atol=1e-6)
    with pytest.raises(LinkError, match="a frame for 4 joints, the plant has 6"):
        plant.answer(PlantFrame(PlantType.STEP, 8, POWER, 4, np.zeros(4, np.float32)))
    with pytest.raises(LinkError, match="unexpected frame type 129"):
        plant.answer(PlantFrame(PlantType.STATE, 8, 0, 6, np.zeros(12, np.float32)))


def test_the_plant_answers_a_damaged_request_so_the_firmware_asks_again(
    plant: PlantServer,
) -> None:
    plant.start()
    with socket.socket(socket.AF_UNIX) as link:
        link.connect(plant._listener.getsockname())
        wire = bytearray(encode_plant(step(1, np.zeros(6))))
        wire[3] ^= 0x10
        link.sendall(bytes(wire) + encode_plant(step(1, np.zeros(6))))
        link.settimeout(10.0)
        received = b""
        while received.count(b"\x00") < 2:
            received += link.recv(4096)
    nak, state = (decode_plant(run) for run in received.split(b"\x00")[:2])
    assert nak.tick == 0xFFFFFFFF and state.tick == 1
    assert plant.bad_frames == 1 and plant.steps == 1


# ====================================================================== errors
def test_missing_qemu_or_firmware_build_names_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(ConfigurationError, match=r"firmware-pil\.elf.*`make firmware`"):
        FirmwareDevice(ARM6, elf=tmp_path / "firmware-pil.elf")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigurationError, match="Debian package qemu-system-arm"):
        jointlab.connect(LOCKSTEP_FIRMWARE)


def test_a_build_for_another_robot_is_refused_before_qemu_starts(pil_firmware: None) -> None:
    with pytest.raises(ConfigurationError, match=r"not for robot 'planar2'.*ROBOT=planar2"):
        FirmwareDevice(load_robot("planar2"), elf=FIRMWARE_ELF)  # arm6's


@pytest.mark.parametrize("query", ["rate=500", "watchdog_ms=50", "tcp=0", "fifo=1", "device=fpga"])
def test_options_the_firmware_device_does_not_take_are_refused(query: str) -> None:
    with pytest.raises(ConfigurationError, match=r"Python emulator|expected emulator"):
        jointlab.connect(
            f"emulated://arm6?device=firmware&{query}".replace(
                "device=firmware&device=fpga", "device=fpga"
            )
        )


# ====================================================================== in QEMU
@pytest.mark.slow
def test_the_firmware_runs_on_the_physics_in_lockstep_and_qemu_stops(pil_firmware: None) -> None:
    with jointlab.connect(LOCKSTEP_FIRMWARE + "&stream_period=10") as robot:
        process = robot.firmware.process
        assert robot.read().time == 0.0 and not robot.read().armed
        robot.arm()
        target = ARM6.home + np.array([0.2, -0.1, 0.1, 0.0, 0.1, 0.0])
        robot.apply(NJointAction.Position(target))
        for _ in range(50):  # 0.5 s of device time
            robot.step()
        state = robot.read()
        assert state.time == pytest.approx(0.5)
        assert robot.firmware.plant.steps == 500  # exactly one physics step per tick
        assert robot.firmware.plant.error is None and robot.firmware.plant.bad_frames == 0
        np.testing.assert_allclose(state.position, target, atol=0.05)
    assert process.poll() is not None  # close() stopped QEMU


@pytest.mark.slow
def test_in_real_time_the_firmware_ticks_on_its_timer_and_steps_the_physics_per_tick(
    pil_firmware: None,
) -> None:
    with jointlab.connect("emulated://arm6?device=firmware&stream_period=10") as robot:
        assert robot.realtime
        robot.arm()
        for _ in range(5):
            robot.step()
        ticks = round(robot.read().time * 1000)
        assert ticks >= 40
        plant = robot.firmware.plant
    assert plant.error is None
    assert plant.last_tick >= ticks
    assert plant.steps == plant.last_tick  # every tick stepped the physics once, none twice
