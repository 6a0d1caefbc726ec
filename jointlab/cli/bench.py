"""Run the benchmarks of benchmarks/ (from a JointLab checkout).

Each prints its figures as ratios against a peer measured in the same run, medians with
their spread over rounds. At the end a table lists every figure that has a target (ratios
first, then per-call costs), with the load average at the start and end of the whole run.

Examples:
  jointlab bench sim_overhead control_loop --quick   # a smoke test
  jointlab bench sim_overhead control_loop           # the figures (minutes)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from jointlab.cli.common import console, did_you_mean
from jointlab.cli.steal import CpuTimes, cpu_times, steal_percent
from jointlab.errors import ConfigurationError

NAME = "bench"
HELP = "run the benchmarks in benchmarks/ and print ratios"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab bench``."""
    parser.add_argument("only", nargs="*", metavar="NAME", help="benchmark names (default: all)")
    parser.add_argument("--folder", default="benchmarks", help="folder of benchmark scripts")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="short runs (scripts that offer --quick): a smoke test, not figures",
    )


def run(args: argparse.Namespace) -> int:
    """Run each benchmark script in a subprocess; non-zero if any failed."""
    folder = Path(args.folder).expanduser()
    scripts = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))  # helpers
    if not scripts:
        raise ConfigurationError(
            f"no benchmark scripts in {folder.resolve()}; run from a JointLab checkout "
            "or pass --folder"
        )
    names = [s.stem for s in scripts]
    for name in args.only:
        if name not in names:
            raise ConfigurationError(
                f"no benchmark {name!r} in {folder}; benchmarks: {names}{did_you_mean(name, names)}"
            )
    failed = 0
    start, times = _load(), cpu_times()
    with tempfile.TemporaryDirectory() as folder_:
        summary = Path(folder_) / "summary.jsonl"
        environment = {**os.environ, "JOINTLAB_BENCH_SUMMARY": str(summary)}
        for script in scripts:
            if args.only and script.stem not in args.only:
                continue
            console.rule(script.stem)
            command = [sys.executable, str(script)]
            if args.quick and '"--quick"' in script.read_text():
                command.append("--quick")
            result = subprocess.run(command, check=False, env=environment)
            failed += result.returncode != 0
        rows = (
            [json.loads(line) for line in summary.read_text().splitlines()]
            if summary.exists()
            else []
        )
    _print_summary(rows, start, _load(times))
    return 1 if failed else 0


def _load(since: CpuTimes | None = None) -> str:
    """The load averages, and the steal time since ``since`` where there is one."""
    one, five, fifteen = os.getloadavg()
    stolen = steal_percent(since)
    steal = "" if stolen is None else f" (steal {stolen:.1f} % of CPU time during the run)"
    return f"{one:.2f} {five:.2f} {fifteen:.2f}{steal}"


def _print_summary(rows: list[dict], start: str, end: str) -> None:
    """The figures with targets: ratios first, medians [lowest-highest], target, met."""
    if not rows:
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(
        title=escape(
            f"jointlab bench: medians over rounds [lowest-highest]; load "
            f"average at start {start}, at end {end}"
        )
    )
    for column in ("figure", escape("median [lowest-highest]"), "target", "met"):
        table.add_column(column)
    ordered = sorted(rows, key=lambda r: r["unit"] != "x")  # ratios first
    for item in ordered:
        met = {True: "yes", False: "NO", None: ""}[item["met"]]
        figures = f"{item['median']:.3g}{item['unit']} [{item['low']:.3g}-{item['high']:.3g}]"
        table.add_row(escape(item["figure"]), escape(figures), item["target"], met)
    console.print(table)
