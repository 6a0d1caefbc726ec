"""Run the benchmarks of benchmarks/ (from a JointLab checkout).

Each prints its figures as ratios against a peer measured in the same run.

Example: jointlab bench sim_overhead control_loop
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from jointlab.cli.common import console, did_you_mean
from jointlab.errors import ConfigurationError

NAME = "bench"
HELP = "run the benchmarks in benchmarks/ and print ratios"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab bench``."""
    parser.add_argument("only", nargs="*", metavar="NAME", help="benchmark names (default: all)")
    parser.add_argument("--folder", default="benchmarks", help="folder of benchmark scripts")


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
            raise ConfigurationError(f"no benchmark {name!r} in {folder}; benchmarks: {names}"
                                     f"{did_you_mean(name, names)}")  # fmt: skip
    failed = 0
    for script in scripts:
        if args.only and script.stem not in args.only:
            continue
        console.rule(script.stem)
        result = subprocess.run([sys.executable, str(script)], check=False)
        failed += result.returncode != 0
    return 1 if failed else 0
