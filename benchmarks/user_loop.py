"""A user's 1 kHz loop on ``SimRobot`` against the same loop written on raw PyBullet.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/user_loop.py [--periods 3000] [--rounds 7] [--quick]
    PYTHONPATH=. .venv/bin/python benchmarks/user_loop.py --instructions

The robot is arm6 with ideal motors and no Coulomb friction (the physics a plain PD loop
does), saved as a robot file and exported to URDF (``description_to_urdf``, as ``jointlab
export`` writes it). The pair, interleaved in one process, each ``--periods`` control periods
of one physics step (1 ms) towards the same slow-sine targets:

* **raw**: the loop a user writes without JointLab (the reference): the URDF alone in a
  PyBullet world (gravity, ``dt`` = 1 ms, default velocity motors off), each period
  ``getJointStates``; ``tau = np.clip(kp*(target - q) - kd*qd, -effort, effort)``;
  ``setJointMotorControlArray(TORQUE_CONTROL, forces=tau)``; ``stepSimulation``.
  **raw-list** passes ``forces=tau.tolist()`` (PyBullet reads a list faster than a numpy
  array: the hand-tuned peer). **raw-ground** and **raw-list-ground** also load
  ``plane.urdf``, as most PyBullet scripts do (``sim://`` worlds have a ground too, without
  contact between the ground and the links mounted on it);
* **user**: ``robot.apply(NJointAction.Position(target)); robot.step(); robot.read()`` on
  ``sim://FILE?dt=0.001&control_dt=0.001``.

Each round sets every loop up, then runs them in lockstep: ``--chunk`` periods on each loop
in turn (the order alternates between rounds) until every loop ran ``--periods``, timing
each chunk in CPU time of this process (PyBullet DIRECT runs in this thread), so a change
of the machine's load meets all loops alike. The ratio of a round is the user loop's time
per period over the raw loop's; the report gives the median of ``--rounds`` rounds with
the lowest and highest in brackets. Target: user / raw <= 1.15x.

``--instructions`` runs the loops under valgrind's callgrind instead (instructions do
not move with the machine's load) and splits each period's count into the PyBullet calls
(inclusive: what any loop on this engine pays), numpy and the Python interpreter, then
counts the user loop's parts (``Position``, ``apply``, ``step``, ``read``) one at a time.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import header, load, row, spread, write_summary
from sim_overhead import frictionless_ideal, targets

from jointlab.robots import description_to_urdf, dump_yaml

#: Loops of the pair, in the order of the first round.
LOOPS = ("raw", "raw-list", "user", "raw-ground", "raw-list-ground")


def robot_files(folder: Path) -> tuple[Path, Path]:
    """arm6 with ideal motors and no Coulomb friction, as a robot file and as URDF."""
    from jointlab.robots import load_robot

    description = frictionless_ideal(load_robot("arm6"))
    yaml_path, urdf_path = folder / "arm6-ideal.yaml", folder / "arm6-ideal.urdf"
    yaml_path.write_text(dump_yaml(description))
    urdf_path.write_text(description_to_urdf(description))
    return yaml_path, urdf_path


#: A loop of the pair, started: ``loop.send(targets)`` runs one period per row of
#: ``targets`` ``(periods, dof)`` and returns the CPU seconds it took; ``close()`` ends it.
Loop = Generator[float, np.ndarray, None]


def raw_loop(files: tuple[Path, Path], as_list: bool = False, ground: bool = False) -> Loop:
    """The hand-written PyBullet loop (started by ``next``; see :data:`Loop`).

    The gains, effort limits and home pose come from the robot file, the body from the URDF.
    """
    import pybullet
    import pybullet_data

    from jointlab.robots import load_robot

    robot_file, urdf = files
    description = load_robot(robot_file)
    kp, kd = np.array(description.default_kp), np.array(description.default_kd)
    effort = np.array(description.effort_limit)
    client = pybullet.connect(pybullet.DIRECT)
    try:
        pybullet.setTimeStep(0.001, physicsClientId=client)
        pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
        if ground:
            pybullet.loadURDF(
                os.path.join(pybullet_data.getDataPath(), "plane.urdf"), physicsClientId=client
            )
        body = pybullet.loadURDF(
            str(urdf),
            useFixedBase=True,
            flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
            physicsClientId=client,
        )
        names = [
            pybullet.getJointInfo(body, j, physicsClientId=client)[1].decode()
            for j in range(pybullet.getNumJoints(body, physicsClientId=client))
        ]
        joints = [names.index(n) for n in description.joint_names]
        for j, q in zip(joints, description.home.tolist(), strict=True):
            pybullet.resetJointState(body, j, q, 0.0, physicsClientId=client)
        pybullet.setJointMotorControlArray(
            body,
            joints,
            pybullet.VELOCITY_CONTROL,
            forces=[0.0] * len(joints),
            physicsClientId=client,
        )
        torque = pybullet.TORQUE_CONTROL
        elapsed = 0.0
        while True:
            goals = yield elapsed
            start = time.process_time()
            for target in goals:
                states = pybullet.getJointStates(body, joints, physicsClientId=client)
                q = np.array([s[0] for s in states])
                qd = np.array([s[1] for s in states])
                tau = np.clip(kp * (target - q) - kd * qd, -effort, effort)
                pybullet.setJointMotorControlArray(
                    body,
                    joints,
                    torque,
                    forces=tau.tolist() if as_list else tau,
                    physicsClientId=client,
                )
                pybullet.stepSimulation(physicsClientId=client)
            elapsed = time.process_time() - start
    finally:
        pybullet.disconnect(client)


def user_loop(robot_file: Path) -> Loop:
    """The same loop on ``sim://FILE`` through JointLab (started by ``next``)."""
    import jointlab
    from jointlab import NJointAction

    with jointlab.connect(f"sim://{robot_file}?dt=0.001&control_dt=0.001") as robot:
        elapsed = 0.0
        while True:
            goals = yield elapsed
            start = time.process_time()
            for target in goals:
                robot.apply(NJointAction.Position(target))
                robot.step()
                robot.read()
            elapsed = time.process_time() - start


