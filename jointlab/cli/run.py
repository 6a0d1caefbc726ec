"""``jointlab run ROBOT PROGRAM``: a command program (YAML) on any backend."""

from __future__ import annotations

import argparse
from pathlib import Path

from jointlab.cli.programs import execute_program

NAME = "run"
HELP = "run a command program (YAML) on any backend"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab run``."""
    parser.add_argument("robot", help="built-in name or robot file")
    parser.add_argument("program", help="program YAML: a list of Commander commands")
    parser.add_argument("--backend", help="robot URL (default sim://ROBOT), e.g. emulated://arm6")
    parser.add_argument("--out", help="folder for demo_log.npz and demo.png")


def run(args: argparse.Namespace) -> int:
    """Parse the program, connect, run, summarise."""
    from jointlab.program import load_program

    program = load_program(args.program)  # parsed before connecting: errors cost nothing
    url = args.backend or f"sim://{args.robot}"
    if url.startswith("serial://") and "robot=" not in url:
        url += ("&" if "?" in url else "?") + f"robot={args.robot}"
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    return execute_program(url, program, out, f"{args.program} on {url}")
