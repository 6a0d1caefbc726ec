"""The device emulator: firmware logic tick by tick, the process, the pty and TCP links."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import serial
from cobs import cobs
from hardware_helpers import PATIENT, emulator_process, hold
from hypothesis import given
from hypothesis import strategies as st

import jointlab
from jointlab.hardware import Device, Emulator, EmulatorProcess
from jointlab.hardware.emulator.faults import corrupt
from jointlab.hardware.protocol import (
    MESSAGE_TYPES,
    PROTOCOL_VERSION,
    TABLE,
    Ack,
    ArmRequest,
    BrakesRequest,
    Frame,
    FrameDecoder,
    FrameEncoder,
    HelloReply,
    HelloRequest,
    MessageClass,
    Nack,
    NackReason,
    NJointCommand,
    PositionCommand,
    PowerRequest,
    SetStateRequest,
    SpeedCommand,
    StateData,
    StepRequest,
    StopMode,
    StopRequest,
    StreamRequest,
    Unparsed,
    WatchdogAction,
    WatchdogRequest,
    encode_frame,
    frame_body,
)
from jointlab.interface import NJointAction
from jointlab.robots import description_digest, load_robot
from jointlab.sim import SimRobot


# ------------------------------------------------------------------ firmware, tick by tick
class Host:
    """Frames for a Device, numbered as a host would number them."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.seq = 0

    def send(self, message: object) -> object:
        frame = Frame(1, self.seq, message)
        self.seq += 1
        return self.device.handle(frame)


@pytest.fixture
def device() -> Iterator[Device]:
    sim = SimRobot("arm6", dt=0.001, control_dt=0.001)
    yield Device(sim)
    sim.close()


def njoint(action: NJointAction) -> NJointCommand:
    return NJointCommand.from_action(action)


def test_power_up_state_and_hello(device: Device) -> None:
    host = Host(device)
    reply = host.send(HelloRequest(PROTOCOL_VERSION))
    assert isinstance(reply, HelloReply)
    assert (reply.version, reply.dof, reply.rate_hz) == (PROTOCOL_VERSION, 6, 1000)
    assert (reply.watchdog_ms, reply.stream_period) == (100, 1)
    assert reply.digest_hex == description_digest(load_robot("arm6"))
    state = device.tick()
    assert isinstance(state, StateData)
    assert state.motor_power and not state.armed and not state.brakes and not state.watchdog
    assert state.time_us == 1000


def test_nack_precedence_and_reasons(device: Device) -> None:
    host = Host(device)
    home = device.description.home
    wrong_count = host.send(njoint(NJointAction.Position(home[:3])))
    assert wrong_count.reason is NackReason.BAD_LENGTH and wrong_count.detail == 6
    nan_torque = NJointCommand(np.vstack([np.full(6, np.nan), np.full((4, 6), np.nan)]))
    assert host.send(nan_torque).reason is NackReason.INVALID_VALUE
    assert host.send(njoint(NJointAction.Position(home))).reason is NackReason.DISARMED
    assert host.send(njoint(NJointAction.Zero(6))) is None  # Zero: accepted in every state
    assert isinstance(host.send(PowerRequest(False)), Ack)
    assert host.send(njoint(NJointAction.Position(home))).reason is NackReason.UNPOWERED
    assert host.send(ArmRequest()).reason is NackReason.UNPOWERED
    host.send(PowerRequest(True))
    host.send(ArmRequest())
    host.send(BrakesRequest(True))
    assert host.send(njoint(NJointAction.Position(home))).reason is NackReason.BRAKED
    host.send(BrakesRequest(False))
    assert host.send(PositionCommand(0, 99.0)).reason is NackReason.OUT_OF_LIMITS
    refused = host.send(PositionCommand(9, 0.0))
    assert refused.reason is NackReason.UNKNOWN_JOINT and refused.detail == 9
    assert "does not exist" in TABLE.describe(refused)


def test_unknown_and_unsupported_frames_get_nack_unsupported_replies_none(device: Device) -> None:
    unknown = Unparsed(2, 99, b"", NackReason.UNSUPPORTED)
    reply = device.handle(Frame(2, 0, unknown))
    assert isinstance(reply, Nack) and reply.reason is NackReason.UNSUPPORTED
    version = Unparsed(1, 16, b"\x00", NackReason.VERSION_MISMATCH)
    assert device.handle(Frame(1, 1, version)).detail == PROTOCOL_VERSION
    data = device.handle(Frame(2, 2, device.state()))  # a DATA frame sent to a device
    assert isinstance(data, Nack) and data.reason is NackReason.UNSUPPORTED
    for lockstep_only in (StepRequest(1), SetStateRequest.from_arrays(np.zeros(6), np.zeros(6))):
        refused = device.handle(Frame(2, 3, lockstep_only))  # a real-time device
        assert refused.reason is NackReason.UNSUPPORTED and device.tick_count == 0
    assert device.handle(Frame(2, 4, Ack(2, 17, 0))) is None  # replies are never answered
    assert device.handle(Frame(2, 5, Unparsed(5, 9, b"", NackReason.UNSUPPORTED))) is None


