"""The reference firmware in QEMU against the Python device emulator: tracking and speed.

Three runs, each on a lockstep ``emulated://arm6`` (the Python emulator) and a lockstep
``emulated://arm6?device=firmware`` (the C firmware on QEMU's Cortex-M3, the same PyBullet
physics behind its second UART), both through ``SerialRobot``:

* tests/test_parity.py's ``tracking`` script: a 0.3 rad sine on every joint for 200 ticks,
  a torque for 50, then zero (one tick per step), every state field compared;
* a Commander program (``examples/programs/arm6_tour.yaml`` by default, 250 Hz control);
* one episode of a trained Reach policy (``notebooks/models/sim_to_sim/pybullet-nominal``);

and prints, per run, the largest joint-position difference between the two backends (rad),
each backend's tracking error against the Commander's desired position (rad, the program),
the return (the policy), and the wall-clock time per device tick of each backend with their
ratio (medians over the run; both measured in the same run, on the same machine load).

    PYTHONPATH=. python benchmarks/pil_tracking.py [--program FILE] [--period 4]

Needs the PIL build: ``make firmware`` (or ``make -C firmware pil``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
from _report import load

import jointlab
from jointlab.envs.evaluation import policy_env
from jointlab.interface import NJointAction
from jointlab.program import run_program

ROOT = Path(__file__).resolve().parents[1]
URLS = {
    "python emulator": "emulated://arm6?lockstep=1",
    "firmware in QEMU": "emulated://arm6?lockstep=1&device=firmware",
}
MODEL = ROOT / "notebooks/models/sim_to_sim/pybullet-nominal/model.zip"


class Positions:
    """A recorder keeping the measured and desired joint positions of every tick."""

    def __init__(self) -> None:
        self.measured: list[np.ndarray] = []
        self.desired: list[np.ndarray] = []

    def log(self, time: float, **loggables: Any) -> None:
        """Keep the state's and the desired action's positions (rad) of one tick."""
        state, desired = loggables.get("state"), loggables.get("desired")
        if state is not None and desired is not None:
            self.measured.append(state.position)
            self.desired.append(np.asarray(desired.position, dtype=float))


FIELDS = ("position", "velocity", "torque", "current")


def sine_run(url: str) -> dict[str, np.ndarray]:
    """test_parity's ``tracking`` script on ``url``: every state's fields, stacked."""
    states = []
    with jointlab.connect(url, stream_period=1) as robot:
        robot.arm()
        home = robot.description.home
        for _ in range(200):
            robot.apply(NJointAction.Position(home + 0.3 * np.sin(2 * np.pi * robot.time)))
            robot.step()
            states.append(robot.read())
        robot.apply(NJointAction.Torque(np.array([1.0, -2.0, 0.5, 0.0, 0.1, 0.0])))
        for _ in range(50):
            robot.step()
            states.append(robot.read())
    return {name: np.array([getattr(s, name) for s in states]) for name in FIELDS}


def program_run(url: str, program: Path, period: int) -> tuple[Positions, float, int]:
    """The program on ``url``: positions, wall-clock seconds, device ticks."""
    recorder = Positions()
    with jointlab.connect(url, stream_period=period) as robot:
        start = time.perf_counter()
        run_program(robot, program, recorder=recorder)
        seconds = time.perf_counter() - start
        ticks = round(robot.read().time * 1000)
    return recorder, seconds, ticks


def policy_run(url: str) -> tuple[np.ndarray, float, float, int]:
    """One Reach episode: positions per step, return, wall-clock seconds, device ticks."""
    with policy_env(MODEL, url) as opened:
        env, policy = opened.env, opened.policy
        observation, _ = env.reset(seed=0)
        policy.begin(observation, env)
        positions, total, done = [], 0.0, False
        start = time.perf_counter()
        while not done:
            observation, reward, terminated, truncated, _ = env.step(policy.act(observation))
            policy.record(observation, float(reward), terminated, truncated)
            positions.append(env.unwrapped.robot.read().position)
            total, done = total + float(reward), terminated or truncated
        seconds = time.perf_counter() - start
        ticks = round(env.unwrapped.robot.read().time * 1000)
    return np.array(positions), total, seconds, ticks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", type=Path, default=ROOT / "examples/programs/arm6_tour.yaml")
    parser.add_argument("--period", type=int, default=4, help="device ticks per control step")
    args = parser.parse_args()
    print(load())
    sine = [sine_run(url) for url in URLS.values()]
    print(
        "tracking script (250 ticks): largest |firmware - emulator|: "
        + ", ".join(f"{name} {np.abs(sine[0][name] - sine[1][name]).max():.1e}" for name in FIELDS)
    )
    runs = {name: program_run(url, args.program, args.period) for name, url in URLS.items()}
    (emu, emu_s, emu_ticks), (fw, fw_s, fw_ticks) = runs.values()
    assert emu_ticks == fw_ticks, (emu_ticks, fw_ticks)
    a, b = np.array(emu.measured), np.array(fw.measured)
    print(f"program {args.program.name}: {emu_ticks} ticks, {len(a)} control steps")
    print(f"  largest |q firmware - q emulator|: {np.abs(a - b).max():.2e} rad")
    for name, (recorder, _, _) in runs.items():
        error = np.abs(np.array(recorder.measured) - np.array(recorder.desired))
        print(
            f"  {name}: largest tracking error {np.nanmax(error):.4f} rad, "
            f"median {np.nanmedian(error):.2e} rad"
        )
    print(
        f"  wall time per tick: emulator {1e3 * emu_s / emu_ticks:.3f} ms, firmware "
        f"{1e3 * fw_s / fw_ticks:.3f} ms (ratio {fw_s / emu_s:.1f})"
    )
    episodes = {name: policy_run(url) for name, url in URLS.items()}
    (qa, ra, sa, ta), (qb, rb, sb, tb) = episodes.values()
    print(f"Reach policy {MODEL.parent.name}: {len(qa)} steps, {ta} ticks")
    print(f"  largest |q firmware - q emulator|: {np.abs(qa - qb).max():.2e} rad")
    print(f"  return: emulator {ra:.4f}, firmware {rb:.4f} (difference {abs(ra - rb):.1e})")
    print(
        f"  wall time per tick: emulator {1e3 * sa / ta:.3f} ms, firmware "
        f"{1e3 * sb / tb:.3f} ms (ratio {sb / sa:.1f})"
    )
    print(load())


if __name__ == "__main__":
    main()
