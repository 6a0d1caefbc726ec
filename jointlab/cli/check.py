"""Connect to a robot and report what it is and how its link performs.

Shows the protocol and firmware fields of a device's HELLO reply, the joint count, the
state, the link statistics and the round-trip latency of HEARTBEAT requests. On a servo bus
(Dynamixel, Feetech): a table with one row per servo (id, joint, model, firmware, position,
voltage, temperature, load, hardware-error bits) and the bus's ping latency and error counts.

Examples:
  jointlab check emulated://arm6
  jointlab check emulated://so101
  jointlab check "serial:///dev/ttyACM0?robot=arm6"
  jointlab check "feetech:///dev/ttyACM0?robot=so101"
"""

from __future__ import annotations

import argparse
import time

from rich.table import Table

from jointlab.cli.common import add_robot_argument, console, positive_int, robot_url

NAME = "check"
HELP = "connect to a robot: protocol version, joints, link statistics, latency"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab check``."""
    add_robot_argument(parser)
    parser.add_argument(
        "--pings", type=positive_int, default=50, help="HEARTBEAT round trips to time"
    )


def _device_rows(robot: object, pings: int) -> list[tuple[str, str]]:
    """Rows for a device behind a link (a SerialRobot): HELLO fields, link, latency."""
    import numpy as np

    hello = robot.device  # type: ignore[attr-defined]
    rows = [
        ("protocol version", str(hello.version)),
        ("device joints", str(hello.dof)),
        ("tick rate", f"{hello.rate_hz} Hz"),
        ("watchdog", f"{hello.watchdog_ms} ms" if hello.watchdog_ms else "off"),
        ("stream period", f"{hello.stream_period} tick(s)"),
        ("description digest", bytes(hello.digest).hex()[:16] + "..."),
    ]
    latencies = np.array([robot.heartbeat() for _ in range(pings)]) * 1e3  # type: ignore[attr-defined]
    rows.append(
        (
            "HEARTBEAT round trip",
            f"median {np.median(latencies):.3f} ms, p99 "
            f"{np.percentile(latencies, 99):.3f} ms, max {latencies.max():.3f} ms "
            f"({pings} pings)",
        )
    )
    stats = robot.link_stats  # type: ignore[attr-defined]
    counters = {name: value for name, value in vars(stats).items() if isinstance(value, int)}
    errors = {k: v for k, v in counters.items() if k not in ("bytes_received", "frames") and v}
    rows.append(
        (
            "link, device to host",
            f"{counters.get('frames', 0)} frames, "
            f"{counters.get('bytes_received', 0)} bytes; "
            + (", ".join(f"{k} {v}" for k, v in errors.items()) or "no errors"),
        )
    )
    return rows


def _servo_table(robot: object, pings: int) -> tuple[Table, list[tuple[str, str]]]:
    """The per-servo table and the bus rows of a ServoBusRobot."""
    import numpy as np

    from jointlab.hardware.servo_host.survey import survey

    found = survey(robot, pings)
    table = Table(title=f"servos on the {found.protocol} bus at {found.baud} bit/s")
    for column in (
        "id",
        "joint",
        "model",
        "firmware",
        "position °",
        "voltage V",
        "temperature °C",
        "load",
        "hardware errors",
    ):
        table.add_column(
            column,
            justify="right" if column in ("id",) or "°" in column or " V" in column else "left",
        )
    for row in found.rows:
        table.add_row(
            str(row.id),
            row.joint,
            row.model,
            row.firmware,
            f"{np.degrees(row.position):.1f}",
            f"{row.voltage:.1f}",
            f"{row.temperature:.0f}",
            f"{row.load:.1f} {row.load_unit}",
            ", ".join(row.errors) or "none",
        )
    ping = found.ping_ms
    rows = [
        ("servos", f"{len(found.rows)} answered (ids {[r.id for r in found.rows]})"),
        (
            "ping round trip",
            f"median {np.median(ping):.3f} ms, p99 {np.percentile(ping, 99):.3f} "
            f"ms, max {ping.max():.3f} ms ({len(ping)} pings)",
        ),
        (
            "bus errors",
            f"{found.exchanges} exchanges, {found.retries} retries, {found.missing} "
            f"missing and {found.corrupt} corrupt status packets",
        ),
    ]
    return table, rows


def run(args: argparse.Namespace) -> int:
    """Connect, report, disconnect."""
    import jointlab

    url = robot_url(args.robot)
    started = time.perf_counter()
    with jointlab.connect(url) as robot:
        connect_time = time.perf_counter() - started
        state = robot.read()
        d = robot.description
        table = Table(title=f"jointlab check {url}", show_header=False)
        table.add_column("what")
        table.add_column("value")
        rows = [
            ("backend", type(robot).__name__),
            ("robot", f"{d.name}: {d.dof} joints ({', '.join(d.joint_names)})"),
            ("connect time", f"{connect_time * 1e3:.0f} ms"),
            ("control period", f"{robot.control_dt * 1e3:g} ms"),
            (
                "state",
                f"power {'on' if state.motor_power else 'off'}, "
                f"{'armed' if state.armed else 'disarmed'}, t = {state.time:.3f} s",
            ),
        ]
        servos = None
        if hasattr(robot, "device"):
            rows += _device_rows(robot, args.pings)
        elif hasattr(robot, "servo_ids"):
            servos, bus_rows = _servo_table(robot, args.pings)
            rows += bus_rows
        else:
            rows.append(("link", "none: simulated in this process"))
        for row in rows:
            table.add_row(*row)
    console.print(table)
    if servos is not None:
        console.print(servos)
    return 0
