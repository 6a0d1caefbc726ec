"""Serial link benchmark: codec against a bare reference codec, round trips, 1 kHz deadlines.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/serial_link.py            # every section
    PYTHONPATH=. .venv/bin/python benchmarks/serial_link.py codec --quick

Every figure is the **median over repeats, with the spread** (lowest and highest repeat),
and the load average is printed at the start and at the end: the final figures are measured
on an idle machine, and a busy one shows up in the load. Sections (each a function returning
:class:`Result` rows, registered in ``SECTIONS``):

* ``codec``: frames/s of a whole 6-DoF NJOINT and DATA STATE frame, packed, framed (header,
  CRC-32, COBS) and decoded back to a message, one frame per ``feed``, **as a ratio to a bare
  reference codec measured in the same run**: ``struct`` packing of header and payload plus
  ``zlib.crc32``, checked and unpacked back into a tuple (no COBS, no objects, no checks).
  Target: the ratio >= 0.25. Also the host path with the float64 conversions.
* ``roundtrip``: p99 latency of a raw pty exchange of the same byte counts between two
  processes (the floor), of NJOINT to DATA STATE through ``SerialRobot`` and the real-time
  emulator *over the link* (host to device plus device to host, from the emulator's
  timestamps on the shared monotonic clock; target p99 <= 1 ms), of the paced 1 kHz loop
  (one period by construction) and of HEARTBEAT to ACK.
* ``deadlines``: per cent of 1 kHz periods whose command made its device tick, over 10 s
  with ``emulated://arm6`` (device count). Target >= 99 % on an idle machine.
* ``lockstep``: ``step()`` per second of ``emulated://arm6?lockstep=1`` as a ratio to
  ``sim://arm6`` measured in the same run (what the parity suite costs).

``--fifo`` runs the host loop and the emulator with ``SCHED_FIFO`` (where permitted).
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import serial

from jointlab.hardware.protocol import (
    CRC32_RESIDUE,
    FrameDecoder,
    FrameEncoder,
    NJointCommand,
    StateData,
    encode_frame,
)
from jointlab.interface import ArrayState, NJointAction

#: Codec target: ours as a fraction of the bare reference codec's frames/s.
CODEC_RATIO_TARGET = 0.25
#: Round-trip target (p99), milliseconds.
ROUND_TRIP_TARGET = 1.0
#: Deadline target, per cent of 1 kHz periods.
DEADLINE_TARGET = 99.0
DOF = 6
#: Whether ``--fifo`` was given and granted (the emulator is then asked for it too).
FIFO = [False]


@dataclass(frozen=True)
class Result:
    """One benchmark line: the median over repeats and their spread."""

    #: What was measured.
    name: str
    #: Median over the repeats.
    median: float
    #: Lowest repeat.
    low: float
    #: Highest repeat.
    high: float
    #: Unit of the values.
    unit: str
    #: Target (same unit), or None for context lines.
    target: float | None = None
    #: True when a larger value is better.
    higher_is_better: bool = True

    @classmethod
    def of(
        cls,
        name: str,
        values: list[float],
        unit: str,
        target: float | None = None,
        higher_is_better: bool = True,
    ) -> Result:
        """The median and spread of ``values`` (one per repeat)."""
        return cls(
            name,
            statistics.median(values),
            min(values),
            max(values),
            unit,
            target,
            higher_is_better,
        )

    @property
    def met(self) -> bool | None:
        """Whether the median meets the target (None without a target)."""
        if self.target is None:
            return None
        if self.higher_is_better:
            return self.median >= self.target
        return self.median <= self.target


def _sample_messages() -> tuple[NJointAction, ArrayState]:
    rng = np.random.default_rng(0)
    position = rng.normal(size=DOF)
    position[1] = np.nan  # PD off on one joint: NaN travels
    action = NJointAction.TorqueAndPosition(
        rng.normal(size=DOF), position, position_kp=np.full(DOF, 40.0)
    )
    state = ArrayState(
        time=1.5,
        position=rng.normal(size=DOF),
        velocity=rng.normal(size=DOF),
        acceleration=rng.normal(size=DOF),
        torque=rng.normal(size=DOF),
        current=rng.normal(size=DOF),
        actuator_state=np.full(DOF, 2, np.uint8),
        motor_power=True,
        armed=True,
    )
    return action, state


# ---------------------------------------------------------------------------- codec
_HEADER = struct.Struct("<BBBHH")
_NJOINT = struct.Struct(f"<B{5 * DOF}f")
_STATE = struct.Struct("<QBBBBB" + "fffffB" * DOF)


def reference_codec(
    layout: struct.Struct, values: tuple, msg_type: tuple[int, int]
) -> Callable[[int], None]:
    """The bare reference: struct pack, CRC-32, check, struct unpack, per frame."""
    pack_header, pack, crc32 = _HEADER.pack, layout.pack, zlib.crc32
    unpack_header, unpack = _HEADER.unpack_from, layout.unpack_from
    msg_class, kind = msg_type

    def loop(n: int) -> None:
        for seq in range(n):
            payload = pack(*values)
            body = pack_header(2, msg_class, kind, seq & 0xFFFF, len(payload)) + payload
            frame = body + crc32(body).to_bytes(4, "little")
            if crc32(frame) != CRC32_RESIDUE:
                raise RuntimeError("reference codec: bad CRC")
            unpack_header(frame)
            unpack(frame, 7)

    return loop


def jointlab_codec(message: NJointCommand | StateData) -> Callable[[int], None]:
    """Ours: pack, header, CRC-32, COBS, then the streaming decoder back to a message."""
    decoder = FrameDecoder()

    def loop(n: int) -> None:
        feed = decoder.feed
        for seq in range(n):
            (_frame,) = feed(encode_frame(message, seq & 0xFFFF))

    return loop


def _rates(
    loops: dict[str, Callable[[int], None]], repeats: int, calls: int
) -> dict[str, list[float]]:
    """Frames/s of each loop, repeats interleaved so that all see the same load."""
    for loop in loops.values():
        loop(max(calls // 10, 1))  # warm up
    rates: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(repeats):
        for name, loop in loops.items():
            start = time.perf_counter()
            loop(calls)
            rates[name].append(calls / (time.perf_counter() - start))
    return rates


def codec_section(quick: bool = False) -> list[Result]:
    """Ours against the reference codec, frames/s, ratio first."""
    repeats, calls = (3, 20_000) if quick else (9, 100_000)
    action, state = _sample_messages()
    njoint = NJointCommand.from_action(action)
    data = StateData.from_state(state)
    state_values = (
        1_500_000,
        DOF,
        1,
        1,
        0,
        0,
        *[v for record in data.actuators.tolist() for v in record],
    )
    loops = {
        "ref NJOINT": reference_codec(_NJOINT, (DOF, *njoint.values.ravel().tolist()), (1, 16)),
        "NJOINT": jointlab_codec(njoint),
        "ref STATE": reference_codec(_STATE, state_values, (3, 1)),
        "STATE": jointlab_codec(data),
    }
    rates = _rates(loops, repeats, calls)
    results = []
    for kind in ("NJOINT", "STATE"):
        ratios = [o / r for o, r in zip(rates[kind], rates[f"ref {kind}"], strict=True)]
        results += [
            Result.of(f"{kind} 6-DoF: jointlab / reference codec", ratios, "x", CODEC_RATIO_TARGET),
            Result.of(
                "  jointlab: pack, frame, CRC-32, COBS, decode to a message",
                rates[kind],
                "frames/s",
            ),
            Result.of(
                "  reference: struct + zlib.crc32, check, unpack", rates[f"ref {kind}"], "frames/s"
            ),
        ]
    encoder, decoder = FrameEncoder(), FrameDecoder()

    def host_path(n: int) -> None:  # what SerialRobot and the emulator do per period
        feed = decoder.feed
        for _ in range(n):
            (frame,) = feed(encoder.encode(NJointCommand.from_action(action))[1])
            (frame,) = feed(encoder.encode(StateData.from_state(state))[1])
            frame.message.to_state()

    host = _rates({"host": host_path}, repeats, max(calls // 4, 1))["host"]
    results.append(
        Result.of("host path: from_action/from_state + codec + to_state, pairs", host, "pairs/s")
    )
    return results


# ---------------------------------------------------------------------------- link timing
_ECHO = """
import os, sys
fd, size_in, size_out = (int(a) for a in sys.argv[1:])
reply, pending = bytes([0x55]) * size_out, 0
while True:
    try:
        pending += len(os.read(fd, 4096))
    except OSError:
        break
    while pending >= size_in:
        pending -= size_in
        os.write(fd, reply)