def test_a_command_takes_effect_at_the_next_tick(device: Device) -> None:
    host = Host(device)
    host.send(ArmRequest())
    device.tick()
    host.send(njoint(NJointAction.Torque(np.full(6, 1.0))))
    assert not device.applied  # accepted, not yet in force
    state = device.tick()
    (applied,) = device.applied
    assert applied.tick == device.tick_count == 2 and applied.seq == 1
    np.testing.assert_allclose(state.actuators["torque"][:3], 1.0)


def test_device_runs_the_simulators_own_pd_law_bit_for_bit(device: Device) -> None:
    host = Host(device)
    host.send(ArmRequest())
    reference = SimRobot("arm6", dt=0.001, control_dt=0.001)
    try:
        rng = np.random.default_rng(0)
        for _ in range(50):
            target = device.description.home + rng.normal(scale=0.05, size=6)
            command = njoint(NJointAction.Position(target))
            host.send(command)
            state = device.tick()
            reference.apply(command.to_action())  # the float32 wire values
            reference.step()
            expected = reference.read()
            np.testing.assert_array_equal(
                state.actuators["position"], expected.position.astype("f4")
            )
            np.testing.assert_array_equal(state.actuators["torque"], expected.torque.astype("f4"))
    finally:
        reference.close()


@pytest.mark.parametrize("period", [1, 3])
def test_watchdog_engages_within_timeout_plus_one_period(device: Device, period: int) -> None:
    host = Host(device)
    host.send(WatchdogRequest(20, WatchdogAction.HOLD))
    host.send(StreamRequest(period))
    host.send(ArmRequest())
    host.send(njoint(NJointAction.Position(device.description.home)))
    last_command_tick = device.tick_count
    engaged_at = None
    for _ in range(100):
        state = device.tick()
        if state is not None and state.watchdog:
            engaged_at = state.time_us / 1000
            break
    assert engaged_at is not None
    assert 20 < engaged_at - last_command_tick <= 20 + period
    assert host.send(njoint(NJointAction.Position(device.description.home))) is None
    device.tick()
    assert not device.watchdog_engaged  # the next accepted command clears it


def test_watchdog_brake_refuses_motion_until_brakes_are_released(device: Device) -> None:
    host = Host(device)
    host.send(WatchdogRequest(5, WatchdogAction.BRAKE))
    host.send(ArmRequest())
    for _ in range(10):
        state = device.tick()
    assert state.watchdog and state.brakes
    motion = njoint(NJointAction.Position(device.description.home))
    assert host.send(motion).reason is NackReason.BRAKED
    host.send(BrakesRequest(False))
    assert host.send(motion) is None


def test_speed_command_then_stop_decelerate(device: Device) -> None:
    host = Host(device)
    host.send(WatchdogRequest(0))
    host.send(ArmRequest())
    assert host.send(SpeedCommand(0, 0.5)) is None
    for _ in range(300):
        state = device.tick()
    assert state.actuators["speed"][0] == pytest.approx(0.5, abs=0.05)
    host.send(StopRequest(StopMode.DECELERATE))
    for _ in range(300):
        state = device.tick()
    assert abs(state.actuators["speed"][0]) < 0.05
    assert device.setpoints.v[0] == 0.0


@pytest.fixture(scope="module")
def shared_device() -> Iterator[Device]:
    sim = SimRobot("planar2", dt=0.001, control_dt=0.001)
    yield Device(sim)
    sim.close()


@given(
    msg_class=st.integers(1, 5),
    msg_type=st.integers(0, 24),
    payload=st.binary(max_size=64),
    valid_length=st.booleans(),
)
def test_any_good_crc_frame_gets_at_most_one_reply_and_every_request_one(
    shared_device: Device, msg_class: int, msg_type: int, payload: bytes, valid_length: bool
) -> None:
    cls = MESSAGE_TYPES.get((msg_class, msg_type))
    if valid_length and cls is not None and getattr(cls, "size", None) is not None:
        size = cls.size if isinstance(cls.size, int) else len(payload)
        payload = (payload + bytes(size))[:size]
    raw = Unparsed(msg_class, msg_type, payload, NackReason.UNSPECIFIED)
    frames = FrameDecoder().feed(encode_frame(raw, 7))
    assert len(frames) == 1  # a good CRC always makes a frame
    reply = shared_device.handle(frames[0])
    if msg_class in (MessageClass.ACK, MessageClass.NACK):
        assert reply is None  # replies are never answered
    elif msg_class != MessageClass.CMD or cls is None:
        assert reply is not None and reply.ref_seq == 7  # never silence
    for _ in range(2):
        shared_device.tick()


