"""Control rate over an emulated servo bus at 1 Mbaud, 6 servos, against the wire limit.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/servo_bus.py [--seconds S] [--runs N]

For the SO-101 (Feetech STS3215, one Sync Write of Goal Position) and the Koch v1.1 (Dynamixel
XL430 + XL330, one Bulk Write of goal positions and goal currents), one **bus cycle** is what
``ServoBusRobot`` does per period: the goal write, then one Sync Read of every servo's state
block (Feetech 15 bytes, Dynamixel 25 bytes each).

* **wire limit**: the cycles per second the line itself allows: the bytes of the cycle's
  frames (instructions and status packets, counted from the packets the SDK writes and the
  emulated servos send back) times 10 bits at 1 Mbaud, plus the servos' return delay (0 on the
  set-up emulated servos). Nothing can go faster.
* **achieved**: cycles per second of back-to-back cycles through the vendor's SDK against the
  emulated bus in real time (the emulator delays every reply by its frames' wire time, and
  runs its servos' firmware at 1 kHz meanwhile).

The ratio achieved / limit (printed first) is what the host (Python SDK, pty) and the emulator
cost on top of the wire. Medians over ``--runs`` runs with their spread, and the load average
at start and end: on a busy machine the ratio falls, the limit does not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import jointlab
from jointlab.hardware.servo_emulator.emulator import BITS_PER_BYTE

BAUD = 1_000_000


def cycle_bytes(robot) -> tuple[int, int]:
    """Bytes the host writes and reads in one bus cycle (measured on the port)."""
    port = robot.driver.port
    received = []
    original = port.readPort

    def counting(length):
        data = original(length)
        received.append(len(data))
        return data

    port.readPort = counting
    written = robot.driver.bytes_written
    cycle(robot)
    port.readPort = original
    return robot.driver.bytes_written - written, sum(received)


def cycle(robot) -> None:
    """One bus cycle exactly as ServoBusRobot.step() runs it, without the pacing."""
    robot.exchange()


def measure(url: str, seconds: float) -> tuple[float, float, int, int]:
    """Achieved cycles/s, wire-limit cycles/s, bytes written and read per cycle."""
    with jointlab.connect(url, retries=5) as robot:
        robot.arm()
        robot.apply(jointlab.NJointAction.Position(robot.description.home))
        cycle(robot)  # the first cycle also writes the gain registers
        out, back = cycle_bytes(robot)
        wire = (out + back) * BITS_PER_BYTE / BAUD  # return delays are 0 on set-up servos
        cycles, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            cycle(robot)
            cycles += 1
        achieved = cycles / (time.perf_counter() - start)
    return achieved, 1.0 / wire, out, back


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per run")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    print(f"load average at start: {load_start:.2f}")
    rows = []
    buses = (("so101 (Feetech)", "emulated://so101"), ("koch (Dynamixel)", "emulated://koch"))
    for name, url in buses:
        runs = [measure(url, args.seconds) for _ in range(args.runs)]
        achieved = [r[0] for r in runs]
        limit, out, back = runs[0][1], runs[0][2], runs[0][3]
        ratios = [a / limit for a in achieved]
        rows.append(
            (
                name,
                statistics.median(ratios),
                min(ratios),
                max(ratios),
                statistics.median(achieved),
                limit,
                out,
                back,
            )
        )
    print()
    print(
        f"{'bus, 6 servos, 1 Mbaud':<20} {'ratio':>6} {'(min..max)':>13} {'achieved Hz':>12} "
        f"{'wire limit Hz':>14} {'bytes out+back':>15}"
    )
    for name, ratio, lo, hi, achieved, limit, out, back in rows:
        print(
            f"{name:<20} {ratio:6.2f} {f'({lo:.2f}..{hi:.2f})':>13} {achieved:12.0f} "
            f"{limit:14.0f} {f'{out}+{back}':>15}"
        )
    print(f"\nload average at end: {os.getloadavg()[0]:.2f} (start {load_start:.2f})")
    print(f"medians of {args.runs} runs of {args.seconds} s each")


if __name__ == "__main__":
    main()
