"""Recording: log actions, states and events per tick to CSV/NPZ/Parquet, load and plot them.

``Recorder`` writes, ``load_log`` reads (also what a killed recorder left), ``plot_log``
draws (imported lazily, so ``import jointlab.recording`` does not import matplotlib).
"""

from __future__ import annotations

from typing import Any

from jointlab.recording.formats import FORMATS, journal_path, load_log
from jointlab.recording.log import APPLIED, DESIRED, STATE, TIME, Field, Log, Loggable
from jointlab.recording.metadata import Event, EventKind, LogError, LogMetadata
from jointlab.recording.recorder import Recorder
from jointlab.recording.writers import recover_log, save_log

__all__ = [
    "APPLIED",
    "DESIRED",
    "FORMATS",
    "STATE",
    "TIME",
    "Event",
    "EventKind",
    "Field",
    "Log",
    "LogError",
    "LogMetadata",
    "Loggable",
    "Recorder",
    "journal_path",
    "load_log",
    "plot_log",
    "recover_log",
    "save_log",
]


def __getattr__(name: str) -> Any:
    if name == "plot_log":
        from jointlab.recording.plots import plot_log

        return plot_log
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
