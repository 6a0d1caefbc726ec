"""The plant link of processor-in-the-loop firmware: JointLab's physics behind a second UART.

The reference firmware's PIL board (``firmware/arm/board_pil.c``) has no motors: at every
tick it sends the torques it computed to the plant and waits for the joint state after one
physics step (docs/firmware.md, "Processor in the loop"). :class:`PlantServer` is that
plant: a :class:`~jointlab.sim.SimRobot` stepped once per STEP frame, listening on a Unix
socket that QEMU's UART1 connects to (``-chardev socket,path=...``).

A frame is ``COBS(body + CRC-32 LE of body) 0x00``, as on the host link (docs/protocol.md
section 2), with the body ``type u8 | tick u32 | flags u8 | n u8 | values f32[...]``:

==========  =====================  ==================================================
type        values                 meaning
==========  =====================  ==================================================
1 HELLO     none                   boot: the initial state, the mode in ``flags``
2 STEP      torque[n], N·m (N)     one physics step at ``tick``; flags: 1 power, 2 brakes
3 SET       q[n], qd[n]            put the joints there (REQ SET_STATE), no step
0x81 STATE  q[n], qd[n], tau[n]    the answer to each: rad (m), rad/s (m/s), the torque
                                   the actuators applied in the last step, N·m (N)
                                   (after the actuator model); flags 1 lockstep
==========  =====================  ==================================================

A STEP repeated with the tick of the last one (the firmware asks again after a damaged
STATE) is answered with the same state, without stepping again; a damaged request is
answered with a STATE of tick ``0xFFFFFFFF``, which makes the firmware ask again.
"""

from __future__ import annotations

import socket
import struct
import threading
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from cobs import cobs

from jointlab.errors import LinkError, PackingError
from jointlab.interface import NJointAction

if TYPE_CHECKING:
    from jointlab.robots.description import RobotDescription

__all__ = ["PlantFrame", "PlantServer", "PlantType", "decode_plant", "encode_plant"]


class PlantType:
    """Plant-link frame types (module docstring)."""

    HELLO = 1
    STEP = 2
    SET = 3
    STATE = 0x81


#: STEP flags.
POWER, BRAKES = 1, 2
#: STATE flag: the firmware ticks on the host's REQ STEP (virtual time).
LOCKSTEP = 1
_HEADER = struct.Struct("<BIBB")
#: The tick of the STATE answering a damaged request (no firmware tick has it).
NO_TICK = 0xFFFFFFFF


@dataclass(frozen=True)
class PlantFrame:
    """One plant-link frame.

    Attributes:
        type: A :class:`PlantType` value.
        tick: Firmware tick the frame belongs to.
        flags: STEP: power (1), brakes (2); STATE: lockstep (1).
        dof: Joint count ``n``.
        values: The float32 values (``n``, ``2n`` or ``3n``, see the module docstring).
    """

    type: int
    tick: int
    flags: int
    dof: int
    values: np.ndarray


def encode_plant(frame: PlantFrame) -> bytes:
    """The bytes of ``frame`` on the wire, its 0x00 delimiter included."""
    body = _HEADER.pack(frame.type, frame.tick, frame.flags, frame.dof)
    body += np.asarray(frame.values, dtype="<f4").tobytes()
    body += struct.pack("<I", zlib.crc32(body))
    return cobs.encode(body) + b"\x00"


def decode_plant(run: bytes) -> PlantFrame:
    """Decode one COBS run (without its 0x00).

    Raises:
        PackingError: invalid COBS, a short body, a CRC mismatch, or a value count that is
            neither ``n`` nor ``2n``.
    """
    try:
        body = cobs.decode(run)
    except cobs.DecodeError as exc:
        raise PackingError(f"plant frame: invalid COBS ({exc})") from exc
    if len(body) < _HEADER.size + 4:
        raise PackingError(f"plant frame: {len(body)} bytes, expected at least {_HEADER.size + 4}")
    if zlib.crc32(body[:-4]) != struct.unpack_from("<I", body, len(body) - 4)[0]:
        raise PackingError("plant frame: CRC-32 mismatch")
    kind, tick, flags, dof = _HEADER.unpack_from(body)
    values = np.frombuffer(body[_HEADER.size : -4], dtype="<f4")
    if len(body[_HEADER.size : -4]) % 4 or len(values) not in (0, dof, 2 * dof, 3 * dof):
        raise PackingError(
            f"plant frame type {kind}: {len(body) - _HEADER.size - 4} value bytes for "
            f"n = {dof}, expected 0, 4n, 8n or 12n"
        )
    return PlantFrame(kind, tick, flags, dof, values)


