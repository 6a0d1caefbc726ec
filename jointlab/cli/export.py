"""Export a recorded log for other viewers: MCAP (Foxglove) or a Rerun recording (.rrd).

LOG is any JointLab log (``jointlab run``, ``demo``, ``record``, a Recorder's file). The
MCAP file has one JSON channel per log channel (/jointlab/state, /jointlab/commanded,
/jointlab/sent, ...) and /jointlab/events; the Rerun recording one scalar series per joint
and field (/state/position/elbow). Needs the export extra (pip install 'jointlab[export]').

The format comes from --to or from OUT's suffix (.mcap or .rrd).

The Rerun viewer opens a recording with: rerun demo.rrd

Examples:
  jointlab export runs/demo-arm6/log.npz --to mcap       # runs/demo-arm6/log.mcap
  jointlab export runs/demo-arm6/log.npz demo.rrd
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jointlab.cli.common import check_new_file, console
from jointlab.errors import ConfigurationError

NAME = "export"
HELP = "export a log to MCAP (Foxglove) or a Rerun recording (.rrd)"
#: --to choices and the file suffix of each.
SUFFIXES = {"mcap": ".mcap", "rerun": ".rrd"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab export``."""
    parser.add_argument("log", metavar="LOG", help="a JointLab log (.npz, .csv, .parquet)")
    parser.add_argument(
        "out",
        metavar="OUT",
        nargs="?",
        help="the file to write, .mcap or .rrd (default: LOG with the suffix of --to)",
    )
    parser.add_argument(
        "--to",
        choices=sorted(SUFFIXES),
        help="mcap (Foxglove) or rerun (.rrd); default: OUT's suffix",
    )
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")


def _format(args: argparse.Namespace) -> str:
    """``--to``, or the format of OUT's suffix; they must agree."""
    by_suffix = {suffix: name for name, suffix in SUFFIXES.items()}
    suffix = Path(args.out).suffix.lower() if args.out else None
    if args.to is None:
        if suffix not in by_suffix:
            raise ConfigurationError(
                "give --to mcap or --to rerun, or an OUT ending in .mcap or .rrd"
                + (f" (not {args.out!r})" if args.out else "")
            )
        return by_suffix[suffix]
    if suffix is not None and suffix != SUFFIXES[args.to]:
        raise ConfigurationError(
            f"--to {args.to} writes a {SUFFIXES[args.to]} file, but OUT is {args.out!r}"
        )
    return str(args.to)


def run(args: argparse.Namespace) -> int:
    """Load the log, write the export, say where it is."""
    from jointlab.extras import require

    args.to = _format(args)
    module = "mcap" if args.to == "mcap" else "rerun"
    require("export", f"jointlab export --to {args.to}", module)  # before reading anything
    source = Path(args.log).expanduser()
    target = check_new_file(args.out or source.with_suffix(SUFFIXES[args.to]), args.force)
    if args.to == "mcap":
        from jointlab.interop.mcap_export import export_mcap as export
    else:
        from jointlab.interop.rerun_export import export_rerun as export
    partial = target.with_name(f".{target.stem}.partial{target.suffix}")
    try:  # a failed export leaves no half-written OUT
        export(source, partial)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    opener = "open it in Foxglove" if args.to == "mcap" else f"rerun {target}"
    console.print(f"wrote {target} ({opener})", highlight=False)
    return 0