def test_corruption_does_not_depend_on_how_bytes_are_chunked() -> None:
    data = bytes(range(256)) * 8
    whole, hits = corrupt(data, 0.05, np.random.default_rng(1))
    rng = np.random.default_rng(1)
    parts = [corrupt(data[i : i + 100], 0.05, rng) for i in range(0, len(data), 100)]
    assert b"".join(p for p, _ in parts) == whole
    assert sum(h for _, h in parts) == hits > 0
    assert sum(a != b for a, b in zip(whole, data, strict=True)) == hits


# ------------------------------------------------------------------ the process and its links
@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorProcess]:
    with emulator_process("arm6") as process:
        yield process


def test_emulator_process_serves_a_raw_pty(emulator: EmulatorProcess) -> None:
    assert emulator.alive and emulator.path.startswith("/dev/")
    assert os.path.exists(emulator.path)
    emulator.reset()
    encoder, decoder = FrameEncoder(), FrameDecoder()
    with serial.Serial(emulator.path, timeout=2.0) as port:
        port.reset_input_buffer()
        seq, data = encoder.encode(HelloRequest(PROTOCOL_VERSION))
        port.write(data)
        replies: list = []
        for _ in range(10_000):  # bounded: each read waits at most the port's timeout
            replies += decoder.feed(port.read(port.in_waiting or 1))
            if any(isinstance(f.message, HelloReply) for f in replies):
                break
        (hello,) = [f.message for f in replies if isinstance(f.message, HelloReply)]
        assert hello.ref_seq == seq and hello.dof == 6


def test_bad_crc_frames_are_counted_and_never_answered(emulator: EmulatorProcess) -> None:
    emulator.reset()
    before = emulator.report().rx.crc_errors
    body = bytearray(frame_body(ArmRequest(), 0))
    body[2] ^= 0x01  # the type byte: ARM (17) becomes DISARM (16)... with a stale CRC
    frame = b"\x00" + cobs.encode(bytes(body)) + b"\x00"
    decoder = FrameDecoder()
    with serial.Serial(emulator.path, timeout=0.05) as port:
        port.reset_input_buffer()
        port.write(frame)
        for _ in range(200):
            report = emulator.report()
            if report.rx.crc_errors > before:
                break
        frames = decoder.feed(port.read(65536))
    assert report.rx.crc_errors == before + 1
    assert not report.armed
    assert all(isinstance(f.message, StateData) for f in frames)  # no ACK, no NACK


def test_tcp_link_serves_serial_socket_urls() -> None:
    with emulator_process("arm6", tcp_port=0) as process:
        assert process.path.startswith("socket://127.0.0.1:")
        url = f"serial://{process.path}?robot=arm6&timeout=1&dead_ms=5000"
        with jointlab.connect(url) as robot:
            robot.step()
            assert robot.read().dof == 6


def test_emulated_url_owns_its_emulator() -> None:
    robot = jointlab.connect("emulated://planar2?watchdog_ms=50", **PATIENT)
    emulator = robot.emulator
    try:
        assert robot.description.name == "planar2"
        assert robot.device.watchdog_ms == 50
        robot.arm()
        hold(robot, 20)
    finally:
        robot.close()
    assert not emulator.alive


def test_emulator_command_line_prints_the_pty_path() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "jointlab.hardware.emulator", "planar2", "--duration", "0.1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert "/dev/pts/" in result.stdout


def test_in_process_emulator_serves_for_a_duration() -> None:
    with Emulator("planar2") as emulator:
        emulator.serve(duration=0.05)
        assert emulator.report().tick >= 1


# ------------------------------------------------------------------ the child is always reaped
def _reaped(pid: int) -> bool:
    """True when ``pid`` is no child of ours any more (reaped), False if it still is."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_an_emulated_robot_dropped_without_close_is_reaped() -> None:
    robot = jointlab.connect("emulated://planar2?lockstep=1", **PATIENT)
    pid = robot.emulator.pid
    del robot
    gc.collect()
    assert _reaped(pid)


def test_an_emulated_robot_left_open_at_interpreter_exit_is_reaped() -> None:
    script = (
        "import jointlab\n"
        "robot = jointlab.connect('emulated://planar2?lockstep=1')\n"
        "print(robot.emulator.pid, flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    pid = int(result.stdout.split()[-1])
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or "zombie" not in status.read_text()  # gone, or a new process
