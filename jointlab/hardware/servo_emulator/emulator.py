"""An emulated servo bus on a pseudo-terminal: physics-backed servos that the vendors' SDKs drive.

:class:`BusEmulator` puts a robot's servos (its ``bus`` section) on a
:class:`~jointlab.hardware.emulator.links.PtyLink`: each servo is a joint of a ``SimRobot``
(:class:`~jointlab.hardware.servo_emulator.firmware.ServoArray`), answering the vendor's
protocol (its :class:`~jointlab.hardware.servo.vendor.Vendor` record's ``device``:
:class:`~jointlab.hardware.dynamixel.device.DynamixelDevice` or
:class:`~jointlab.hardware.feetech.device.FeetechDevice`) at the vendor's addresses.

**Wire time.** A pty moves bytes at once; a bus does not. Each instruction occupies the line
for its bytes' time (10 bits per byte at ``baud``), each status packet follows after the
servo's Return Delay Time and takes its own bytes' time, and a reply is written to the pty
only when its last byte would have arrived. The line is shared: a packet waits for the one
before it.

**Clocks.** The JointLab device emulator's loops run it
(:mod:`~jointlab.hardware.emulator.loop`). In real time (the default) the firmware ticks at
its rate on the wall clock. With ``lockstep=True`` the firmware does not tick on its
own: :meth:`advance` (the control pipe's ADVANCE) first reads every byte the host says it
wrote, acts on them, then runs the ticks of the given time; replies go out at once (their wire
time is still counted). Same robot, seed and commands give the same states, bit for bit.

**Baud rate.** Each emulated servo runs at the rate of its Baud Rate register, set at start to
the robot file's ``bus.baud`` (or ``baud=``); writing the register moves the servo to the new
rate after its status packet, as on the real servos. A packet sent at a rate (the emulator
reads it from the pty's termios) is heard only by the servos at that rate, and a host at a
rate no servo runs at is not understood, exactly as a real bus at the wrong baud: nothing
answers. (A sync write at one rate still reaches every servo it names: a mixed-rate bus is
modelled for pings, reads and single writes, which is what finding a servo needs.)

**Faults.** The servos' own protection rules (overload, heat, voltage from the supply
model, :mod:`~jointlab.hardware.servo_emulator.protection`) run at every tick; the link and
the power fail as :class:`~jointlab.hardware.servo_emulator.faults.BusFaults` says (status
packets dropped, corrupted or late, the cable out, a power cut, a brown-out); a test may also
set hardware-error bits directly (:meth:`inject`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import select
import sys
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError, JointLabError
from jointlab.hardware.emulator.links import PtyLink
from jointlab.hardware.emulator.loop import serve_lockstep, serve_realtime
from jointlab.hardware.emulator.settle import SETTLE_SECONDS, settle
from jointlab.hardware.servo_emulator.bus_control import handle_control
from jointlab.hardware.servo_emulator.faults import BusFaults, Window
from jointlab.hardware.servo_emulator.firmware import ServoArray
from jointlab.hardware.servo_emulator.protection import AMBIENT, Supply
from jointlab.hardware.vendors import bus_models, vendor
from jointlab.robots import RobotDescription, load_robot

__all__ = ["BITS_PER_BYTE", "BusEmulator", "BusFaults", "BusReport", "Supply", "main"]


def _termios_rates() -> frozenset[int]:
    import termios

    return frozenset(int(n[1:]) for n in dir(termios) if n.startswith("B") and n[1:].isdigit())


#: Rates a pty's termios can state; a host at another rate (set with BOTHER) reads as None,
#: heard by the servos whose rate termios cannot state.
_TERMIOS_RATES = _termios_rates()

#: 8N1: a start bit, 8 data bits, a stop bit.
BITS_PER_BYTE = 10


@dataclass(frozen=True)
class BusReport:
    """Counters of an emulated bus."""

    #: Firmware ticks run (firmware time is ``ticks / firmware_rate``).
    ticks: int
    #: Instruction packets received (good and corrupt) and bytes received.
    instructions: int
    rx_bytes: int
    #: Status packets sent, dropped and corrupted on purpose.
    replies: int
    dropped: int
    corrupted: int
    #: Seconds the line was busy (instructions, return delays, status packets).
    wire_seconds: float
    #: Bytes received at a baud rate other than the bus's (never answered).
    garbled: int = 0
    #: Real time: ticks that started more than a period late (the schedule slipped).
    late_ticks: int = 0
    #: Bytes the host sent while the cable was out or the power off (nobody heard them).
    unheard: int = 0
    #: Joint positions of the simulated arm, rad.
    position: tuple[float, ...] = ()
    #: Each servo's winding temperature (°C) and supply voltage (V), the protection model's.
    temperature: tuple[float, ...] = ()
    voltage: tuple[float, ...] = ()
    #: Each servo's hardware-error bits (Hardware Error Status / Status).
    errors: tuple[int, ...] = ()


class BusEmulator:
    """A robot's servo bus on a pseudo-terminal (see the module docstring).

    Args:
        robot: Description, built-in name or robot file; it needs a ``bus`` section.
        seed: Seed of the simulator and of the fault generators' default.
        lockstep: Tick only in :meth:`advance` (deterministic), not on the wall clock.
        offsets: Motor ticks at joint zero of each servo as assembled; default: the robot
            file's transmission offsets (an arm assembled exactly as designed).
        baud: Line rate in bit/s (default: the robot file's ``bus.baud``).
        faults: Initial link and power faults.
        supply: The bus's power supply (default: each servo's rated voltage, 0.05 Ω).
        ambient: The air around the servos, °C: each starts at it and cools towards it.
    """

    def __init__(
        self,
        robot: RobotDescription | str | Path,
        *,
        seed: int = 0,
        lockstep: bool = False,
        offsets: Any = None,
        baud: int | None = None,
        faults: BusFaults | None = None,
        supply: Supply | None = None,
        ambient: float = AMBIENT,
    ) -> None:
        from jointlab.sim import SimRobot  # the emulator may use sim

        description = load_robot(robot)
        bus, models = bus_models(description)
        self.description = description
        self.protocol = bus.protocol.value
        self.vendor = vendor(self.protocol)
        rate = max(m.firmware_rate for m in models)
        self.dt = self.period = 1.0 / rate
        self.baud = int(baud or bus.baud)
        if self.baud <= 0:
            raise ConfigurationError(f"baud must be > 0 bit/s, got {baud!r}")
        self.byte_time = BITS_PER_BYTE / self.baud
        self.lockstep = bool(lockstep)
        self._sim = SimRobot(description, dt=self.dt, control_dt=self.dt, seed=seed)
        try:
            if offsets is not None:
                offsets = np.asarray(offsets, dtype=np.float64).reshape(-1)
                if offsets.shape != (description.dof,):
                    raise ConfigurationError(
                        f"offsets must be {description.dof} tick values, got {offsets.shape}"
                    )
            modes = [m.modes[s.mode.value] for m, s in zip(models, bus.servos, strict=True)]
            self.servos = ServoArray(
                self._sim,
                models,
                list(bus.ids),
                offsets,
                modes,
                baud=self.baud,
                supply=supply,
                ambient=ambient,
            )
            self.servos.sleep = not self.lockstep  # lockstep stays exact, tick for tick
            self.device: Any = self.vendor.device(self.servos)
            self.link = PtyLink()
        except BaseException:
            self._sim.close()
            raise
        self._rates = self.vendor.baud_rates
        self._set_baud_registers(self.baud)
        self._pending: list[tuple[float, bytes]] = []
        self._line_free = 0.0
        self.counts = dict.fromkeys(
            (
                "instructions",
                "rx_bytes",
                "replies",
                "dropped",
                "corrupted",
                "garbled",
                "late_ticks",
                "unheard",
            ),
            0,
        )
        self._unpowered = False
        self._wire = 0.0
        self._tick_debt = 0.0
        self.set_faults(faults or BusFaults(seed=seed))
        self._closed = False
        if not self.lockstep:
            self._settle()

    def _settle(self, seconds: float = SETTLE_SECONDS) -> None:
        """Let the limp arm come to rest before any host connects, as a real unpowered arm is.

        The servos start with torque off: without this, a host connecting in real time would
        find the arm falling from its home pose. Ticks until the arm sleeps (at rest, see
        ``ServoArray.tick``) or ``seconds`` of firmware time
        (:func:`~jointlab.hardware.emulator.settle.settle`); the clock then starts at zero.
        """
        servos = self.servos
        settle(servos.tick, lambda: servos.asleep, self.dt, seconds)
        servos.tick_count = 0
        servos.invalidate()

    def _set_baud_registers(self, baud: int) -> None:
        """Every servo's Baud Rate register (and its saved EEPROM image) to ``baud``."""
        codes = {rate: code for code, rate in self._rates.items()}
        if baud not in codes:
            return  # a rate the servos' table lacks: the registers keep their values
        register = self.servos.register("baud_rate")
        self.servos.set("baud_rate", np.full(self.servos.n, codes[baud]))
        for k in range(self.servos.n):
            self.servos.saved_memory(k)[register.address] = codes[baud]

    def servo_bauds(self) -> dict[int, int]:
        """Servo id -> the rate it runs at (its Baud Rate register), bit/s."""
        codes = self.servos.get("baud_rate")
        pairs = zip(self.servos.ids, codes, strict=True)
        return {int(i): self._rates.get(int(c), 0) for i, c in pairs}

    @property
    def path(self) -> str:
        """The pty the host opens (``/dev/pts/N``)."""
        return self.link.path

    def set_faults(self, faults: BusFaults) -> None:
        """Replace the faults (generators restart from ``faults.seed``; windows from now)."""
        self.faults = faults
        self._rng = np.random.default_rng(faults.seed)
        self._fault_t0 = self.servos.tick_count * self.dt
        self._windows: dict[str, Window | None] = {
            name: faults.window(name) for name in ("unplugged", "power_cut", "brownout")
        }

    def _in_force(self, name: str) -> bool:
        window = self._windows[name]
        return window is not None and window.holds(
            self.servos.tick_count * self.dt - self._fault_t0
        )

    @property
    def silent(self) -> bool:
        """True while the cable is out or the power off: nothing heard, nothing sent."""
        return self._unpowered or self._in_force("unplugged")

    def _power(self) -> None:
        """The supply at this tick: a power cut (limp, silent; a power-up after it), a sag."""
        cut = self._in_force("power_cut")
        servos = self.servos
        if cut and not self._unpowered:
            self._unpowered = True
            servos.set("torque_enable", np.zeros(servos.n))
            self._pending.clear()
        elif self._unpowered and not cut:
            self._unpowered = False
            for k in range(servos.n):
                servos.power_up(k)
        brownout = self.faults.brownout
        override = float(brownout[2]) if self._in_force("brownout") else None
        if override != servos.protection.override:
            servos.protection.override = override
            servos.changed()  # a resting arm wakes: its rules see the new supply

    def inject(self, servo_id: int, bits: int) -> None:
        """Set hardware error ``bits`` on servo ``servo_id`` (it turns its torque off)."""
        if servo_id not in self.servos.index:
            raise ConfigurationError(f"no servo with id {servo_id} on this bus")
        self.servos.inject(servo_id, bits)

    def move(self, position: Any) -> None:
        """Put the arm at joint ``position`` (rad), as a person moving it by hand.

        Only limp servos can be moved so; the others keep holding.
        """
        q = np.asarray(position, dtype=np.float64).reshape(-1)
        self._sim.reset(q)
        self.servos.invalidate()

    def report(self) -> BusReport:
        """The counters and the arm's joint positions."""
        protection = self.servos.protection
        return BusReport(
            ticks=self.servos.tick_count,
            wire_seconds=self._wire,
            position=tuple(self._sim.read().position.tolist()),
            temperature=tuple(protection.temperature.tolist()),
            voltage=tuple(protection.voltage.tolist()),
            errors=tuple(int(b) for b in self.servos.faults),
            **self.counts,
        )

    # ------------------------------------------------------------------ bytes
    #: Broadcast ids of both protocols (0xFE): every servo at the line's rate hears them.
    _broadcast_ids = frozenset({0xFE})
    #: Nothing is written as a loop starts: a stray byte would be noise on a servo bus.
    greeting = b""

    def receive(self, fd: int) -> None:
        """Read what arrived and schedule the replies of every complete packet."""
        self._receive(fd, time.perf_counter())

    def _receive(self, fd: int, now: float) -> None:
        data = self.link.read(fd)
        if not data:
            return
        self.counts["rx_bytes"] += len(data)
        if self.silent:  # the cable is out, or the servos unpowered
            self.counts["unheard"] += len(data)
            return
        speed = self.link.line_speed()
        bauds = self.servo_bauds()
        hearing = {
            i
            for i, rate in bauds.items()
            if rate == speed or (speed is None and rate not in _TERMIOS_RATES)
        }
        if not hearing:  # at another baud a UART reads garbage
            self.counts["garbled"] += len(data)
            return
        byte_time = BITS_PER_BYTE / speed if speed else self.byte_time
        for packet in self.device.decoder.feed(data):
            self.counts["instructions"] += 1
            start = max(now, self._line_free)
            at = start + packet.wire_bytes * byte_time
            if packet.id not in hearing and packet.id not in self._broadcast_ids:
                continue  # addressed to a servo at another rate: it heard noise
            broadcast = packet.id in self._broadcast_ids
            for servo_id, reply in self.device.handle(packet):
                if broadcast and servo_id not in hearing:
                    continue  # it answers at its own rate: the host hears noise
                if self._rng.random() < self.faults.drop_status.get(servo_id, 0.0):
                    self.counts["dropped"] += 1
                    continue  # a missing status packet takes no time on the line
                if self._rng.random() < self.faults.corrupt_status.get(servo_id, 0.0):
                    reply = reply[:-1] + bytes([reply[-1] ^ 0x5A])
                    self.counts["corrupted"] += 1
                at += self.device.return_delay(servo_id) + len(reply) * byte_time
                at += self.faults.delay_status
                self._pending.append((at, reply))
                self.counts["replies"] += 1
            self._wire += at - start
            self._line_free = at

    def next_delayed(self) -> float | None:
        """When the next status packet's last byte is on the wire (None in lockstep)."""
        return self._pending[0][0] if self._pending and not self.lockstep else None

    def flush_delayed(self, now: float) -> None:
        """Write the status packets whose wire time is over (in lockstep: all of them)."""
        while self._pending and (self.lockstep or self._pending[0][0] <= now):
            self.link.write(self._pending.pop(0)[1])

    def asleep(self) -> bool:
        """True while the arm sleeps (see ``ServoArray.tick``) and no bus watchdog runs."""
        servos = self.servos
        watching = servos.has("bus_watchdog").any() and (servos.get("bus_watchdog") > 0).any()
        return servos.asleep and not watching and not self._power_pending()

    def _power_pending(self) -> bool:
        """True until every power fault's window is over (their edges must be ticked)."""
        now = self.servos.tick_count * self.dt - self._fault_t0
        return any(
            w is not None and now < w.at + w.seconds
            for name, w in self._windows.items()
            if name != "unplugged"
        )

    def skip(self, ticks: int) -> None:
        """Count ``ticks`` slept-through firmware ticks."""
        self.servos.tick_count += int(ticks)

    def tick(self) -> None:
        """One firmware tick of every servo (the bus watchdog, the supply's faults)."""
        if self._windows["power_cut"] is not None or self._windows["brownout"] is not None:
            self._power()
        self.device.tick()
        self.servos.tick()

    def advance(self, seconds: float, rx_bytes: int, timeout: float = 5.0) -> None:
        """Lockstep: act on the host's first ``rx_bytes`` bytes, then run ``seconds`` of ticks.

        Raises:
            ConfigurationError: those bytes did not arrive within ``timeout`` seconds.
        """
        deadline = time.perf_counter() + timeout
        fd = self.link.fds()[0]
        while self.counts["rx_bytes"] < rx_bytes:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise ConfigurationError(
                    f"advance: the host wrote {rx_bytes} bytes, {self.counts['rx_bytes']} arrived"
                )
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                self._receive(fd, self._line_free)
        self.flush_delayed(0.0)
        # Whole ticks, the fraction carried: bus periods that are not whole ticks (a 30 fps
        # frame is 33.3 ticks) keep firmware time equal to the host's, with no drift.
        ticks = seconds / self.dt + self._tick_debt
        whole = max(0, int(np.floor(ticks + 1e-9)))
        self._tick_debt = ticks - whole
        for _ in range(whole):
            self.tick()

    # ------------------------------------------------------------------ loop
    def serve(self, control: Connection | None = None, duration: float | None = None) -> None:
        """Serve the bus until ``duration`` s pass or the control pipe closes or says CLOSE.

        The device emulator's loops (:mod:`~jointlab.hardware.emulator.loop`): real time, or
        lockstep, where ticks come only from :meth:`advance` (the control pipe's ADVANCE).
        """
        (serve_lockstep if self.lockstep else serve_realtime)(self, control, duration)

    def control(self, connection: Connection) -> bool:
        """Serve one request of the control pipe; False when the loop must stop."""
        return handle_control(self, connection)

    def close(self) -> None:
        """Release the pty and the simulator; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self.link.close()
        self._sim.close()

    def __enter__(self) -> BusEmulator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m jointlab.hardware.servo_emulator.emulator ROBOT``: print the port, serve."""
    parser = argparse.ArgumentParser(
        prog="python -m jointlab.hardware.servo_emulator.emulator",
        description="an emulated servo bus (Dynamixel or Feetech) on a pseudo-terminal",
    )
    parser.add_argument("robot", nargs="?", default="so101", help="robot with a bus section")
    parser.add_argument("--baud", type=int, default=None, help="line rate (default: the file's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duration", type=float, default=None, help="stop after SECONDS")
    parser.add_argument("--control-fd", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.control_fd is not None:
        from jointlab.hardware.emulator.command_line import serve_control

        # The class from its module, not from __main__: the reports the control pipe pickles
        # must name a module the parent can import.
        module = importlib.import_module("jointlab.hardware.servo_emulator.emulator")
        return serve_control(args.control_fd, module.BusEmulator)
    # PyBullet prints a banner on the C stdout as it starts; "port: PATH" must be the first line.
    sys.stdout.flush()
    saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        emulator = BusEmulator(args.robot, baud=args.baud, seed=args.seed)
    except JointLabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
    with emulator:
        print(f"port: {emulator.path}", flush=True)
        print(
            f"bus: {emulator.protocol} at {emulator.baud} bit/s, servos "
            f"{emulator.servos.ids.tolist()} (pid {os.getpid()}; Ctrl-C stops)",
            flush=True,
        )
        try:
            emulator.serve(duration=args.duration)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
