"""The ``jointlab`` command: demo, describe, run, plot, emulate, train, bench."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from jointlab.errors import JointLabError

console = Console(width=None if sys.stdout.isatty() else 140)


def _describe(args: argparse.Namespace) -> int:
    from jointlab.robots import load_robot

    description = load_robot(args.robot)
    if args.check:
        console.print(
            f"[green]ok[/green] {description.name}: {description.dof} joints, "
            f"{len(description.actuators)} elements, tools {list(description.tool_names)}"
        )
        return 0
    if args.urdf is not None:
        _write(args.urdf, description.to_urdf())
        return 0
    if args.yaml is not None:
        _write(args.yaml, description.to_yaml())
        return 0
    table = Table(title=f"{description.name} ({description.dof} DoF, base "
                        f"{'fixed' if description.base.fixed else 'floating'})")  # fmt: skip
    for column in ("actuator", "type", "parent", "range", "home", "v max", "effort", "mass kg",
                   "brakes", "coupling"):  # fmt: skip
        table.add_column(column)
    for spec in description.actuators:
        mass = f"{spec.link.mass:.3g}" if spec.link else "-"
        if not spec.is_joint:
            table.add_row(spec.name, "fixed", spec.parent, "-", "-", "-", "-", mass, "-", "-")
            continue
        coupling = (
            " + ".join(f"{a:g}*{n}" for n, a in spec.coupling.alpha_leading)
            if spec.coupling
            else ""
        )
        table.add_row(
            spec.name, spec.type.value, spec.parent, f"[{spec.min:g}, {spec.max:g}]",
            f"{spec.home:g}", f"{spec.limits.velocity:g}", f"{spec.limits.effort:g}", mass,
            "yes" if spec.has_brakes else "", coupling,
        )  # fmt: skip
    console.print(table)
    return 0


def _write(target: str, text: str) -> None:
    if target == "-":
        sys.stdout.write(text)
    else:
        Path(target).write_text(text)
        console.print(f"wrote {target}")


def _plot(args: argparse.Namespace) -> int:
    from jointlab.recording import load_log
    from jointlab.recording.plots import plot_log, save

    log = load_log(args.log)
    output = Path(args.out) if args.out else Path(args.log).with_suffix(".png")
    save(plot_log(log), output)
    console.print(f"wrote {output} ({len(log.time)} rows)")
    return 0


def _bench(args: argparse.Namespace) -> int:
    import subprocess

    folder = Path(args.folder)
    scripts = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))  # helpers
    if args.only:
        scripts = [s for s in scripts if s.stem in args.only]
    if not scripts:
        from jointlab.errors import ConfigurationError

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


def _summary_table(title: str, results: list, total_time: float) -> Table:
    table = Table(title=title)
    for column in ("step", "command", "robot time s", "ticks", "max err", "rms err",
                   "peak torque"):  # fmt: skip
        table.add_column(column, justify="right" if column != "command" else "left")
    for index, result in enumerate(results):
        summary = result.summary
        table.add_row(
            str(index), result.step.verb, f"{summary.duration:.3f}", str(summary.ticks),
            f"{summary.max_tracking_error:.2e}", f"{summary.rms_tracking_error:.2e}",
            f"{result.peak_torque:.2f}",
        )  # fmt: skip
    peak = max((r.peak_torque for r in results if r.peak_torque == r.peak_torque), default=0.0)
    errors = [r.summary.max_tracking_error for r in results]
    worst = max((e for e in errors if e == e), default=0.0)
    table.add_row("all", "", f"{total_time:.3f}", str(sum(r.summary.ticks for r in results)),
                  f"{worst:.2e}", "", f"{peak:.2f}", end_section=True)  # fmt: skip
    return table


def _execute_program(robot_url: str, program: object, out: Path | None, title: str,
                     **options: object) -> int:  # fmt: skip
    import time as wallclock

    import jointlab
    from jointlab.program import run_program
    from jointlab.recording import Recorder
    from jointlab.recording.plots import plot_log, save

    log_path = None if out is None else out / "demo_log.npz"
    started = wallclock.perf_counter()
    with jointlab.connect(robot_url, **options) as robot:
        if callable(program):
            program = program(robot)
        recorder = None if log_path is None else Recorder(log_path, metadata=robot)
        try:
            with console.status("running the program...") as status:
                results = run_program(
                    robot, program, recorder=recorder,
                    on_step=lambda i, step: status.update(f"step {i}: {step.verb}"),
                )  # fmt: skip
        finally:
            if recorder is not None:
                recorder.close()
        robot_time = robot.time
    console.print(_summary_table(title, results, robot_time))
    console.print(f"wall time {wallclock.perf_counter() - started:.2f} s")
    if log_path is not None:
        image = save(plot_log(log_path, title=title), out / "demo.png")
        console.print(f"wrote {log_path} and {image}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from jointlab.program import demo_program

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    url = f"sim://{args.robot}?gui={int(args.gui)}"
    return _execute_program(url, demo_program, out, f"jointlab demo: {args.robot} in PyBullet")


def _run(args: argparse.Namespace) -> int:
    from jointlab.program import load_program

    program = load_program(args.program)  # parsed before connecting: errors cost nothing
    url = args.backend or f"sim://{args.robot}"
    if url.startswith("serial://") and "robot=" not in url:
        url += ("&" if "?" in url else "?") + f"robot={args.robot}"
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    return _execute_program(url, program, out, f"{args.program} on {url}")


def _emulate(args: argparse.Namespace) -> int:
    from jointlab.hardware.emulator import main as emulator_main

    console.print(f"emulating {args.robot}; connect with serial://<printed path>?robot="
                  f"{args.robot} (Ctrl-C stops)", highlight=False)  # fmt: skip
    return emulator_main([args.robot, *args.options])


def _train(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from jointlab.envs.training import resolve_task, train

    env_id, kwargs = resolve_task(args.task)
    console.print(f"PPO on {env_id} {kwargs}: {args.steps} steps, {args.envs} environments")
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed:>8.0f}"),
               TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=console) as progress:
        bar = progress.add_task("training", total=args.steps)
        path = train(args.task, args.steps, Path(args.out), envs=args.envs, seed=args.seed,
                     on_progress=lambda done: progress.update(bar, completed=done))  # fmt: skip
    console.print(f"saved {path}; evaluate it on any backend with "
                  f"jointlab.envs.evaluation.evaluate_policy({str(path)!r}, 'sim://arm6', "
                  f"env_id={env_id!r}, env_kwargs={kwargs!r})")  # fmt: skip
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``jointlab`` command."""
    parser = argparse.ArgumentParser(prog="jointlab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    describe = sub.add_parser("describe", help="table of actuators; export or validate a robot")
    describe.add_argument("robot", help="built-in name, .yaml or .urdf path")
    group = describe.add_mutually_exclusive_group()
    group.add_argument("--urdf", metavar="PATH", help="write URDF to PATH ('-' for stdout)")
    group.add_argument("--yaml", metavar="PATH", help="write robot YAML to PATH ('-' for stdout)")
    group.add_argument("--check", action="store_true", help="validate; non-zero exit on error")
    describe.set_defaults(handler=_describe)

    demo = sub.add_parser("demo", help="simulate a robot running a command program; log + plot")
    demo.add_argument("--robot", default="arm6", help="built-in name or robot file")
    demo.add_argument("--out", default="demo_output", help="output folder")
    demo.add_argument("--gui", action="store_true", help="open the PyBullet GUI (needs a display)")
    demo.set_defaults(handler=_demo)

    run = sub.add_parser("run", help="run a command program (YAML) on any backend")
    run.add_argument("robot", help="built-in name or robot file")
    run.add_argument("program", help="program YAML: a list of Commander commands")
    run.add_argument("--backend", help="robot URL (default sim://ROBOT), e.g. emulated://arm6")
    run.add_argument("--out", help="folder for demo_log.npz and demo.png")
    run.set_defaults(handler=_run)

    emulate = sub.add_parser(
        "emulate", help="run the device emulator on a pseudo-terminal and print its path"
    )
    emulate.add_argument("robot", help="built-in name or robot file")
    emulate.add_argument(
        "options", nargs=argparse.REMAINDER,
        help="emulator options: --rate HZ --watchdog-ms MS --stream-period N --tcp PORT "
             "--duration S --realtime",
    )  # fmt: skip
    emulate.set_defaults(handler=_emulate)

    train = sub.add_parser("train", help="train PPO (Stable-Baselines3) on a JointLab task")
    train.add_argument("task", help="reach, tracking, hold, push, or an env id")
    train.add_argument("--steps", type=int, default=300_000, help="environment steps")
    train.add_argument("--envs", type=int, default=8, help="environment copies")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--out", default="runs/ppo", help="folder for the model")
    train.set_defaults(handler=_train)

    plot = sub.add_parser("plot", help="render a recorded log (CSV/NPZ/Parquet) to PNG")
    plot.add_argument("log", help="log file written by a Recorder")
    plot.add_argument("--out", help="output image (default: the log path with .png)")
    plot.set_defaults(handler=_plot)

    bench = sub.add_parser("bench", help="run the benchmarks in benchmarks/ and print ratios")
    bench.add_argument("only", nargs="*", help="benchmark names (default: all)")
    bench.add_argument("--folder", default="benchmarks", help="folder of benchmark scripts")
    bench.set_defaults(handler=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jointlab`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except JointLabError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        return 2
