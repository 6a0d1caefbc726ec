"""What the live view costs the control loop: loop period with and without it, as a ratio.

sim://arm6 runs its control loop (a new position target, apply, step, read) as fast as it
can, in paired rounds: without a view, with a :class:`jointlab.view.LiveView` following it
(redrawing at 30 Hz, nobody looking), and with the view open in a headless Chromium (which
draws the 3D scene in software on this machine's other core). Printed: the mean loop period
per round in wall time, in the loop thread's CPU time (what the listener adds to the loop
itself, load-independent) and in the whole process's CPU time (the view's drawing and server
threads included), the ratios against the round without a view (median [lowest-highest]
over the paired rounds), and the view's redraws per second of wall time (target >= 30).

    PYTHONPATH=. python benchmarks/view_overhead.py [--rounds 5] [--periods 1500]
    PYTHONPATH=. python benchmarks/view_overhead.py --instructions

``--instructions`` counts instructions with callgrind instead (load-independent): a 1 kHz
loop period alone and with the view's feed listening, and one redraw of the view (3D and
plots, 600 samples); it prints what the feed adds to a period and what 30 redraws a second
add to a second of the 1 kHz loop, both as a share of the loop's own instructions.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import jointlab
from benchmarks._report import header, load, row, spread, write_summary
from jointlab.interface import NJointAction
from jointlab.view import LiveView
from jointlab.view.browser import HeadlessBrowser, find_chromium


def loop(robot, periods: int) -> tuple[float, float, float]:
    """Per control period over ``periods`` periods: wall s, loop-thread CPU s, process CPU s.

    The process's CPU time counts every thread: the view's drawing and its server included.
    """
    home = robot.description.home
    wall, thread, process = time.perf_counter(), time.thread_time(), time.process_time()
    for k in range(periods):
        robot.apply(NJointAction.Position(home + 0.3 * np.sin(0.01 * k)))
        robot.step()
        robot.read()
    return (
        (time.perf_counter() - wall) / periods,
        (time.thread_time() - thread) / periods,
        (time.process_time() - process) / periods,
    )


def paced(robot, seconds: float) -> tuple[int, int]:
    """Run the loop in real time, sleeping between periods as on a device.

    Returns the periods that started late by more than one period, and the periods run.
    """
    home, dt = robot.description.home, robot.control_dt
    start = time.perf_counter()
    late, periods = 0, round(seconds / dt)
    for k in range(periods):
        due = start + k * dt
        now = time.perf_counter()
        if now < due:
            time.sleep(due - now)
        elif now - due > dt:
            late += 1
        robot.apply(NJointAction.Position(home + 0.3 * np.sin(0.01 * k)))
        robot.step()
        robot.read()
    return late, periods


def child(periods: int, redraws: int) -> None:
    """Under callgrind: the phases ``loop``, ``loop-feed`` and ``redraw``."""
    from instructions import _dump

    with (
        jointlab.connect("sim://arm6") as robot,
        LiveView(robot.description, port=0, rate_hz=0) as view,
    ):
        robot.arm()
        loop(robot, 200)
        _dump("setup")
        loop(robot, periods)
        _dump("loop")
        undo = robot.listen(view.feed)
        loop(robot, 700)  # fill the window
        _dump("setup")
        loop(robot, periods)
        _dump("loop-feed")
        for k in range(redraws):  # the plots every third redraw: 10 Hz at 30 Hz, as the view
            view.drawn_count = -1  # something new each time
            view.redraw(plots=k % 3 == 0)
        _dump("redraw")
        undo()


def count_instructions(periods: int = 1000, redraws: int = 30) -> None:
    """Run :func:`child` under callgrind and print the shares."""
    import os
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from instructions import counts

    if shutil.which("valgrind") is None:
        print("  skipped: valgrind (callgrind) is not installed")
        return
    with tempfile.TemporaryDirectory() as folder:
        here = Path(__file__).resolve()
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "-q",
                f"--callgrind-out-file={folder}/callgrind.%p",
                sys.executable,
                str(here),
                "--child",
                str(periods),
                str(redraws),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(
                    [str(here.parents[1]), str(here.parent), os.environ.get("PYTHONPATH", "")]
                ),
            },
        )
        totals = counts(Path(folder))
    period = totals["loop"] / periods
    feed = totals["loop-feed"] / periods - period
    redraw = totals["redraw"] / redraws
    print(f"instructions (callgrind), sim://arm6 at 1 kHz, {periods} periods, {redraws} redraws:")
    print(f"  loop period alone            {period / 1e3:8.1f} thousand")
    print(
        f"  the feed, added per period   {feed / 1e3:8.1f} thousand "
        f"({100 * feed / period:.1f} % of a period)"
    )
    print(f"  one redraw (3D; plots 1 in 3) {redraw / 1e3:8.1f} thousand")
    per_second = 30 * redraw / (1000 * period)
    print(
        f"  30 redraws / 1 s of the loop {100 * per_second:.1f} % "
        "(the view thread's share, drawn on the other core when one is free)"
    )
    write_summary(
        [
            row(
                "live view feed, % of a 1 kHz period's instructions",
                [100 * feed / period],
                "%",
                "<= 10",
            ),
            row(
                "live view redraws at 30 Hz, % of the 1 kHz loop's instructions",
                [100 * per_second],
                "%",
            ),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--periods", type=int, default=1500)
    parser.add_argument("--instructions", action="store_true", help="count with callgrind")
    parser.add_argument("--child", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.instructions:
        header("view_overhead --instructions")
        count_instructions()
        print(f"end {load()}")
        return
    header("view_overhead")
    browser_ok = find_chromium() is not None
    periods: dict[str, list[tuple[float, float, float]]] = {"none": [], "view": [], "browser": []}
    rates: list[float] = []
    paced_rates: list[float] = []
    paced_late: list[float] = []
    alone_late: list[float] = []
    with jointlab.connect("sim://arm6") as robot:
        robot.arm()
        loop(robot, 200)  # warm
        with LiveView(robot.description, port=0) as view:
            browser = HeadlessBrowser() if browser_ok else None
            try:
                for _ in range(args.rounds):
                    periods["none"].append(loop(robot, args.periods))
                    late, count = paced(robot, 2.0)
                    alone_late.append(late / count)
                    undo = robot.listen(view.feed)
                    periods["view"].append(loop(robot, args.periods))
                    if browser is not None:
                        browser.open(view.url)
                        browser.wait_for("document.querySelectorAll('.u-wrap canvas').length")
                        before, started = view.frames_drawn, time.perf_counter()
                        periods["browser"].append(loop(robot, args.periods))
                        rates.append((view.frames_drawn - before) / (time.perf_counter() - started))
                        before, started = view.frames_drawn, time.perf_counter()
                        late, count = paced(robot, 2.0)
                        paced_rates.append(
                            (view.frames_drawn - before) / (time.perf_counter() - started)
                        )
                        paced_late.append(late / count)
                        browser.open("about:blank")
                    undo()
            finally:
                if browser is not None:
                    browser.close()
    dt = robot.control_dt
    print(
        f"sim://arm6, control period {dt * 1e3:g} ms of robot time, {args.periods} periods "
        f"per round, {args.rounds} paired rounds"
    )
    rows = []
    for column, what in enumerate(("wall time", "loop thread CPU", "process CPU")):
        print(f"  {what} per period:")
        for name, values in periods.items():
            if values:
                print(f"    {name:8s}: {spread([v[column] for v in values], 1e6, 1)} µs")
        for name in ("view", "browser"):
            if periods[name]:
                ratios = [
                    b[column] / a[column]
                    for a, b in zip(periods["none"], periods[name], strict=False)
                ]
                print(f"    ratio {name} / none: {spread(ratios, 1.0, 3)}")
                rows.append(
                    row(
                        f"control loop with the live view ({name}) / without, {what}",
                        ratios,
                        "x",
                        "<= 1.1" if column < 2 else "",
                    )
                )
    if paced_rates:
        print(
            f"  real-time 1 kHz loop (sleeps between periods), page open: redraws per second "
            f"{spread(paced_rates, 1.0, 1)}, periods late by more than a period "
            f"{spread(paced_late, 100.0, 2)} % (without the view: "
            f"{spread(alone_late, 100.0, 2)} %)"
        )
        rows.append(
            row("live view redraws per second, real-time 1 kHz loop", paced_rates, "Hz", ">= 30")
        )
    if rates:
        print(f"  view redraws per second with the browser open: {spread(rates, 1.0, 1)}")
        rows.append(row("live view redraws per second (browser open)", rates, "Hz", ">= 30"))
    else:
        print("  no Chromium: the browser rounds were not run")
    print(f"end {load()}")
    write_summary(rows)


if __name__ == "__main__":
    main()
