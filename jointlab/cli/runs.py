"""List the training runs in a folder with their final evaluation.

A training run is a folder that ``jointlab train`` wrote: it holds ``run.json`` (and
``model.zip``, ``learning_curve.png``, ``tensorboard/``). A folder with a model but no
readable ``run.json`` (an older JointLab's run, or a damaged file) is listed with the reason
instead of its metrics.

Examples:
  jointlab runs                 # the runs in ./runs
  jointlab runs experiments/    # the runs in another folder
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jointlab.cli.common import console
from jointlab.errors import ConfigurationError

NAME = "runs"
HELP = "list training runs with their final success, return, steps, wall time and engine"
#: Files that mark a folder as a training run (run.json, or a model of an older JointLab).
MARKERS = ("run.json", "model.zip")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab runs``."""
    parser.add_argument(
        "folder",
        metavar="DIR",
        nargs="?",
        default="runs",
        help="folder holding run folders (as --out of jointlab train)",
    )


def _run_folders(root: Path) -> list[Path]:
    """``root`` itself if it is a run, else its subfolders that are (hidden ones skipped)."""
    if any((root / marker).is_file() for marker in MARKERS):
        return [root]
    return sorted(
        child
        for child in root.iterdir()
        if child.is_dir()
        and not child.name.startswith(".")
        and any((child / marker).is_file() for marker in MARKERS)
    )


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def run(args: argparse.Namespace) -> int:
    """Print the table of runs; a folder without runs is a message, not an error."""
    from rich.table import Table

    from jointlab.envs.run_record import RunError, read_run

    root = Path(args.folder).expanduser()
    if not root.is_dir():
        raise ConfigurationError(
            f"{root} is not a folder; expected the --out folder of jointlab train (default: runs)"
        )
    folders = _run_folders(root)
    if not folders:
        console.print(
            f"no training runs in {root} (a run is a folder with run.json, "
            "written by jointlab train)",
            highlight=False,
        )
        return 0
    table = Table(title=f"training runs in {root}", title_justify="left")
    for column in ("run", "task", "engine", "steps", "success", "mean return", "wall time"):
        table.add_column(column, justify="left" if column in ("run", "task", "engine") else "right")
    problems = []
    for folder in folders:
        try:
            record = read_run(folder)
        except RunError as exc:
            table.add_row(folder.name, "?", "?", "?", "?", "?", "?")
            problems.append(str(exc))
            continue
        final = record.final
        success = "-" if final is None else f"{final.success_rate:.0%} of {final.episodes}"
        reward = "-" if final is None else f"{final.mean_reward:.2f}"
        table.add_row(
            folder.name,
            record.task,
            record.engine,
            f"{record.steps:,}",
            success,
            reward,
            _duration(record.wall_time),
        )
    console.print(table)
    for problem in problems:
        console.print(f"unreadable: {problem}", highlight=False, markup=False, soft_wrap=True)
    return 0
