"""Foreign peers: an old (version 1) host or device, and a device that sends the wrong state.

The emulator cannot misbehave in these ways, so the other end here is a small scripted
device on a real pseudo-terminal (:class:`ScriptedDevice`): it speaks real frames, decided
by the test, byte for byte. The host side is the real ``SerialRobot``.
"""

from __future__ import annotations

import os
import select
import threading
import tty
from binascii import crc_hqx
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest
import serial
from cobs import cobs
from hardware_helpers import emulator_process

from jointlab.errors import LinkError
from jointlab.hardware import SerialRobot
from jointlab.hardware.protocol import (
    HEADER,
    PROTOCOL_VERSION,
    FrameDecoder,
    FrameEncoder,
    HelloReply,
    HelloRequest,
    Message,
    NackReason,
    StateData,
    Unparsed,
    WatchdogRequest,
)
from jointlab.robots import description_digest, load_robot

ARM6 = load_robot("arm6")
#: What a version 1 host sends first (docs/protocol.md of version 1, section 12).
V1_HELLO = bytes.fromhex("00 04 01 02 10 01 02 01 04 01 2b 9b 00")


def state(dof: int, tick: int) -> StateData:
    zeros = np.zeros((5, dof))
    return StateData.from_arrays(
        tick * 1000, *zeros, np.ones(dof, np.uint8), motor_power=True, armed=False
    )


def hello_reply(request: object, version: int = PROTOCOL_VERSION, dof: int = 6) -> HelloReply:
    digest = bytes.fromhex(description_digest(ARM6))
    return HelloReply.reply_to(
        request,
        version=version,
        dof=dof,
        rate_hz=1000,
        watchdog_ms=100,
        stream_period=1,
        digest=digest,
    )


class ScriptedDevice:
    """A pty whose device end answers frames with ``respond(frame)`` and streams ``stream()``."""

    def __init__(
        self,
        respond: Callable[[object], list[Message]],
        stream: Callable[[int], Message | None] = lambda tick: None,
    ) -> None:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.path = os.ttyname(self._slave)
        self._respond, self._stream = respond, stream
        self._encoder, self._decoder = FrameEncoder(), FrameDecoder(synced=False)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        tick = 0
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.001)
            if ready:
                for frame in self._decoder.feed(os.read(self._master, 4096)):
                    for reply in self._respond(frame):
                        os.write(self._master, self._encoder.encode(reply)[1])
            tick += 1
            streamed = self._stream(tick)
            if streamed is not None:
                os.write(self._master, self._encoder.encode(streamed)[1])

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        for fd in (self._master, self._slave):
            os.close(fd)


@contextmanager
def scripted(
    respond: Callable[[object], list[Message]],
    stream: Callable[[int], Message | None] = lambda tick: None,
) -> Iterator[ScriptedDevice]:
    device = ScriptedDevice(respond, stream)
    try:
        yield device
    finally:
        device.close()


def v1_frame(message: Message, seq: int) -> bytes:
    """A frame exactly as a version 1 peer sends it: header version 1, CRC-16 big-endian."""
    body = HEADER.pack(1, message.msg_class, message.msg_type, seq, message.size) + message.pack()
    return b"\x00" + cobs.encode(body + crc_hqx(body, 0xFFFF).to_bytes(2, "big")) + b"\x00"


def test_a_version_1_device_gets_an_error_naming_both_versions() -> None:
    def respond(frame: object) -> list[Message]:
        if isinstance(frame.message, HelloRequest):  # type: ignore[attr-defined]
            return [hello_reply(frame, version=1)]
        return []

    with scripted(respond) as device, pytest.raises(LinkError) as info:
        SerialRobot(device.path, "arm6", connect_timeout=10.0)
    message = str(info.value)
    assert "speaks protocol version 1" in message and "this host speaks version 2" in message
    assert "update the device firmware" in message


