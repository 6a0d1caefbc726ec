r"""Identify a robot's actuators: excite it and record; fit the log into its robot file.

Two steps (docs/identification.md). ROBOT is the robot file the host believes in (a name
or a file); URL is the backend to excite, which may run another file of the same joints
(a planted one, or a real robot whose file is wrong).

Examples:
  jointlab identify excite arm6 emulated://arm6 --joints elbow wrist_pitch
  jointlab identify excite so101 sim://so101 --simultaneous --centre 0 0 0.8 0.6 0 0.8
  jointlab identify fit arm6 runs/identify-excite-arm6-emulated-arm6/log.npz \
      --joints elbow wrist_pitch
  jointlab identify fit arm6 runs/identify-excite-arm6-emulated-arm6/log.npz \
      --joints elbow wrist_pitch --validate runs/demo-arm6/log.npz \
      --parameters damping delay --name fit-damping

A LeRobot dataset folder (or a log with --servo) of a servo arm (a robot file with a bus
section) is identified at the servo level: stiffness per P unit, Coulomb and viscous
friction, backlash, delay and torque limit of each servo, from goal and present positions at
the recording's rate, referenced to the twin (docs/identification.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from jointlab.cli.common import (
    HelpFormatter,
    add_output_arguments,
    add_robot_argument,
    console,
    planned_folder,
    positive_float,
    robot_label,
    robot_url,
    run_folder,
)
from jointlab.cli.programs import LOG_NAME

NAME = "identify"
HELP = "excite a robot, then fit friction, inertia, latency... into its robot file"
#: The program file ``excite`` writes beside its log (``jointlab run`` runs it again).
PROGRAM_NAME = "program.yaml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab identify excite`` and ``jointlab identify fit``."""
    from jointlab.identify.excite import SIGNALS
    from jointlab.identify.parameters import DEFAULT_CUTOFF, PARAMETERS

    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")
    excite = steps.add_parser(
        "excite",
        help="run a safe excitation on a backend; record it",
        formatter_class=HelpFormatter,
    )
    add_robot_argument(excite, urls=False)
    excite.add_argument("url", metavar="URL", help="the backend: a robot URL, name or file")
    excite.add_argument("--joints", nargs="+", metavar="JOINT", help="joints (default: all)")
    excite.add_argument(
        "--duration",
        type=positive_float,
        default=8.0,
        help="seconds of excitation per joint (per segment)",
    )
    excite.add_argument("--signal", choices=SIGNALS, default="multisine")
    excite.add_argument(
        "--band",
        type=positive_float,
        nargs=2,
        default=(0.25, 1.5),
        metavar=("LOW", "HIGH"),
        help="frequency band, Hz",
    )
    excite.add_argument(
        "--fraction",
        type=positive_float,
        default=0.8,
        help="share of every soft limit the motion may use",
    )
    excite.add_argument(
        "--centre",
        type=float,
        nargs="+",
        metavar="Q",
        help="pose to move about, one value per joint (default: home)",
    )
    excite.add_argument(
        "--simultaneous",
        action="store_true",
        help="excite every joint at once (default: one after another)",
    )
    add_output_arguments(excite, "default name: identify-excite-ROBOT-URL")
    excite.set_defaults(identify_step=_excite)

    fit = steps.add_parser(
        "fit",
        help="identify the actuators from a log; write the robot file",
        formatter_class=HelpFormatter,
    )
    add_robot_argument(fit, urls=False)
    fit.add_argument(
        "log",
        metavar="LOG",
        help="a log recorded by 'identify excite' or any run, or a LeRobot dataset "
        "folder (servo identification)",
    )
    fit.add_argument(
        "--episodes",
        type=int,
        nargs="+",
        metavar="N",
        help="dataset episodes to identify from (default: all)",
    )
    fit.add_argument(
        "--servo",
        action="store_true",
        help="servo identification from a JointLab log of a servo arm",
    )
    fit.add_argument(
        "--fps",
        type=positive_float,
        default=30.0,
        help="--servo: the rate a log is resampled to, frames/s",
    )
    fit.add_argument(
        "--p-register",
        type=positive_float,
        nargs="+",
        metavar="P",
        help="servo identification: each servo's P register while recording "
        "(default: the file's gains; LeRobot's SO-101 writes 16)",
    )
    fit.add_argument("--joints", nargs="+", metavar="JOINT", help="joints (default: all)")
    fit.add_argument(
        "--parameters",
        nargs="+",
        choices=PARAMETERS,
        metavar="PARAMETER",
        help=f"some of {', '.join(PARAMETERS)} (default: all but effort)",
    )
    fit.add_argument(
        "--cutoff",
        type=float,
        default=DEFAULT_CUTOFF,
        help="low-pass cutoff of the regressions in Hz; 0: none",
    )
    fit.add_argument("--max-delay", type=int, default=10, help="largest latency, physics steps")
    fit.add_argument(
        "--validate",
        metavar="HELD_OUT_LOG",
        help="replay this log with the nominal and the identified file",
    )
    add_output_arguments(fit, "default name: identify-fit-RUN")
    fit.set_defaults(identify_step=_fit)