class PlantServer:
    """The physics the PIL firmware drives (see the module docstring).

    Args:
        description: The robot, as the firmware was built for it.
        path: The Unix socket to listen on (QEMU connects to it).
        lockstep: Tell the firmware to tick on the host's REQ STEP (else on its timer).
        seed: Seed of the simulator.
        rate_hz: Firmware tick rate: one physics step of ``1 / rate_hz`` s per tick.
    """

    def __init__(
        self,
        description: RobotDescription,
        path: str,
        *,
        lockstep: bool,
        seed: int = 0,
        rate_hz: int = 1000,
    ) -> None:
        from jointlab.sim import SimRobot  # emulators may use sim (docs/architecture.md)

        dt = 1.0 / rate_hz
        self.description = description
        self.dof = description.dof
        self.lockstep = bool(lockstep)
        self._sim = SimRobot(description, dt=dt, control_dt=dt, seed=seed)
        self._sim.power(True)
        self._sim.arm()  # the plant stays armed; the firmware gates motion, as Device does
        self._sim.brakes(False)
        self._flags = POWER
        self._stepped: int | None = None
        self._state = self._pack_state(0)
        #: Frames received damaged (dropped; the firmware asks again), and STEPs served.
        self.bad_frames = 0
        self.steps = 0
        #: Why the server stopped, when it stopped on an error.
        self.error: BaseException | None = None
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        self._listener.listen(1)
        self._listener.settimeout(0.2)
        self._closed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jointlab-plant", daemon=True)

    @property
    def last_tick(self) -> int | None:
        """The firmware tick of the last physics step (None before the first, after a SET)."""
        return self._stepped

    def start(self) -> None:
        """Serve in a thread until :meth:`close` or the firmware's end of the socket closes."""
        self._thread.start()

    def _pack_state(self, tick: int) -> PlantFrame:
        s = self._sim.read()
        values = np.concatenate([s.position, s.velocity, s.torque]).astype(np.float32)
        return PlantFrame(PlantType.STATE, tick, LOCKSTEP if self.lockstep else 0, self.dof, values)

    def answer(self, frame: PlantFrame) -> PlantFrame:
        """The STATE answering one request frame (steps the physics for a new STEP).

        Raises:
            LinkError: a frame of another robot (``n``), or of a type the plant does not know.
        """
        n = self.dof
        if frame.dof != n:
            raise LinkError(f"plant link: a frame for {frame.dof} joints, the plant has {n}")
        if frame.type == PlantType.STEP and len(frame.values) == n:
            if frame.tick != self._stepped:
                self._step(frame)
            return self._state
        if frame.type == PlantType.SET and len(frame.values) == 2 * n:
            self._sim.reset(
                frame.values[:n].astype(np.float64), frame.values[n:].astype(np.float64)
            )
            self._stepped = None
        elif frame.type != PlantType.HELLO:
            raise LinkError(
                f"plant link: unexpected frame type {frame.type} with {len(frame.values)} values"
            )
        self._state = self._pack_state(frame.tick)
        return self._state

    def _step(self, frame: PlantFrame) -> None:
        sim, flags = self._sim, frame.flags
        if flags != self._flags:  # as Device does on REQ POWER / BRAKES
            sim.power(bool(flags & POWER))
            if flags & POWER:
                sim.arm()
            sim.brakes(bool(flags & BRAKES))
            self._flags = flags
        if flags & BRAKES or not flags & POWER:
            sim.apply(NJointAction.Zero(self.dof))
        else:
            sim.apply(NJointAction.Torque(frame.values.astype(np.float64)))
        sim.step()
        self._stepped = frame.tick
        self.steps += 1
        self._state = self._pack_state(frame.tick)

    def _run(self) -> None:
        try:
            connection = None
            while connection is None and not self._stop.is_set():
                try:
                    connection, _ = self._listener.accept()
                except TimeoutError:
                    continue
            if connection is None:
                return
            with connection:
                connection.settimeout(0.2)
                self._serve(connection)
        except (ConnectionResetError, BrokenPipeError):
            return  # QEMU exited (killed by close()) in the middle of an exchange
        except BaseException as exc:  # kept for the caller (tests, FirmwareDevice users)
            if not self._stop.is_set():
                self.error = exc

    def _serve(self, connection: socket.socket) -> None:
        pending = b""
        while not self._stop.is_set():
            try:
                data = connection.recv(4096)
            except TimeoutError:
                continue
            if not data:
                return  # QEMU exited
            pending += data
            *runs, pending = pending.split(b"\x00")
            for run in runs:
                if not run:
                    continue
                try:
                    frame = decode_plant(run)
                except PackingError:  # answered by a STATE of no tick: the firmware asks again
                    self.bad_frames += 1
                    connection.sendall(
                        encode_plant(
                            PlantFrame(
                                PlantType.STATE, NO_TICK, 0, self.dof, np.zeros(3 * self.dof)
                            )
                        )
                    )
                    continue
                connection.sendall(encode_plant(self.answer(frame)))

    def close(self) -> None:
        """Stop serving and release the simulator; safe to call twice."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)
        self._listener.close()
        if not self._closed:
            self._closed = True
            self._sim.close()