"""


def _p99(samples: list[float]) -> float:
    return float(np.percentile(np.asarray(samples) * 1e3, 99))


def raw_pty_round_trips(count: int, size_out: int, size_back: int) -> list[float]:
    """Write ``size_out`` bytes to a pty, another process answers ``size_back``; seconds each."""
    master, slave = os.openpty()
    os.set_inheritable(master, True)
    child = subprocess.Popen(
        [sys.executable, "-c", _ECHO, str(master), str(size_out), str(size_back)],
        pass_fds=(master,),
    )
    os.close(master)
    samples = []
    try:
        with serial.Serial(os.ttyname(slave), timeout=1.0) as port:
            message = bytes([0x2A]) * size_out
            for i in range(count + count // 10):
                start = time.perf_counter()
                port.write(message)
                if len(port.read(size_back)) != size_back:
                    raise RuntimeError("raw pty exchange timed out")
                if i >= count // 10:  # warm-up excluded
                    samples.append(time.perf_counter() - start)
    finally:
        os.close(slave)
        child.kill()
        child.wait()
    return samples


def link_round_trips(count: int) -> tuple[list[float], list[float], list[float]]:
    """NJOINT to state over the link, in the paced loop, and HEARTBEAT to ACK (seconds)."""
    from jointlab.hardware import EmulatorProcess, SerialRobot
    from jointlab.hardware.protocol import NJointCommand

    emulator = EmulatorProcess("arm6", fifo=FIFO[0])
    with emulator, SerialRobot(emulator.path, "arm6") as robot:
        robot.arm()
        robot.reset()
        hold = NJointCommand.from_action(NJointAction.Position(robot.description.home))
        sent, received, cycle = {}, {}, []
        for i in range(count + 200):
            start = time.perf_counter()
            seq = robot.send_command(hold, wait=False)
            robot.step()
            if i >= 200:
                cycle.append(time.perf_counter() - start)
                sent[seq] = start
                received[round(robot.device_time * 1000)] = robot.state_received_at
        report = emulator.report()
        heartbeat = []
        for _ in range(count // 5):
            robot.send_command(hold, wait=False)
            heartbeat.append(robot.heartbeat())
            robot.step()
    written = dict(report.state_sent)
    link = [
        (a.received - sent[a.seq]) + (received[a.tick] - written[a.tick])
        for a in report.applied
        if a.seq in sent and a.tick in received and a.tick in written
    ]
    return link, cycle, heartbeat


def roundtrip_section(quick: bool = False) -> list[Result]:
    """p99 per repeat (ms): raw pty exchange, NJOINT to state, paced loop, HEARTBEAT."""
    repeats, count = (1, 1000) if quick else (3, 5000)
    action, state = _sample_messages()
    njoint_bytes = len(encode_frame(NJointCommand.from_action(action), 0))
    state_bytes = len(encode_frame(StateData.from_state(state), 0))
    raw, link, cycle, heartbeat = [], [], [], []
    for _ in range(repeats):
        raw.append(_p99(raw_pty_round_trips(count, njoint_bytes, state_bytes)))
        over_link, paced, heart = link_round_trips(count)
        link.append(_p99(over_link))
        cycle.append(_p99(paced))
        heartbeat.append(_p99(heart))
    return [
        Result.of(
            "NJOINT -> DATA STATE over the link, p99",
            link,
            "ms",
            ROUND_TRIP_TARGET,
            higher_is_better=False,
        ),
        Result.of(
            f"  floor: raw pty exchange {njoint_bytes} B -> {state_bytes} B, p99",
            raw,
            "ms",
            higher_is_better=False,
        ),
        Result.of(
            "NJOINT -> next DATA STATE in the paced 1 kHz loop, p99",
            cycle,
            "ms",
            higher_is_better=False,
        ),
        Result.of("REQ HEARTBEAT -> ACK, p99", heartbeat, "ms", higher_is_better=False),
    ]


def deadline_fraction(url: str, seconds: float) -> tuple[float, int, int]:
    """Per cent of device ticks at which a fresh command took effect, ticks, late ticks."""
    import jointlab

    with jointlab.connect(url) as robot:
        robot.arm()
        robot.reset()
        home = robot.description.home
        amplitude = np.array([0.2, 0.1, 0.1, 0.0, 0.1, 0.0])
        before = robot.emulator.report()
        start_time = robot.time
        while robot.time - start_time < seconds:
            robot.step()
            t = robot.read().time  # a controller: a 0.5 Hz sine on four joints
            robot.apply(NJointAction.Position(home + amplitude * np.sin(np.pi * t)))
        after = robot.emulator.report()
    ticks = after.tick - before.tick
    device = 100.0 * (after.command_ticks - before.command_ticks) / ticks
    return device, ticks, after.late_ticks - before.late_ticks


def deadlines_section(quick: bool = False) -> list[Result]:
    """Per cent of 1 kHz periods whose command made its device tick."""
    repeats, seconds = (1, 2.0) if quick else (3, 10.0)
    url = f"emulated://arm6?fifo={int(FIFO[0])}"
    runs = [deadline_fraction(url, seconds) for _ in range(repeats)]
    late = sum(r[2] for r in runs)
    return [
        Result.of(
            f"device ticks with a fresh command ({repeats} x {seconds:g} s, {late} late ticks)",
            [r[0] for r in runs],
            "%",
            DEADLINE_TARGET,
        )
    ]


def lockstep_section(quick: bool = False) -> list[Result]:
    """step() per second in lockstep against sim://, the same loop in the same run."""
    import jointlab

    repeats, steps = (2, 300) if quick else (5, 2000)
    rates: dict[str, list[float]] = {"sim": [], "lockstep": []}
    urls = {"sim": "sim://arm6", "lockstep": "emulated://arm6?lockstep=1"}
    robots = {name: jointlab.connect(url) for name, url in urls.items()}
    try:
        for robot in robots.values():
            robot.arm()
        for _ in range(repeats):
            for name, robot in robots.items():
                hold = NJointAction.Position(robot.description.home)
                start = time.perf_counter()
                for _ in range(steps):
                    robot.apply(hold)
                    robot.step()
                    robot.read()
                rates[name].append(steps / (time.perf_counter() - start))
    finally:
        for robot in robots.values():
            robot.close()
    ratios = [lock / sim for lock, sim in zip(rates["lockstep"], rates["sim"], strict=True)]
    return [
        Result.of("lockstep emulated / sim, apply + step + read at 1 kHz", ratios, "x"),
        Result.of("  emulated://arm6?lockstep=1", rates["lockstep"], "steps/s"),
        Result.of("  sim://arm6", rates["sim"], "steps/s"),
    ]