def run(args: argparse.Namespace) -> int:
    """Run the chosen step."""
    return int(args.identify_step(args))


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

    description = load_robot(args.robot)
    program = excitation(
        description,
        args.joints,
        args.duration,
        signal=args.signal,
        band=tuple(args.band),
        fraction=args.fraction,
        centre=args.centre,
        sequential=not args.simultaneous,
    )
    url = robot_url(args.url)
    folder = planned_folder(
        args, f"identify-excite-{robot_label(args.robot)}-{robot_label(args.url)}"
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
    options: dict[str, Any] = {}
    if url.startswith("serial://") and "robot=" not in url:
        options["description"] = description
    with run_folder(folder) as work:
        (work / PROGRAM_NAME).write_text(program.to_yaml())
        with jointlab.connect(url, **options) as robot:
            if robot.description != description:
                robot = NominalView(robot, description)
            with console.status("exciting...") as status:

                def announce(index: int, step: Any) -> None:
                    status.update(f"step {index}: {step.verb}")

                record_excitation(robot, program, work / LOG_NAME, url=url, on_step=announce)
    console.print(
        f"wrote {folder / LOG_NAME} and {folder / PROGRAM_NAME}; next: jointlab "
        f"identify fit {args.robot} {folder / LOG_NAME}",
        highlight=False,
    )
    return 0


def _fit(args: argparse.Namespace) -> int:
    from jointlab.errors import ConfigurationError
    from jointlab.identify import fit, validate
    from jointlab.recording.plots import save

    log = Path(args.log).expanduser()
    if log.is_dir() or args.servo:
        return _fit_servos(args, log)
    held_out = None if args.validate is None else Path(args.validate).expanduser()
    for path in (log, held_out):
        if path is not None and not path.is_file():
            raise ConfigurationError(f"{path}: no such log file")
    run_name = log.parent.name if log.stem == "log" else log.stem
    folder = planned_folder(args, f"identify-fit-{run_name}")
    with console.status("identifying..."):
        result = fit(
            log,
            args.robot,
            joints=args.joints,
            parameters=args.parameters,
            cutoff=None if args.cutoff == 0 else args.cutoff,
            max_delay=args.max_delay,
        )
    header = ("field", "joint", "nominal", "identified", "95 % interval", "change", "unit")
    console.print(_table(f"identified from {log}", header, result.rows()))
    robot_file = f"{result.nominal.name}_identified.yaml"
    with run_folder(folder) as work:
        result.save(work / robot_file)
        (work / "estimates.txt").write_text(result.summary() + "\n")
        if held_out is not None:
            with console.status("replaying with the nominal and the identified file..."):
                report = validate(held_out, result.nominal, result.to_description())
            rows = [(row[0], "", *row[1:]) for row in report.rows()]
            console.print(
                _table(
                    f"replay of {held_out} (rad or m)",
                    (
                        "joint",
                        "",
                        "nominal rms",
                        "nominal max",
                        "identified rms",
                        "identified max",
                        "gap closed",
                    ),
                    rows,
                )
            )
            (work / "validation.txt").write_text(report.summary() + "\n")
            save(report.plot(), work / "validation.png")
    if "armature" in result.parameters and "armature" not in result.written():
        console.print("dynamics.armature is reported, not written: robot files have no such field")
    console.print(
        f"wrote {folder / robot_file} (fields: {', '.join(result.written())})", highlight=False
    )
    return 0


def servo_traces(robot: str, source: Path, episodes: list[int] | None, fps: float) -> list[Any]:
    """The servo traces of a dataset folder or a JointLab log (checked; names the source)."""
    from jointlab.errors import ConfigurationError
    from jointlab.robots import load_robot

    description = load_robot(robot)
    if source.is_dir():
        from jointlab.interop.servo_traces import dataset_traces

        return dataset_traces(source, description, episodes)
    if not source.is_file():
        raise ConfigurationError(f"{source}: no such dataset folder or log file")
    from jointlab.identify.servo.traces import log_trace

    return [log_trace(source, description, fps)]


def _fit_servos(args: argparse.Namespace, source: Path) -> int:
    from jointlab.identify.servo.identify import identify_servos
    from jointlab.robots import load_robot

    description = load_robot(args.robot)
    traces = servo_traces(args.robot, source, args.episodes, args.fps)
    folder = planned_folder(args, f"identify-fit-{source.name}")
    frames = sum(len(t) for t in traces)
    with console.status(f"replaying {frames} frames on the twin and identifying..."):
        result = identify_servos(description, traces, p_registers=args.p_register)
    header = ("joint", "parameter", "nominal", "identified", "95 %", "written to")
    console.print(_table(f"servos identified from {source}", header, result.rows()))
    robot_file = f"{description.name}_identified.yaml"
    with run_folder(folder) as work:
        result.save(work / robot_file)
        (work / "estimates.txt").write_text(result.summary() + "\n")
    console.print(
        f"wrote {folder / robot_file}; next: jointlab gap {args.robot} {source} "
        f"--identified {folder / robot_file}",
        highlight=False,
    )
    return 0
