"""The real-to-sim gap of a servo arm: its recordings replayed on the twin, nominal and identified.

``jointlab gap ROBOT DATASET`` replays each episode's recorded goals on the twin of ROBOT
(the emulated servo bus, lockstep) and on the twin of the identified file (``--identified
FILE``; default: identified here from the same episodes) and reports per joint the RMS
difference to the recording, the share of the gap the identification closes, and a figure
per joint (docs/identification.md).

Examples:
  jointlab gap so101 ~/.cache/huggingface/lerobot/me/so101_moves
  jointlab gap so101 so101_moves --identified runs/identify-fit-so101_moves/so101_identified.yaml
  jointlab gap koch koch_moves --episodes 2 3
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jointlab.cli.common import (
    HelpFormatter,
    add_output_arguments,
    add_robot_argument,
    console,
    planned_folder,
    positive_float,
    run_folder,
)

NAME = "gap"
HELP = "replay a servo arm's recordings on its twin, nominal and identified; report the gap"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab gap``."""
    parser.formatter_class = HelpFormatter
    add_robot_argument(parser, urls=False)
    parser.add_argument(
        "dataset", metavar="DATASET", help="a LeRobot dataset folder (or a JointLab log) of the arm"
    )
    parser.add_argument(
        "--identified", metavar="FILE", help="the identified robot file (default: identified here)"
    )
    parser.add_argument(
        "--episodes", type=int, nargs="+", metavar="N", help="episodes to replay (default: all)"
    )
    parser.add_argument(
        "--fps",
        type=positive_float,
        default=30.0,
        help="the rate a JointLab log is resampled to, frames/s",
    )
    parser.add_argument(
        "--p-register",
        type=positive_float,
        nargs="+",
        metavar="P",
        help="each servo's P register while recording",
    )
    add_output_arguments(parser, "default name: gap-ROBOT-DATASET")


def run(args: argparse.Namespace) -> int:
    """Identify (unless given), replay, report, draw."""
    from rich.table import Table

    from jointlab.cli.identify import servo_traces
    from jointlab.identify.servo.gap import gap_report
    from jointlab.identify.servo.identify import identify_servos
    from jointlab.identify.servo.twin import replay_on_twin
    from jointlab.robots import load_robot

    source = Path(args.dataset).expanduser()
    nominal = load_robot(args.robot)
    traces = servo_traces(args.robot, source, args.episodes, args.fps)
    folder = planned_folder(args, f"gap-{nominal.name}-{source.stem}")
    with console.status("replaying on the nominal twin..."):
        replays = [replay_on_twin(nominal, t, p_registers=args.p_register) for t in traces]
    identification = None
    if args.identified is None:
        with console.status("identifying..."):
            identification = identify_servos(
                nominal, traces, p_registers=args.p_register, twin_traces=replays
            )
        identified = identification.to_description()
    else:
        identified = load_robot(args.identified)
    with console.status("replaying on the identified twin..."):
        report = gap_report(
            nominal, identified, traces, p_registers=args.p_register, nominal_replays=replays
        )
    table = Table(
        title=f"gap of {nominal.name} over {len(traces)} recording(s): RMS of twin minus recording"
    )
    for column in ("joint", "nominal (deg)", "identified (deg)", "closed"):
        table.add_column(column, justify="left" if column == "joint" else "right")
    import numpy as np

    for gap in report.joints:
        table.add_row(
            gap.joint,
            f"{np.degrees(gap.nominal):.3f}",
            f"{np.degrees(gap.identified):.3f}",
            f"{100 * gap.closed:.0f} %",
        )
    console.print(table)
    console.print(f"share of the gap closed: {100 * report.closed:.0f} %")
    with run_folder(folder) as work:
        (work / "gap.txt").write_text(report.summary() + "\n")
        if identification is not None:
            identification.save(work / f"{nominal.name}_identified.yaml")
            (work / "estimates.txt").write_text(identification.summary() + "\n")
        report.save_figures(work)
    console.print(f"wrote {folder}/gap.txt and a figure per joint (gap-JOINT.png)", highlight=False)
    return 0