def start_loop(name: str, files: tuple[Path, Path]) -> Loop:
    """One loop of the pair by name, set up and ready for ``send``."""
    if name == "user":
        loop = user_loop(files[0])
    else:
        loop = raw_loop(files, as_list=name.startswith("raw-list"), ground=name.endswith("-ground"))
    next(loop)
    return loop


def lockstep_round(
    files: tuple[Path, Path], goals: np.ndarray, chunk: int, order: Sequence[str]
) -> dict[str, float]:
    """CPU seconds per period of each loop, run in lockstep: ``chunk`` periods each in turn.

    Every loop is set up first; then each chunk of targets runs on every loop before the
    next chunk, so a change of the machine's load reaches all loops alike.
    """
    loops = {name: start_loop(name, files) for name in order}
    try:
        spent = dict.fromkeys(order, 0.0)
        for first in range(0, len(goals), chunk):
            for name in order:
                spent[name] += loops[name].send(goals[first : first + chunk])
        return {name: seconds / len(goals) for name, seconds in spent.items()}
    finally:
        for loop in loops.values():
            loop.close()


# ------------------------------------------------------------------------- instructions
#: PyBullet's C entry points a period calls (inclusive counts: the engine's own work).
ENGINE_CALLS = (
    "pybullet_stepSimulation",
    "pybullet_getJointStates",
    "pybullet_setJointMotorControlArray",
)


