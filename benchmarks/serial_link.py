"""Serial link benchmark (issue 6): codec throughput, round-trip latency, 1 kHz deadlines.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/serial_link.py            # every section
    PYTHONPATH=. .venv/bin/python benchmarks/serial_link.py codec --quick

Sections (each a function returning :class:`Result` rows, registered in ``SECTIONS``):

* ``codec``: frames/s of pack + frame + CRC + decode for a 6-DoF NJOINT and a 6-DoF
  DATA STATE, one frame per ``feed`` call (the worst case for the decoder), plus the
  burst case and the host path with the float64 conversions. Target: >= 300k frames/s.
* ``roundtrip``: latency p99 (median = p50 beside it) of, in the same run: a raw exchange
  over a pty between two processes of the byte counts of a 6-DoF NJOINT (133) and DATA
  STATE (151); NJOINT to DATA STATE through ``SerialRobot`` and the emulator process over
  the link (host -> device plus device -> host, from the emulator's timestamps), and in
  the paced 1 kHz loop (``apply`` to ``step`` returning, which adds the device's wait for
  its next tick: about one period by construction); and REQ HEARTBEAT to its ACK.
  Target: NJOINT-to-state p99 <= 1 ms.
* ``deadlines``: fraction of 1 kHz control deadlines met over 10 s with ``emulated://arm6``
  (emulator in its own process), counted by the device (ticks at which a fresh command took
  effect) and by the host (periods whose command went out before the next state arrived).
  Target: >= 99 %.

``--realtime`` runs the host loop and the emulator with ``SCHED_FIFO`` (where permitted):
on a machine busy with other work both link sections depend on it.

Codec timings are the best of several repeats (the usual microbenchmark practice on a
shared machine: the minimum is the least disturbed run); the median is printed beside it.
The link sections run in real time and report one run; they depend on the machine's load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import serial

from jointlab.hardware.protocol import (
    FrameDecoder,
    FrameEncoder,
    NJointCommand,
    StateData,
    encode_frame,
)
from jointlab.interface import ArrayState, NJointAction

#: Codec target from issue 6, frames per second.
CODEC_TARGET = 300_000.0
#: Round-trip target from issue 6 (p99), milliseconds.
ROUND_TRIP_TARGET = 1.0
#: Deadline target from issue 6, per cent of 1 kHz periods.
DEADLINE_TARGET = 99.0
DOF = 6
#: Whether ``--realtime`` was given and granted (the emulator is then asked for it too).
REALTIME = [False]


@dataclass(frozen=True)
class Result:
    """One benchmark line."""

    #: What was measured.
    name: str
    #: Best value over the repeats.
    value: float
    #: Median over the repeats.
    median: float
    #: Unit of ``value`` and ``median``.
    unit: str
    #: Target (same unit), or None for context lines.
    target: float | None = None
    #: True when a larger value is better.
    higher_is_better: bool = True

    @property
    def met(self) -> bool | None:
        """Whether the best value meets the target (None without a target)."""
        if self.target is None:
            return None
        return self.value >= self.target if self.higher_is_better else self.value <= self.target


def _rate(name: str, loop: Callable[[int], None], frames_per_call: int, repeats: int,
          calls: int, target: float | None = None) -> Result:  # fmt: skip
    """Time ``loop(calls)`` ``repeats`` times and return frames/s (best and median)."""
    loop(max(calls // 10, 1))  # warm up
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        loop(calls)
        rates.append(calls * frames_per_call / (time.perf_counter() - start))
    return Result(name, max(rates), statistics.median(rates), "frames/s", target)


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


def codec_section(quick: bool = False) -> list[Result]:
    """Codec throughput: encode (pack + header + CRC + COBS) and decode, per frame."""
    repeats, calls = (3, 20_000) if quick else (7, 100_000)
    action, state = _sample_messages()
    njoint = NJointCommand.from_action(action)
    data_state = StateData.from_state(state)
    decoder = FrameDecoder()

    def one_at_a_time(message: NJointCommand | StateData) -> Callable[[int], None]:
        def loop(n: int) -> None:
            feed = decoder.feed
            for seq in range(n):
                (_frame,) = feed(encode_frame(message, seq & 0xFFFF))

        return loop

    def alternating(n: int) -> None:
        feed = decoder.feed
        for seq in range(0, n, 2):
            feed(encode_frame(njoint, seq & 0xFFFF))
            feed(encode_frame(data_state, (seq + 1) & 0xFFFF))

    burst = 64
    stream = b"".join(encode_frame(m, i) for i, m in enumerate([njoint, data_state] * (burst // 2)))

    def burst_loop(n: int) -> None:
        for _ in range(n):
            decoder.feed(stream)

    encoder = FrameEncoder()

    def host_path(n: int) -> None:  # what SerialRobot and the emulator do per period
        feed = decoder.feed
        for _ in range(n):
            (frame,) = feed(encoder.encode(NJointCommand.from_action(action))[1])
            (frame,) = feed(encoder.encode(StateData.from_state(state))[1])
            frame.message.to_state()

    results = [
        _rate("NJOINT 6-DoF, encode+decode, 1 frame/feed", one_at_a_time(njoint), 1, repeats,
              calls, CODEC_TARGET),
        _rate("STATE 6-DoF, encode+decode, 1 frame/feed", one_at_a_time(data_state), 1, repeats,
              calls, CODEC_TARGET),
        _rate("NJOINT+STATE alternating, 1 frame/feed", alternating, 1, repeats, calls,
              CODEC_TARGET),
        _rate(f"decode only, {burst}-frame bursts (NJOINT+STATE)", burst_loop, burst, repeats,
              max(calls // burst, 1)),
        _rate("host path: from_action/from_state + codec + to_state", host_path, 2, repeats,
              max(calls // 4, 1)),
    ]  # fmt: skip
    stats = decoder.stats
    if stats.errors or stats.malformed:
        raise RuntimeError(f"codec benchmark saw link errors: {stats}")
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


def _latency(name: str, samples: list[float], target: float | None = None) -> Result:
    """p99 as the value, p50 as the median, in ms."""
    ms = np.asarray(samples) * 1e3
    p50, p99 = np.percentile(ms, [50, 99])
    return Result(f"{name}, p99", float(p99), float(p50), "ms", target, higher_is_better=False)


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


def roundtrip_section(quick: bool = False) -> list[Result]:
    """Raw pty exchange, NJOINT to state, HEARTBEAT to ACK: p99 (median p50) in ms.

    The emulator logs when it read each command and when it wrote each state on the
    machine's monotonic clock (``time.perf_counter``, shared by the two processes), so the
    NJOINT-to-state round trip splits into host -> device, the device's wait for its next
    tick, and device -> host. The link round trip (first and last) is what compares with the
    raw pty exchange; the paced loop adds the wait for the tick.
    """
    from jointlab.hardware import EmulatorProcess, SerialRobot
    from jointlab.hardware.protocol import NJointCommand, StateData

    count = 1000 if quick else 5000
    action, state = _sample_messages()
    njoint_bytes = len(encode_frame(NJointCommand.from_action(action), 0))
    state_bytes = len(encode_frame(StateData.from_state(state), 0))
    raw = raw_pty_round_trips(count, njoint_bytes, state_bytes)
    emulator = EmulatorProcess("arm6", realtime=REALTIME[0])
    with emulator, SerialRobot(emulator.path, "arm6", dead_periods=1000) as robot:
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
    return [
        _latency(f"raw pty exchange {njoint_bytes} B -> {state_bytes} B (2 processes)", raw),
        _latency("NJOINT -> DATA STATE over the link (tick wait excluded)", link,
                 ROUND_TRIP_TARGET),
        _latency("NJOINT -> next DATA STATE in the paced 1 kHz loop", cycle, ROUND_TRIP_TARGET),
        _latency("REQ HEARTBEAT -> ACK, SerialRobot + emulator", heartbeat),
    ]  # fmt: skip


def deadline_fraction(url: str, seconds: float) -> tuple[float, float, int, int]:
    """Run a 1 kHz loop on ``url`` for ``seconds`` of device time.

    Returns:
        Per cent of device ticks at which a fresh command took effect, per cent of periods
        the host answered before the next state, ticks run, emulator ticks started late.
    """
    import jointlab

    with jointlab.connect(url) as robot:
        robot.arm()
        robot.reset()
        home, dt = robot.description.home, robot.control_dt
        amplitude = np.array([0.2, 0.1, 0.1, 0.0, 0.1, 0.0])
        before = robot.emulator.report()
        start_time, late, periods = robot.time, 0, 0
        while robot.time - start_time < seconds:
            previous = robot.time
            robot.step()
            received = robot.states_received
            t = robot.read().time  # a controller: a 0.5 Hz sine on four joints
            robot.apply(NJointAction.Position(home + amplitude * np.sin(np.pi * t)))
            skipped = round((robot.time - previous) / dt) - 1
            periods += skipped + 1
            late += skipped + (robot.states_received != received)
        after = robot.emulator.report()
    ticks = after.tick - before.tick
    device = 100.0 * (after.command_ticks - before.command_ticks) / ticks
    return device, 100.0 * (1.0 - late / periods), ticks, after.late_ticks - before.late_ticks


def deadlines_section(quick: bool = False) -> list[Result]:
    """Per cent of 1 kHz periods whose command made its device tick, over 10 s (2 s quick)."""
    seconds = 2.0 if quick else 10.0
    url = f"emulated://arm6?realtime={int(REALTIME[0])}&dead_periods=1000"
    device, host, ticks, late = deadline_fraction(url, seconds)
    return [
        Result("device ticks with a fresh command (device count)", device, device, "%",
               DEADLINE_TARGET),
        Result(f"periods answered before the next state ({ticks} ticks, {late} late)",
               host, host, "%"),
    ]  # fmt: skip


#: Sections by name, run in this order.
SECTIONS: dict[str, Callable[[bool], list[Result]]] = {
    "codec": codec_section,
    "roundtrip": roundtrip_section,
    "deadlines": deadlines_section,
}


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3f}"


def _print(section: str, results: list[Result]) -> None:
    print(f"\n[{section}]")
    for r in results:
        line = f"  {r.name:<58} {_number(r.value):>12} {r.unit}  (median {_number(r.median)})"
        if r.target is not None:
            ratio = r.value / r.target if r.higher_is_better else r.target / r.value
            verdict = "meets" if r.met else "MISSES"
            line += f"  {ratio:.2f}x target {_number(r.target)}: {verdict}"
        print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", help=f"any of {', '.join(SECTIONS)} (all)")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="SCHED_FIFO for this process and the emulator (needs privileges)",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {unknown}; choose from {list(SECTIONS)}")
    if args.realtime:
        from jointlab.hardware.emulator import realtime_priority

        REALTIME[0] = realtime_priority()
        print(f"real-time scheduling {'granted' if REALTIME[0] else 'NOT granted'}")
    print(
        f"python {sys.version.split()[0]}, numpy {np.__version__}, load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for name in args.sections or list(SECTIONS):
        _print(name, SECTIONS[name](args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
