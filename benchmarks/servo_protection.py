"""What the servos' protection rules cost the emulated bus: firmware ticks with and without.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/servo_protection.py [--ticks N] [--rounds R]
    PYTHONPATH=. .venv/bin/python benchmarks/servo_protection.py --instructions [--ticks N]
    PYTHONPATH=. .venv/bin/python benchmarks/servo_protection.py --quick   # a smoke test

An emulated SO-101 (six STS3215, :class:`~jointlab.hardware.servo_emulator.emulator.BusEmulator`
ticked directly, no pty traffic) holds a raised pose with torque on; the same arm with the
rules switched off (its firmware's ``_protect`` made a no-op: the peer, in this script only)
runs in the same rounds, alternating, so both see the same machine. Two cases: **holding**
(the rules sample heat, supply and the overload timers every 10 ms and find nothing) and
**squeezing** (the gripper closes on a fixed cube: the overload timer runs, trips at 2 s, and
Protective Torque caps the output afterwards). The figure is CPU time per firmware tick
(``time.process_time``), the median of the rounds with its spread, and the ratio rules-on /
rules-off per round: what protection adds to every emulated servo bus. ``--instructions``
counts instructions per tick under valgrind's callgrind instead (the same on a busy machine
as on an idle one; wall time on a shared 2-core machine moves by tens of per cent).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _report import header, load, row, spread, write_summary
from instructions import _dump, callgrind_totals

from jointlab.hardware.servo_emulator.emulator import BusEmulator
from jointlab.robots import load_robot, with_limits

#: The raised pose the arm holds, rad (joint order of so101.yaml).
RAISED = [0.0, 0.0, 1.2, 0.6, 0.0, 0.6]


def squeezing_arm() -> tuple[object, tuple[np.ndarray, np.ndarray]]:
    """The SO-101 with a cube between its jaws, the pose on it and the goal closing on it.

    The gripper's wider side (centre to min or max) is cut at its middle, where the jaw
    meets the cube (a hard stop); the goal is that side's original end.
    """
    description = load_robot("so101")
    g = description.joint_names.index("gripper")
    centre = description.actuators[g].centre
    lower, upper = description.lower.copy(), description.upper.copy()
    pose, goal = np.array(RAISED), np.array(RAISED)
    if centre - lower[g] > upper[g] - centre:
        goal[g], lower[g] = lower[g], 0.5 * (centre + lower[g])
        pose[g] = lower[g]
        return with_limits(description, min_position=lower), (pose, goal)
    goal[g], upper[g] = upper[g], 0.5 * (centre + upper[g])
    pose[g] = upper[g]
    return with_limits(description, max_position=upper), (pose, goal)


def build(case: str, rules: bool) -> BusEmulator:
    """An emulated SO-101, torque on, holding (or squeezing); ``rules`` off: a no-op."""
    if case == "squeezing":
        description, (pose, goal) = squeezing_arm()
    else:
        description, pose = load_robot("so101"), np.array(RAISED)
        goal = pose
    emulator = BusEmulator(description, lockstep=True)
    emulator.move(pose)
    servos = emulator.servos
    ticks = np.rint(servos.transmissions.to_motor(goal)).astype(np.int64)
    servos.set("goal_position", ticks)
    servos.set("torque_enable", np.ones(servos.n))
    if not rules:
        servos._protect = lambda *args: None  # the peer: this script's, not the library's
    return emulator


def cpu_per_tick(emulator: BusEmulator, ticks: int) -> float:
    start = time.process_time()
    for _ in range(ticks):
        emulator.tick()
    return (time.process_time() - start) / ticks


CASES = ("holding", "squeezing")


def child(ticks: int) -> None:
    """The program counted under callgrind: each case with and without rules, warmed up."""
    for case in CASES:
        for rules in (True, False):
            emulator = build(case, rules)
            cpu_per_tick(emulator, 2500 if case == "squeezing" else 200)
            _dump("setup")
            cpu_per_tick(emulator, ticks)
            _dump(f"{case}-{'on' if rules else 'off'}")
            emulator.close()


def instructions(ticks: int) -> None:
    """Count every case under callgrind and print instructions per tick and the ratios."""
    totals = callgrind_totals(__file__, ["--ticks", str(ticks)])
    if totals is None:
        return
    print(f"instructions per firmware tick (callgrind, {ticks} ticks per case; thousands):")
    rows = []
    for case in CASES:
        on, off = totals[f"{case}-on"] / ticks, totals[f"{case}-off"] / ticks
        print(
            f"  {case:10s} rules on {on / 1e3:8.1f}  off {off / 1e3:8.1f}  on / off {on / off:.3f}x"
        )
        rows.append(row(f"protection, {case}: rules on / off, instructions", [on / off], "x"))
    write_summary(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=3000, help="firmware ticks per round")
    parser.add_argument("--rounds", type=int, default=5, help="paired rounds")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions under callgrind"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="a smoke test: 200 ticks x 2")
    args = parser.parse_args()
    if args.quick:
        args.ticks, args.rounds = 200, 2
    if args.child:
        child(args.ticks)
        return
    if args.instructions:
        header("servo protection (instructions)")
        instructions(args.ticks)
        return
    header("servo protection")
    print(f"{args.ticks} firmware ticks (1 kHz) x {args.rounds} paired rounds, 6 servos")
    rows = []
    for case in CASES:
        on, off = build(case, True), build(case, False)
        try:
            for emulator in (on, off):  # warm both (the squeeze trips after 2 s)
                cpu_per_tick(emulator, 2500 if case == "squeezing" else 200)
            with_rules, without, ratio = [], [], []
            for _ in range(args.rounds):
                a = cpu_per_tick(on, args.ticks)
                b = cpu_per_tick(off, args.ticks)
                with_rules.append(a)
                without.append(b)
                ratio.append(a / b)
            tripped = int(on.report().errors[5])
        finally:
            on.close()
            off.close()
        note = f" (gripper error bits 0x{tripped:02x})" if case == "squeezing" else ""
        print(f"{case}{note}:")
        print(f"  rules on   {spread(with_rules, 1e6)} us per tick")
        print(f"  rules off  {spread(without, 1e6)} us per tick")
        print(f"  on / off   {spread(ratio, 1.0, 3)}x")
        rows.append(row(f"protection, {case}: rules on / off per tick", ratio, "x"))
        rows.append(row(f"protection, {case}: rules on", [v * 1e6 for v in with_rules], "us"))
    ratios = [r["median"] for r in rows[::2]]
    print(f"end {load()}; median ratio over both cases {statistics.median(ratios):.3f}x")
    write_summary(rows)


if __name__ == "__main__":
    main()
