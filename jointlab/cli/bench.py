"""``jointlab bench``: run the scripts of ``benchmarks/``."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from jointlab.cli.common import console
from jointlab.errors import ConfigurationError

NAME = "bench"
HELP = "run the benchmarks in benchmarks/ and print ratios"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab bench``."""
    parser.add_argument("only", nargs="*", help="benchmark names (default: all)")
    parser.add_argument("--folder", default="benchmarks", help="folder of benchmark scripts")


def run(args: argparse.Namespace) -> int:
    """Run each benchmark script in a subprocess; non-zero if any failed."""
    folder = Path(args.folder)
    scripts = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))  # helpers
    if args.only:
        scripts = [s for s in scripts if s.stem in args.only]
    if not scripts:
        raise ConfigurationError(
            f"no benchmark scripts in {folder.resolve()}; run from a JointLab checkout "
            "or pass --folder"
        )
    failed = 0
    for script in scripts:
        console.rule(script.stem)
        result = subprocess.run([sys.executable, str(script)], check=False)
        failed += result.returncode != 0
    return 1 if failed else 0