def test_a_version_1_host_can_read_the_reply_of_a_version_2_device() -> None:
    """The v1 HELLO bytes, answered in the v1 frame format with the v2 version inside."""
    with emulator_process("arm6", lockstep=True) as emulator:
        with serial.Serial(emulator.path, timeout=5.0) as port:
            port.reset_input_buffer()
            port.write(V1_HELLO)
            data, chunks = b"", []
            for _ in range(1000):  # bounded: each read waits at most the port's timeout
                data += port.read(port.in_waiting or 1)
                chunks = [c for c in data.split(b"\x00")[:-1] if c]  # whole runs only
                if chunks:
                    break
    (chunk,) = chunks
    raw = cobs.decode(chunk)
    assert crc_hqx(raw, 0xFFFF) == 0  # the version 1 check passes
    version, msg_class, msg_type, seq, length = HEADER.unpack_from(raw)
    assert (version, msg_class, msg_type, seq, length) == (1, 4, 16, 0, HelloReply.size)
    reply = HelloReply.unpack(raw[HEADER.size : -2])  # version 1's layout
    assert reply.version == PROTOCOL_VERSION == 2 and reply.dof == 6


def test_a_version_1_command_after_the_handshake_is_nacked_version_mismatch() -> None:
    with emulator_process("arm6", lockstep=True) as emulator:
        with serial.Serial(emulator.path, timeout=5.0) as port:
            port.reset_input_buffer()
            port.write(v1_frame(WatchdogRequest(50), 1))
            decoder, replies = FrameDecoder(synced=False), []
            for _ in range(1000):  # bounded: each read waits at most the port's timeout
                replies = [f.message for f in decoder.feed(port.read(port.in_waiting or 1))]
                if replies:
                    break
    (nack,) = replies
    assert nack.reason.name == "VERSION_MISMATCH" and nack.detail == PROTOCOL_VERSION


def test_states_with_the_wrong_joint_count_are_rejected_counted_and_named() -> None:
    def respond(frame: object) -> list[Message]:
        if isinstance(frame.message, HelloRequest):  # type: ignore[attr-defined]
            return [hello_reply(frame)]
        return []

    with scripted(respond, lambda tick: state(5, tick)) as device:  # 5 joints for a 6-DoF robot
        with pytest.raises(LinkError, match=r"DATA STATE for 5 joints, the robot has 6"):
            SerialRobot(device.path, "arm6", connect_timeout=2.0)


def test_a_device_that_changes_its_joint_count_never_reaches_read() -> None:
    def respond(frame: object) -> list[Message]:
        if isinstance(frame.message, HelloRequest):  # type: ignore[attr-defined]
            return [hello_reply(frame)]
        return []

    def stream(tick: int) -> Message:
        return state(6 if tick < 200 else 5, tick)  # a firmware bug after 200 ms

    with scripted(respond, stream) as device:
        with SerialRobot(device.path, "arm6", dead_ms=300, connect_timeout=10.0) as robot:
            with pytest.raises(LinkError, match=r"DATA STATE for 5 joints") as info:
                for _ in range(100_000):
                    robot.step()
                    assert robot.read().position.shape == (6,)  # never the wrong shape
            assert "rejected" in str(info.value)
            assert robot.link_stats.rejected > 0


def test_states_in_another_layout_are_dropped_counted_and_named() -> None:
    def respond(frame: object) -> list[Message]:
        if isinstance(frame.message, HelloRequest):  # type: ignore[attr-defined]
            return [hello_reply(frame)]
        return []

    def stream(tick: int) -> Message:  # a DATA STATE with 4 stray bytes: another layout
        good = state(6, tick)
        return Unparsed(
            good.msg_class, good.msg_type, good.pack() + bytes(4), NackReason.UNSPECIFIED
        )

    with scripted(respond, stream) as device:
        with pytest.raises(LinkError, match=r"did not parse \(another layout\?\)"):
            SerialRobot(device.path, "arm6", dead_ms=300, connect_timeout=1.0)
