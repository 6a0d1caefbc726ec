"""The Cortex-M3 build (QEMU mps2-an385): sizes, worst-case tick, and a real exchange over a pty.

``make -C firmware arm`` cross-compiles the core with the mps2 board layer for the robot of
the generated header (arm6); the firmware then boots in ``qemu-system-arm`` with its UART on
a pty, and the Python codec (and ``SerialRobot``) talk to it as they would to a board on
``/dev/ttyACM0``. Nothing here measures wall-clock time.
"""

from __future__ import annotations

import itertools
import os
import re
import select
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator

import numpy as np
import pytest
import serial
from cobs import cobs
from firmware_build import BUILD, make, require

from jointlab.hardware import SerialRobot
from jointlab.hardware.emulator.faults import corrupt
from jointlab.hardware.protocol import (
    Ack,
    ArmRequest,
    FrameDecoder,
    GeometryReply,
    GeometryRequest,
    HeartbeatRequest,
    HelloReply,
    HelloRequest,
    Nack,
    NackReason,
    NJointCommand,
    StateData,
    encode_frame,
)
from jointlab.interface import NJointAction
from jointlab.robots import description_digest, load_robot

DESCRIPTION = load_robot("arm6")
#: Patience for a loaded 2-core machine (an upper bound on waiting, never asserted).
PATIENT_S = 60.0


def build_arm() -> None:
    require("arm-none-eabi-gcc", "arm-none-eabi-size", "make")
    make("arm", PYTHON=sys.executable)


def test_make_arm_reports_flash_and_ram_of_a_few_kilobytes() -> None:
    build_arm()
    result = make("arm", PYTHON=sys.executable)
    found = re.search(r"flash: (\d+) bytes .* RAM: (\d+) bytes", result.stdout)
    assert found, result.stdout
    flash, ram = int(found[1]), int(found[2])
    assert 2_000 < flash < 32_768  # the core, the board layer and the arm6 parameters
    assert 500 < ram < 8_192  # receive/transmit buffers sized for JL_MAX_DOF=8


def test_make_cycles_reports_the_worst_case_tick_from_callgrind() -> None:
    require("cc", "make", "valgrind", "callgrind_annotate")
    result = make("cycles", PYTHON=sys.executable)
    found = re.search(r"worst-case tick: (\d+) instructions", result.stdout)
    assert found, result.stdout
    ticks = dict(re.findall(r"tick (\w+): (\d+) instructions", result.stdout))
    assert set(ticks) == {
        "idle_disarmed",
        "first_njoint",
        "njoint_full_pd",
        "watchdog_engages",
        "stop_decelerating",
    }
    assert int(found[1]) == max(int(n) for n in ticks.values())
    assert 1_000 < int(found[1]) < 50_000  # one tick of 6 joints and a 153-byte DATA STATE


