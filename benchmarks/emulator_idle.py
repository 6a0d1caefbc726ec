"""CPU an idle emulator process takes, in % of one core (Linux: /proc/PID/stat).

Each emulator (the SO-101 and Koch servo buses, the arm6 JointLab device) is started in real
time, left one second to settle, then its process's user + system CPU time is read over
``--seconds`` of wall-clock time with no host talking to it. The servo buses sleep while
their arm rests; the JointLab device streams its state every few ticks and never sleeps.

    PYTHONPATH=. python benchmarks/emulator_idle.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import os
import time

from jointlab.hardware.emulator.process import EmulatorProcess
from jointlab.hardware.servo_emulator.emulator_process import BusEmulatorProcess


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid``, s."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    emulators = {
        "so101 servo bus": lambda: BusEmulatorProcess("so101"),
        "koch servo bus": lambda: BusEmulatorProcess("koch"),
        "arm6 JointLab device": lambda: EmulatorProcess("arm6"),
    }
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    for name, start in emulators.items():
        with start() as emulator:
            time.sleep(1.0)
            cpu0, wall0 = cpu_seconds(emulator.pid), time.monotonic()
            time.sleep(args.seconds)
            cpu1, wall1 = cpu_seconds(emulator.pid), time.monotonic()
        print(f"{name:22} idle CPU {100 * (cpu1 - cpu0) / (wall1 - wall0):5.1f} % of one core")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
