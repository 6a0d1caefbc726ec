"""Running a command program from the command line: the summary table, the log, the plot."""

from __future__ import annotations

import time as wallclock
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from jointlab.cli.common import console

#: File names inside a run folder.
LOG_NAME = "log.npz"
PLOT_NAME = "plot.png"


def summary_table(
    title: str, results: list, total_time: float, linear: Sequence[bool] = ()
) -> Table:
    """One row per program step: robot time, ticks, tracking error, peak torque, with units.

    Errors are shown in mrad (mm for linear joints; "mrad|mm" when the robot has both, a
    millimetre and a milliradian being the same thousandth), torques in N·m (N).

    Args:
        title: The table's title.
        results: The program's :class:`~jointlab.program.StepResult` list.
        total_time: Robot time of the whole program, s.
        linear: Per joint, whether it is linear (the description's joint types).
    """
    kinds = {bool(k) for k in linear} or {False}
    error_unit = "mrad|mm" if len(kinds) == 2 else "mm" if True in kinds else "mrad"
    torque_unit = "N·m|N" if len(kinds) == 2 else "N" if True in kinds else "N·m"
    table = Table(title=title)
    for column in (
        "step",
        "command",
        "robot time (s)",
        "ticks",
        f"max err ({error_unit})",
        f"rms err ({error_unit})",
        f"peak torque ({torque_unit})",
    ):
        table.add_column(column, justify="right" if column != "command" else "left")
    for index, result in enumerate(results):
        summary = result.summary
        table.add_row(
            str(index),
            result.step.verb,
            f"{summary.duration:.3f}",
            str(summary.ticks),
            f"{1e3 * summary.max_tracking_error:.3g}",
            f"{1e3 * summary.rms_tracking_error:.3g}",
            f"{result.peak_torque:.2f}",
        )
    peak = max((r.peak_torque for r in results if r.peak_torque == r.peak_torque), default=0.0)
    errors = [r.summary.max_tracking_error for r in results]
    worst = max((e for e in errors if e == e), default=0.0)
    table.add_row(
        "all",
        "",
        f"{total_time:.3f}",
        str(sum(r.summary.ticks for r in results)),
        f"{1e3 * worst:.3g}",
        "",
        f"{peak:.2f}",
        end_section=True,
    )
    return table


def execute_program(
    url: str, program: Any, work: Path, title: str, make_program: Callable[[Any], Any] | None = None
) -> None:
    """Connect to ``url``, run ``program`` (or ``make_program(robot)``), log and plot it.

    Writes ``log.npz`` (desired and applied actions, states, command events and one
    ``command`` event per program step) and ``plot.png`` into ``work``.
    """
    import jointlab
    from jointlab.program import check_program, run_program
    from jointlab.recording import LogMetadata, Recorder
    from jointlab.recording.plots import plot_log, save

    started = wallclock.perf_counter()
    with jointlab.connect(url) as robot:
        if make_program is not None:
            program = make_program(robot)
        program = check_program(program, robot.description)  # before the log is opened
        metadata = LogMetadata.from_robot(robot, url=url, title=title)
        recorder = Recorder(work / LOG_NAME, metadata=metadata)
        try:
            with recorder:

                def announce(index: int, step: Any, status: Any) -> None:
                    status.update(f"step {index}: {step.verb}")
                    recorder.event(robot.time, "command", verb=step.verb, step=index)

                with console.status("running the program...") as status:
                    results = run_program(
                        robot,
                        program,
                        recorder=recorder,
                        on_step=lambda i, s: announce(i, s, status),
                    )
        except BaseException:
            if not recorder.rows_logged:  # refused before the first tick: the run never started
                recorder.path.unlink(missing_ok=True)
            raise
        robot_time = robot.time
    linear = [spec.type.value == "linear" for spec in robot.description.joints]
    console.print(summary_table(title, results, robot_time, linear))
    console.print(f"wall time {wallclock.perf_counter() - started:.2f} s")
    save(plot_log(work / LOG_NAME, title=title), work / PLOT_NAME)
