"""``jointlab identify``: excite a robot and record it; fit a log and write the robot file.

::

    jointlab identify excite ROBOT URL --out LOG      # run an excitation on any backend
    jointlab identify fit LOG ROBOT --out robot_identified.yaml [--validate HELD_OUT_LOG]

``ROBOT`` is the robot file the host believes in (a built-in name or a path); ``URL`` is the
backend to excite (``sim://...``, ``emulated://...``, ``serial://...``). When the backend runs
another file of the same joints (``sim://planted.yaml``), the controllers still use
``ROBOT``, as they would with a real robot whose file is wrong.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_parser"]


def _console() -> Any:
    from jointlab.cli import console

    return console


def _table(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> Any:
    from rich.table import Table

    table = Table(title=title)
    for index, column in enumerate(header):
        table.add_column(column, justify="left" if index < 2 else "right")
    for row in rows:
        table.add_row(*row)
    return table


def _excite(args: argparse.Namespace) -> int:
    import jointlab
    from jointlab.identify import NominalView, excitation, record_excitation
    from jointlab.robots import load_robot

    console = _console()
    description = load_robot(args.robot)
    program = excitation(
        description,
        args.joints,
        args.duration,
        signal=args.signal,
        band=tuple(args.band),
        fraction=args.fraction,
        sequential=not args.simultaneous,
    )
    rows = [
        (", ".join(s.joints), "", *(f"{v:.3g}" for v in s.peaks.max(axis=1)))
        for s in program.segments
    ]
    console.print(
        _table(
            f"{program.signal} excitation of {description.name}: {program.duration:.1f} s",
            ("joints", "", "range", "speed", "accel", "jerk"),
            rows,
        )
    )
    if args.program_out:
        Path(args.program_out).write_text(program.to_yaml())
        console.print(f"wrote {args.program_out}")
    options: dict[str, Any] = {}
    if args.url.startswith("serial://") and "robot=" not in args.url:
        options["description"] = description
    with jointlab.connect(args.url, **options) as robot:
        if robot.description != description:
            robot = NominalView(robot, description)
        with console.status("exciting...") as status:
            path = record_excitation(
                robot,
                program,
                args.out,
                on_step=lambda i, step: status.update(f"step {i}: {step.verb}"),
                url=args.url,
            )
    console.print(f"wrote {path}; next: jointlab identify fit {path} {args.robot} --out ...")
    return 0


def _fit(args: argparse.Namespace) -> int:
    from jointlab.identify import fit, validate

    console = _console()
    with console.status("identifying..."):
        result = fit(
            args.log,
            args.robot,
            joints=args.joints,
            parameters=args.parameters,
            cutoff=None if args.cutoff == 0 else args.cutoff,
            max_delay=args.max_delay,
        )
    header = ("field", "joint", "nominal", "identified", "95 % interval", "change", "unit")
    console.print(_table(f"identified from {args.log}", header, result.rows()))
    if "armature" in result.parameters and "armature" not in result.written():
        console.print("[yellow]dynamics.armature not written: robot files have no such field")
    path = result.save(args.out)
    console.print(f"wrote {path} (fields changed: {', '.join(result.written())})")
    if args.validate:
        with console.status("replaying nominal and identified..."):
            report = validate(args.validate, args.robot, result.to_description())
        header = ("joint", "", "nominal rms", "nominal max", "identified rms", "identified max",
                  "gap closed")  # fmt: skip
        rows = [(row[0], "", *row[1:]) for row in report.rows()]
        console.print(_table(f"replay of {args.validate} (rad or m)", header, rows))
        console.print(f"gap closed over all joints: {100 * report.total_gap_closed:.0f} %")
        if args.plot:
            from jointlab.recording.plots import save

            console.print(f"wrote {save(report.plot(), args.plot)}")
    return 0


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``identify`` (with ``excite`` and ``fit``) to the ``jointlab`` subcommands."""
    from jointlab.identify.excite import SIGNALS
    from jointlab.identify.parameters import DEFAULT_CUTOFF, PARAMETERS

    identify = subparsers.add_parser(
        "identify", help="excite a robot and fit its actuators (friction, latency, ...) from logs"
    )
    steps = identify.add_subparsers(dest="identify_command", required=True)

    excite = steps.add_parser("excite", help="run a safe excitation on a backend and record it")
    excite.add_argument("robot", help="the robot file the host uses (built-in name or path)")
    excite.add_argument("url", help="backend URL: sim://..., emulated://..., serial://...")
    excite.add_argument("--out", required=True, help="log file (.npz, .csv, .parquet)")
    excite.add_argument("--joints", nargs="+", help="joints to excite (default: all)")
    excite.add_argument("--duration", type=float, default=8.0, help="seconds per segment")
    excite.add_argument("--signal", choices=SIGNALS, default="multisine")
    excite.add_argument("--band", type=float, nargs=2, default=(0.25, 1.5), metavar=("LOW", "HIGH"),
                        help="frequency band in Hz")  # fmt: skip
    excite.add_argument("--fraction", type=float, default=0.8, help="share of each soft limit")
    excite.add_argument("--simultaneous", action="store_true",
                        help="excite every joint at once (default: one after another)")  # fmt: skip
    excite.add_argument("--program-out", help="also write the program as YAML (jointlab run)")
    excite.set_defaults(handler=_excite)

    fit = steps.add_parser("fit", help="identify actuators from a log; write the robot file")
    fit.add_argument("log", help="log recorded with `jointlab identify excite` (or jointlab run)")
    fit.add_argument("robot", help="the robot file the log was recorded with")
    fit.add_argument("--out", required=True, help="identified robot file (.yaml)")
    fit.add_argument("--joints", nargs="+", help="joints to identify (default: all)")
    fit.add_argument("--parameters", nargs="+", choices=PARAMETERS,
                     help="parameters to fit (default: all but effort)")  # fmt: skip
    fit.add_argument("--cutoff", type=float, default=DEFAULT_CUTOFF,
                     help=f"low-pass cutoff of the regressions, Hz (default {DEFAULT_CUTOFF:g}; "
                          "0: none)")  # fmt: skip
    fit.add_argument("--max-delay", type=int, default=10, help="largest latency, physics steps")
    fit.add_argument("--validate", metavar="LOG", help="held-out log to replay both robots on")
    fit.add_argument("--plot", metavar="PNG", help="with --validate: save the comparison plot")
    fit.set_defaults(handler=_fit)
    return identify