@pytest.fixture(scope="module")
def qemu_pty() -> Iterator[str]:
    """The firmware running in qemu-system-arm; yields the pty of its UART."""
    build_arm()
    require("qemu-system-arm")
    process = subprocess.Popen(
        [
            "qemu-system-arm",
            "-M",
            "mps2-an385",
            "-nographic",
            "-monitor",
            "none",
            "-serial",
            "pty",
            "-kernel",
            str(BUILD / "firmware.elf"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        path, seen, deadline = None, "", time.monotonic() + PATIENT_S
        while path is None and time.monotonic() < deadline and process.poll() is None:
            ready, _, _ = select.select([process.stdout], [], [], 1.0)
            if ready:
                line = process.stdout.readline()  # type: ignore[union-attr]
                seen += line
                match = re.search(r"(/dev/pts/\d+)", line)
                path = match[1] if match else None
        assert path, f"qemu-system-arm printed no pty: {seen!r}"
        yield path
    finally:
        process.kill()
        process.wait(timeout=30)


def test_the_firmware_in_qemu_answers_hello_and_geometry_and_streams_state(
    qemu_pty: str,
) -> None:
    decoder = FrameDecoder(synced=False)
    frames: list = []
    with serial.Serial(qemu_pty, timeout=0.2, write_timeout=PATIENT_S) as port:
        port.write(b"\x00" + encode_frame(HelloRequest(), 0) + encode_frame(GeometryRequest(), 1))
        deadline = time.monotonic() + PATIENT_S
        while time.monotonic() < deadline:
            frames += decoder.feed(port.read(4096))
            kinds = {type(f.message) for f in frames}
            if {HelloReply, GeometryReply} <= kinds and len(frames) > 20:
                break
    messages = [f.message for f in frames]
    hello = next(m for m in messages if isinstance(m, HelloReply))
    assert (hello.version, hello.dof, hello.rate_hz) == (2, DESCRIPTION.dof, 1000)
    assert hello.digest == bytes.fromhex(
        description_digest(DESCRIPTION)
    )  # the generated header's robot
    geometry = next(m for m in messages if isinstance(m, GeometryReply))
    np.testing.assert_allclose(geometry.actuators["max"], DESCRIPTION.upper, rtol=1e-6)
    states = [m for m in messages if isinstance(m, StateData)]
    assert len(states) > 10 and not any(s.armed for s in states[-5:])
    times = [s.time_us for s in states]
    assert all(b - a == 1000 for a, b in itertools.pairwise(times))  # 1 kHz ticks
    assert decoder.stats.errors == 0


def test_serial_robot_drives_the_qemu_firmware_as_a_board(qemu_pty: str) -> None:
    """The unchanged host (``SerialRobot``): handshake, arm, move 0.1 rad, then disarm."""
    patient = {"request_timeout": 5.0, "dead_ms": 30_000, "connect_timeout": PATIENT_S}
    # 100 Hz control (10 ticks a step): QEMU feeds the emulated UART one byte at a time.
    with SerialRobot(qemu_pty, "arm6", stream_period=10, **patient) as robot:
        robot.arm()
        target = np.asarray(DESCRIPTION.home) + 0.1  # the board's motors start at home
        for _ in range(100):  # one second of device time
            robot.apply(NJointAction.Position(target))
            robot.step()
        state = robot.read()
        np.testing.assert_allclose(state.position, target, atol=0.01)
        robot.disarm()


def test_jointlab_check_brings_the_qemu_firmware_up(qemu_pty: str) -> None:
    """docs/firmware.md's bring-up command, on the QEMU board's pty."""
    env = {**os.environ, "JOINTLAB_DEAD_MS": "30000"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "jointlab",
            "check",
            f"serial://{qemu_pty}?robot=arm6",
            "--pings",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    text = result.stdout
    assert re.search(r"protocol version\W+2\b", text) and re.search(r"device joints\W+6\b", text)
    assert description_digest(DESCRIPTION)[:16] in text, text


def _damaged_frames(count: int, seed: int) -> list[bytes]:
    """NJOINT frames of 3 N·m each, every one damaged: line noise (the emulator's ``corrupt``),
    a flipped bit, a truncation or a header length that lies under a good CRC."""
    rng = np.random.default_rng(seed)
    values = np.full((5, DESCRIPTION.dof), np.nan)
    values[0] = 3.0
    frames = []
    while len(frames) < count:
        good = encode_frame(NJointCommand(values), 100 + len(frames))
        kind = len(frames) % 4
        if kind == 0:
            damaged, hits = corrupt(good[1:-1], 0.02, rng)
            if not hits:
                continue
            frames.append(b"\x00" + damaged + b"\x00")
        elif kind == 1:
            damaged = bytearray(good)
            damaged[int(rng.integers(1, len(good) - 1))] ^= 1 << int(rng.integers(8))
            frames.append(bytes(damaged))
        elif kind == 2:
            frames.append(good[: int(rng.integers(2, len(good) - 1))] + b"\x00")
        else:
            body = bytearray(cobs.decode(good[1:-1])[:-4])
            body[5:7] = int(rng.integers(0, len(body) - 7)).to_bytes(2, "little")
            body += zlib.crc32(body).to_bytes(4, "little")
            frames.append(b"\x00" + cobs.encode(bytes(body)) + b"\x00")
    return frames


def test_damaged_frames_over_the_pty_are_never_applied_and_the_device_keeps_running(
    qemu_pty: str,
) -> None:
    """Armed (holding where it stands), the QEMU device gets 120 damaged 3 N·m commands."""
    decoder = FrameDecoder(synced=False)
    frames: list = []
    done = threading.Event()

    def read_all(port: serial.Serial) -> None:  # drains the device's output meanwhile, so
        while not done.is_set():  # that it never blocks on its UART while we write
            frames.extend(decoder.feed(port.read(4096)))
            if any(isinstance(f.message, Ack) and f.message.ref_seq == 3 for f in frames):
                done.set()

    with serial.Serial(qemu_pty, timeout=0.05, write_timeout=PATIENT_S) as port:
        reader = threading.Thread(target=read_all, args=(port,), daemon=True)
        reader.start()
        port.write(b"\x00" + encode_frame(HelloRequest(), 0) + encode_frame(ArmRequest(), 1))
        for wire in _damaged_frames(120, seed=36):
            port.write(wire)
        port.write(encode_frame(HelloRequest(), 2) + encode_frame(HeartbeatRequest(), 3))
        done.wait(PATIENT_S)
        done.set()
        reader.join(timeout=PATIENT_S)
    messages = [f.message for f in frames]
    assert any(isinstance(m, Ack) and m.ref_seq == 3 for m in messages), "device stopped"
    hellos = [m for m in messages if isinstance(m, HelloReply)]
    assert [h.ref_seq for h in hellos] == [0, 2]  # no damaged frame started a session
    for message in messages:  # the only replies: ACKs of our requests, BAD_LENGTH NACKs
        if isinstance(message, Nack):
            assert message.reason is NackReason.BAD_LENGTH and message.ref_seq >= 100
    states = [m for m in messages if isinstance(m, StateData)]
    assert len(states) > 5
    # An applied command would drive 3 N·m; holding the latched position drives ~0.
    assert max(abs(s.actuators["torque"]).max() for s in states) < 0.5
    assert any(s.armed for s in states)  # the damage reached an armed device
    times = [s.time_us for s in states]
    assert times == sorted(times) and times[0] > 0  # never reset
