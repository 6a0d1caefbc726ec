"""Sim to real: the same Commander trajectory on ``sim://arm6`` and ``emulated://arm6``.

The switchover is one URL. ``emulated://arm6`` starts the device emulator in its own
process (firmware at 1 kHz on a pseudo-terminal) and drives it through ``SerialRobot`` exactly
as it would drive a real arm on ``serial:///dev/ttyACM0``; the controller code below does not
know which backend it has. The script prints both tracking errors side by side, and how far
apart the two trajectories are.

Run from the repository root::

    .venv/bin/python examples/01_sim_to_real.py           # sim and lockstep emulated
    .venv/bin/python examples/01_sim_to_real.py sim://arm6 "serial:///dev/ttyACM0?robot=arm6"
    # the emulator on its real-time clock, at 250 Hz (the device still ticks at 1 kHz)
    .venv/bin/python examples/01_sim_to_real.py "sim://arm6?control_dt=0.004" \
        "emulated://arm6?stream_period=4"

With ``?lockstep=1`` the emulator runs in virtual time: it ticks when the host asks, so the
two trajectories agree to float32 rounding (the wire carries float32) whatever the machine
is doing. On its real-time clock, or on a real device, a period is late when the host's
command missed the device tick it was meant for (counted in the last column; the device then
holds the previous command one tick longer).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import jointlab
from jointlab.contract import Robot
from jointlab.controllers import Commander

#: Seconds held at home before the trajectory, so both backends start from rest.
SETTLE = 0.3
#: Joints the trajectory moves: shoulder_pan, shoulder_lift, elbow.
JOINTS = [0, 1, 2]


def waypoints(home: np.ndarray) -> list[dict]:
    """A 1.5 s out-and-back move of the three proximal joints (rad, s)."""
    offsets = {0.0: (0.0, 0.0, 0.0), 0.5: (0.3, -0.2, 0.25), 1.0: (-0.2, 0.2, -0.2), 1.5: (0, 0, 0)}
    return [{"time_from_start": t, "position": home[JOINTS] + d} for t, d in offsets.items()]


def tracking_error(robot: Robot) -> tuple[float, float, int, np.ndarray]:
    """Follow the trajectory on ``robot``: RMS and max tracking error (rad), late periods,
    and the positions visited, shape ``(periods, 3)``.

    A period is late when the host's command missed the device tick it was meant for (the
    device then holds the previous command one tick longer); in simulation never.
    """  # noqa: D205
    robot.arm()  # a SerialRobot starts disarmed, a SimRobot armed: arming twice is harmless
    robot.reset()  # sim and lockstep: set home; a device: a jerk-limited move home, then hold
    commander = Commander(robot)
    commander.wait(commander.home())  # exactly home, gravity compensated: the same start
    commander.wait(commander.hold(), timeout=SETTLE)  # open-ended: returns at the timeout
    handle = commander.follow_trajectory(waypoints(robot.description.home), joints=JOINTS)
    errors, late, visited = [], 0, []
    while not handle.done:
        action = commander.update()
        before = robot.time
        robot.step()
        late += robot.time - before > 1.5 * robot.control_dt
        position = robot.read().position[JOINTS]
        errors.append(position - action.position[JOINTS])
        visited.append(position)
    error = np.abs(np.array(errors))
    return float(np.sqrt(np.mean(error**2))), float(error.max()), late, np.array(visited)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "urls",
        nargs="*",
        metavar="URL",
        default=["sim://arm6", "emulated://arm6?lockstep=1"],
        help="robot URLs to compare (default: sim://arm6 emulated://arm6?lockstep=1)",
    )
    urls = parser.parse_args(argv).urls
    if len(urls) < 2:
        parser.error("give two robot URLs (or none for the default pair)")
    results = {}
    try:
        for url in urls:
            with jointlab.connect(url) as robot:
                results[url] = tracking_error(robot)
    except jointlab.JointLabError as exc:
        parser.exit(2, f"error: {exc}\n")
    width = max(len(url) for url in urls)
    print(
        f"{'backend':<{width}} {'RMS error mrad':>15} {'max error mrad':>15} {'late periods':>13}"
    )
    for url, (rms, worst, late, _) in results.items():
        print(f"{url:<{width}} {rms * 1e3:>15.3f} {worst * 1e3:>15.3f} {late:>13d}")
    first, second = (results[u] for u in urls[:2])
    print(f"RMS ratio {second[0] / first[0]:.3f} (1.000: the backends track identically)")
    if first[3].shape == second[3].shape:
        gap = float(np.abs(first[3] - second[3]).max())
        print(f"largest difference between the two trajectories: {gap:.2e} rad")
    return 0


if __name__ == "__main__":
    sys.exit(main())
