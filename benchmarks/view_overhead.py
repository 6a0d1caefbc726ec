"""What the live view costs the control loop: loop period with and without it, as a ratio.

sim://arm6 runs its control loop (a new position target, apply, step, read) as fast as it
can, in paired rounds: without a view, with a :class:`jointlab.view.LiveView` following it
(redrawing at 30 Hz, nobody looking), and with the view open in a headless Chromium (which
draws the 3D scene in software on this machine's other core). Printed: the mean loop period
per round, the ratios against the round without a view (median [lowest-highest] over the
paired rounds), and the view's redraws per second of wall time (target >= 30).

    PYTHONPATH=. python benchmarks/view_overhead.py [--rounds 5] [--periods 1500]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import jointlab
from benchmarks._report import header, load, row, spread, write_summary
from jointlab.interface import NJointAction
from jointlab.view import LiveView
from jointlab.view.browser import HeadlessBrowser, find_chromium


def loop(robot, periods: int) -> float:
    """Mean wall seconds per control period over ``periods`` periods."""
    home = robot.description.home
    started = time.perf_counter()
    for k in range(periods):
        robot.apply(NJointAction.Position(home + 0.3 * np.sin(0.01 * k)))
        robot.step()
        robot.read()
    return (time.perf_counter() - started) / periods


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--periods", type=int, default=1500)
    args = parser.parse_args()
    header("view_overhead")
    browser_ok = find_chromium() is not None
    periods: dict[str, list[float]] = {"none": [], "view": [], "browser": []}
    rates: list[float] = []
    with jointlab.connect("sim://arm6") as robot:
        robot.arm()
        loop(robot, 200)  # warm
        with LiveView(robot.description, port=0) as view:
            browser = HeadlessBrowser() if browser_ok else None
            try:
                for _ in range(args.rounds):
                    periods["none"].append(loop(robot, args.periods))
                    undo = robot.listen(view.feed)
                    periods["view"].append(loop(robot, args.periods))
                    if browser is not None:
                        browser.open(view.url)
                        browser.wait_for("document.querySelectorAll('.u-wrap canvas').length")
                        before, started = view.frames_drawn, time.perf_counter()
                        periods["browser"].append(loop(robot, args.periods))
                        rates.append((view.frames_drawn - before) / (time.perf_counter() - started))
                        browser.open("about:blank")
                    undo()
            finally:
                if browser is not None:
                    browser.close()
    dt = robot.control_dt
    print(f"sim://arm6, control period {dt * 1e3:g} ms of robot time, {args.periods} periods "
          f"per round, {args.rounds} paired rounds")  # fmt: skip
    for name, values in periods.items():
        if values:
            print(f"  loop period, {name:8s}: {spread(values, 1e6, 1)} µs")
    rows = []
    for name in ("view", "browser"):
        if periods[name]:
            ratios = [b / a for a, b in zip(periods["none"], periods[name], strict=False)]
            print(f"  ratio {name} / none: {spread(ratios, 1.0, 3)}")
            rows.append(row(f"control-loop period with the live view ({name}) / without",
                            ratios, "x", "<= 1.1"))  # fmt: skip
    if rates:
        print(f"  view redraws per second with the browser open: {spread(rates, 1.0, 1)}")
        rows.append(row("live view redraws per second (browser open)", rates, "Hz", ">= 30"))
    else:
        print("  no Chromium: the browser rounds were not run")
    print(f"  median ratio over all rounds: "
          f"{statistics.median(periods['view']) / statistics.median(periods['none']):.3f}")
    print(f"end {load()}")
    write_summary(rows)


if __name__ == "__main__":
    main()
