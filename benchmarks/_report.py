"""Shared reporting of the benchmarks: medians with their spread, load average, paired rounds."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np

from jointlab.cli.steal import cpu_times, steal_percent

#: The machine's CPU times when the script started (for :func:`load`'s steal time).
_STARTED = cpu_times()


def load() -> str:
    """The 1, 5 and 15 minute load averages, for the start and end lines of a report.

    Where ``/proc/stat`` gives it, also the steal time since the script started: the share
    of all CPU time the hypervisor gave to other guests (it moves wall-clock figures).
    """
    one, five, fifteen = os.getloadavg()
    stolen = steal_percent(_STARTED)
    steal = "" if stolen is None else f", steal {stolen:.1f} % since the start"
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}{steal}"


def header(title: str) -> None:
    """Print what ran, where, and the load at the start."""
    print(
        f"{title}: python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}, start {load()}"
    )


def spread(values: Sequence[float], scale: float = 1.0, digits: int = 2) -> str:
    """``median [min - max]`` of ``values`` times ``scale``."""
    scaled = [v * scale for v in values]
    return (
        f"{statistics.median(scaled):.{digits}f} "
        f"[{min(scaled):.{digits}f}-{max(scaled):.{digits}f}]"
    )


def per_call(call: Callable[[], object], number: int, repeats: int) -> list[float]:
    """Seconds of CPU per call of ``call``, one figure per repeat of ``number`` calls."""
    figures = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(number):
            call()
        figures.append((time.process_time() - start) / number)
    return figures


def row(figure: str, values: Sequence[float], unit: str, target: str = "") -> dict[str, object]:
    """One line of the summary ``jointlab bench`` prints: median, spread, unit and target.

    ``target`` is ``"<= 1.15"`` or ``">= 2.0"`` (or empty); ``met`` is judged on the median.
    """
    median = statistics.median(values)
    met = None
    if target:
        sign, bound = target.split()
        met = median <= float(bound) if sign == "<=" else median >= float(bound)
    return {
        "figure": figure,
        "median": median,
        "low": min(values),
        "high": max(values),
        "unit": unit,
        "target": target,
        "met": met,
    }


def write_summary(rows: list[dict[str, object]]) -> None:
    """Append ``rows`` to the file named by ``JOINTLAB_BENCH_SUMMARY`` (set by jointlab bench)."""
    path = os.environ.get("JOINTLAB_BENCH_SUMMARY")
    if not path:
        return
    with open(path, "a") as handle:
        for item in rows:
            handle.write(json.dumps(item) + "\n")