def _dump(label: str) -> None:
    subprocess.run(
        ["callgrind_control", "--dump=" + label, str(os.getpid())],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def child(periods: int) -> None:
    """The program counted under callgrind: each loop once after a warm-up."""
    with tempfile.TemporaryDirectory() as folder:
        files = robot_files(Path(folder))
        from jointlab.robots import load_robot

        goals = targets(load_robot(files[0]), periods)
        for name in LOOPS:
            loop = start_loop(name, files)
            loop.send(goals[:200])  # warm-up (imports, caches)
            _dump("setup")
            loop.send(goals)
            _dump(name)
            loop.close()
        user_parts(files[0], goals)


#: The parts of the user loop's period, counted one at a time by :func:`user_parts`.
PARTS = ("Position", "apply", "step", "read")


def user_parts(robot_file: Path, goals: np.ndarray) -> None:
    """Count each part of the user loop's period alone, ``len(goals)`` calls each."""
    import jointlab
    from jointlab import NJointAction

    with jointlab.connect(f"sim://{robot_file}?dt=0.001&control_dt=0.001") as robot:
        position, apply, step, read = NJointAction.Position, robot.apply, robot.step, robot.read
        actions = [position(target) for target in goals]
        for action in actions[:200]:  # warm-up
            apply(action)
            step()
            read()
        _dump("setup")
        for target in goals:
            position(target)
        _dump("Position")
        for action in actions:
            apply(action)
        _dump("apply")
        for _ in goals:
            step()
        _dump("step")
        for _ in goals:
            robot._state = None  # what step() does: the next read builds a new state
            read()
        _dump("read")


def inclusive(path: Path, functions: tuple[str, ...]) -> dict[str, int]:
    """Inclusive instruction counts of the C ``functions`` in one callgrind dump."""
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found = dict.fromkeys(functions, 0)
    for match in re.finditer(r"^\s*([\d,]+) .*:(\w+) \[", out, re.M):
        if match.group(2) in found:
            found[match.group(2)] = max(found[match.group(2)], int(match.group(1).replace(",", "")))
    return found


def instructions(periods: int) -> None:
    """Count the pair under callgrind and print the split per period."""
    import shutil

    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("  skipped: valgrind (callgrind) is not installed")
        return
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        command = [
            "valgrind",
            "--tool=callgrind",
            "-q",
            "--dump-instr=no",
            f"--callgrind-out-file={folder}/callgrind.%p",
            sys.executable,
            __file__,
            "--child",
            "--periods",
            str(periods),
        ]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
        }
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
        dumps = {}
        for path in Path(folder).iterdir():
            text = path.read_text(errors="replace")
            for line in text.splitlines()[:30]:
                if line.startswith("desc: Trigger:") and "dump " in line:
                    dumps[line.split("dump ", 1)[1].strip()] = path
        split = {}
        for name in LOOPS + PARTS:
            text = dumps[name].read_text(errors="replace")
            total = next(
                int(line.split()[1]) for line in text.splitlines() if line.startswith("summary:")
            )
            calls = inclusive(dumps[name], ENGINE_CALLS)
            split[name] = {"total": total, **calls}
    print(f"instructions per period (callgrind, {periods} periods per loop; thousands):")
    print(
        f"  {'':12s} {'total':>9s} "
        + " ".join(f"{c.split('_', 1)[1]:>28s}" for c in ENGINE_CALLS)
        + "   rest"
    )
    for name in LOOPS:
        counts = split[name]
        engine = sum(counts[c] for c in ENGINE_CALLS)
        print(
            f"  {name:12s} {counts['total'] / periods / 1e3:9.1f} "
            + " ".join(f"{counts[c] / periods / 1e3:28.1f}" for c in ENGINE_CALLS)
            + f"   {(counts['total'] - engine) / periods / 1e3:.1f}"
        )
    print("  the user loop's parts, each counted alone:")
    for name in PARTS:
        counts = split[name]
        engine = sum(counts[c] for c in ENGINE_CALLS)
        print(
            f"    {name:10s} {counts['total'] / periods / 1e3:9.1f}   engine "
            f"{engine / periods / 1e3:.1f}   Python and numpy "
            f"{(counts['total'] - engine) / periods / 1e3:.1f}"
        )
    user, raw, tuned = (split[n]["total"] for n in ("user", "raw", "raw-list"))
    print(f"  user / raw {user / raw:.3f}x, user / raw-list {user / tuned:.3f}x (instructions)")
    write_summary(
        [
            row("user loop / raw, instructions", [user / raw], "x"),
            row("user loop / raw-list, instructions", [user / tuned], "x"),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--periods", type=int, default=3000, help="control periods per loop")
    parser.add_argument("--rounds", type=int, default=7, help="paired rounds (median, spread)")
    parser.add_argument(
        "--chunk", type=int, default=100, help="periods each loop runs in turn within a round"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under callgrind instead of timing",
    )
    parser.add_argument("--quick", action="store_true", help="300 periods, 3 rounds (smoke test)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.periods, args.rounds = 300, 3
    if args.child:
        child(args.periods)
        return
    header("user_loop")
    if args.instructions:
        instructions(args.periods)
        print(f"end {load()}")
        return
    from jointlab.robots import load_robot

    with tempfile.TemporaryDirectory() as folder:
        files = robot_files(Path(folder))
        goals = targets(load_robot(files[0]), args.periods)
        lockstep_round(files, goals[:300], args.chunk, LOOPS)  # warm-up (imports, caches)
        times: dict[str, list[float]] = {name: [] for name in LOOPS}
        for round_ in range(args.rounds):
            order = LOOPS if round_ % 2 == 0 else LOOPS[::-1]
            for name, seconds in lockstep_round(files, goals, args.chunk, order).items():
                times[name].append(seconds)
    ratios = {
        name: [u / r for u, r in zip(times["user"], times[name], strict=True)]
        for name in LOOPS
        if name != "user"
    }
    print(
        f"arm6, ideal motors, no Coulomb friction; {args.periods} periods of 1 ms x "
        f"{args.rounds} paired rounds, the loops in lockstep ({args.chunk} periods each in "
        "turn); median [min-max] over rounds"
    )
    for name in LOOPS:
        print(f"  {name:16s} {spread(times[name], 1e6)} us per period (CPU)")
    for name, values in ratios.items():
        target = "   (target <= 1.15)" if name == "raw" else ""
        print(f"  user / {name:16s} {spread(values, 1, 3)}x{target}")
    write_summary(
        [
            row("user loop / raw PyBullet loop, arm6 ideal, 1 kHz", ratios["raw"], "x", "<= 1.15"),
            row("user loop / raw loop with list forces", ratios["raw-list"], "x"),
            row("user loop / raw loop with a ground plane", ratios["raw-ground"], "x"),
        ]
    )
    print(f"end {load()}")


if __name__ == "__main__":
    main()
