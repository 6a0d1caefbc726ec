"""Running a command program from the command line: the summary table, the log, the plot."""

from __future__ import annotations

import time as wallclock
from pathlib import Path
from typing import Any

from rich.table import Table

from jointlab.cli.common import console


def summary_table(title: str, results: list, total_time: float) -> Table:
    """One row per program step: robot time, ticks, tracking error, peak torque."""
    table = Table(title=title)
    for column in ("step", "command", "robot time s", "ticks", "max err", "rms err",
                   "peak torque"):  # fmt: skip
        table.add_column(column, justify="right" if column != "command" else "left")
    for index, result in enumerate(results):
        summary = result.summary
        table.add_row(
            str(index), result.step.verb, f"{summary.duration:.3f}", str(summary.ticks),
            f"{summary.max_tracking_error:.2e}", f"{summary.rms_tracking_error:.2e}",
            f"{result.peak_torque:.2f}",
        )  # fmt: skip
    peak = max((r.peak_torque for r in results if r.peak_torque == r.peak_torque), default=0.0)
    errors = [r.summary.max_tracking_error for r in results]
    worst = max((e for e in errors if e == e), default=0.0)
    table.add_row("all", "", f"{total_time:.3f}", str(sum(r.summary.ticks for r in results)),
                  f"{worst:.2e}", "", f"{peak:.2f}", end_section=True)  # fmt: skip
    return table


def execute_program(robot_url: str, program: Any, out: Path | None, title: str,
                    **options: Any) -> int:  # fmt: skip
    """Connect to ``robot_url``, run ``program`` (or ``program(robot)``), log and plot it."""
    import jointlab
    from jointlab.program import run_program
    from jointlab.recording import Recorder
    from jointlab.recording.plots import plot_log, save

    log_path = None if out is None else out / "demo_log.npz"
    started = wallclock.perf_counter()
    with jointlab.connect(robot_url, **options) as robot:
        if callable(program):
            program = program(robot)
        recorder = None if log_path is None else Recorder(log_path, metadata=robot)
        try:
            with console.status("running the program...") as status:
                results = run_program(
                    robot, program, recorder=recorder,
                    on_step=lambda i, step: status.update(f"step {i}: {step.verb}"),
                )  # fmt: skip
        finally:
            if recorder is not None:
                recorder.close()
        robot_time = robot.time
    console.print(summary_table(title, results, robot_time))
    console.print(f"wall time {wallclock.perf_counter() - started:.2f} s")
    if log_path is not None and out is not None:
        image = save(plot_log(log_path, title=title), out / "demo.png")
        console.print(f"wrote {log_path} and {image}")
    return 0