#: Sections by name, run in this order.
SECTIONS: dict[str, Callable[[bool], list[Result]]] = {
    "codec": codec_section,
    "roundtrip": roundtrip_section,
    "deadlines": deadlines_section,
    "lockstep": lockstep_section,
}


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3f}"


def _print(section: str, results: list[Result]) -> None:
    print(f"\n[{section}]  median [lowest, highest] over the repeats")
    for r in results:
        spread = f"[{_number(r.low)}, {_number(r.high)}]"
        line = f"  {r.name:<62} {_number(r.median):>10} {r.unit:<8} {spread:<22}"
        if r.target is not None:
            line += f" target {'>=' if r.higher_is_better else '<='} {_number(r.target)}: "
            line += "meets" if r.met else "MISSES"
        print(line, flush=True)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", help=f"any of {', '.join(SECTIONS)} (all)")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    parser.add_argument(
        "--fifo",
        action="store_true",
        help="SCHED_FIFO for this process and the emulator (needs privileges)",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {unknown}; choose from {list(SECTIONS)}")
    if args.fifo:
        from jointlab.hardware.emulator import realtime_priority

        FIFO[0] = realtime_priority()
        print(f"SCHED_FIFO scheduling {'granted' if FIFO[0] else 'NOT granted'}")
    print(
        f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cores, "
        f"load average at start {_load()}"
    )
    for name in args.sections or list(SECTIONS):
        _print(name, SECTIONS[name](args.quick))
    print(f"\nload average at end {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
