"""Serial link benchmark (issue 6): codec throughput; round trip and deadlines come later.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/serial_link.py            # every section
    PYTHONPATH=. .venv/bin/python benchmarks/serial_link.py codec --quick

Sections (each a function returning :class:`Result` rows, registered in ``SECTIONS``):

* ``codec``: frames/s of pack + frame + CRC + decode for a 6-DoF NJOINT and a 6-DoF
  DATA STATE, one frame per ``feed`` call (the worst case for the decoder), plus the
  burst case and the host path with the float64 conversions. Target: >= 300k frames/s.
* ``roundtrip`` (to add with SerialRobot and the emulator): NJOINT-to-state latency p50/p99
  through ``SerialRobot`` over the pty beside a raw pty exchange of the same byte counts
  measured in the same run. Target: p99 <= 1 ms.
* ``deadlines`` (to add): fraction of 1 kHz control deadlines met over 10 s with
  ``emulated://arm6``, emulator in its own process. Target: >= 99 %.

Each timing is the best of several repeats (the usual microbenchmark practice on a shared
machine: the minimum is the least disturbed run); the median is printed beside it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

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
DOF = 6


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


#: Sections by name, run in this order. Later: "roundtrip", "deadlines".
SECTIONS: dict[str, Callable[[bool], list[Result]]] = {"codec": codec_section}


def _print(section: str, results: list[Result]) -> None:
    print(f"\n[{section}]")
    for r in results:
        line = f"  {r.name:<58} {r.value:>12,.0f} {r.unit}  (median {r.median:,.0f})"
        if r.target is not None:
            ratio = r.value / r.target if r.higher_is_better else r.target / r.value
            verdict = "meets" if r.met else "MISSES"
            line += f"  {ratio:.2f}x target {r.target:,.0f}: {verdict}"
        print(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", help=f"any of {', '.join(SECTIONS)} (all)")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {unknown}; choose from {list(SECTIONS)}")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    for name in args.sections or list(SECTIONS):
        _print(name, SECTIONS[name](args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
