"""Run the same measurement in N independent processes: the ceiling any engine can reach."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any


def _run(measure: Callable[[float], Any], seconds: float, queue: multiprocessing.Queue) -> None:
    queue.put(measure(seconds))


def in_processes(measure: Callable[[float], Any], workers: int, seconds: float) -> list[Any]:
    """``measure(seconds)`` in ``workers`` forked processes at once; their results.

    ``measure`` must be a module-level function (each process measures itself, no IPC
    while it runs).
    """
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue = context.Queue()
    processes = [
        context.Process(target=_run, args=(measure, seconds, queue)) for _ in range(workers)
    ]
    for process in processes:
        process.start()
    results = [queue.get() for _ in processes]
    for process in processes:
        process.join()
    return results
