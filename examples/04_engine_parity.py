"""The same robot, the same inputs, two physics engines: how far apart do they end up?

For every built-in robot, run on PyBullet and on MuJoCo (same description, ``dt`` 1 ms,
``control_dt`` 10 ms, from home at rest):

* **open loop**: the same torque sequence, ``0.2 * effort * sin(2*pi*t/T + j)`` on joint
  ``j`` (``T`` = 0.8 s) for 1 s, no feedback: the engines' dynamics alone;
* **closed loop**: the same Commander program, a trajectory of every independent joint from
  home 30 % of the way towards its upper soft limit (at most 0.3 s at its velocity limit)
  at 1 s and home again at 2 s, run
  for 2.5 s with the description's default gains and gravity compensation.

It prints a Markdown table of the joint-space differences between the engines (RMS over
time and joints, and the largest), in rad (or m for linear joints, mixed as they come), and
each engine's closed-loop tracking error. Then, for contacts: how far the box of
``jointlab/Push-v0`` (planar2) ends from its start after 150 uniformly random actions, over
10 seeds per engine. ``docs/simulation.md`` holds its output::

    python examples/04_engine_parity.py

The engines integrate differently (PyBullet: its multibody solver with the torque law in
Python, explicit Coulomb friction; MuJoCo: Euler with implicit damping, native actuators,
soft constraints for friction, limits and contacts), so the numbers are what they are: a
report, not a tolerance.
"""

from __future__ import annotations

import gymnasium
import numpy as np

import jointlab.envs  # noqa: F401  (registers the jointlab/ environments)
from jointlab.controllers import Commander
from jointlab.interface import NJointAction
from jointlab.robots import builtin_robots, load_robot
from jointlab.sim import SimRobot

ENGINES = ("pybullet", "mujoco")
CONTROL_DT = 0.01
#: Seeds (0, 1, ...) and random actions per seed of the Push box comparison.
PUSH_SEEDS = 10
PUSH_ACTIONS = 150


def open_loop(name: str, engine: str, seconds: float = 1.0) -> np.ndarray:
    """Joint positions every control period under the open-loop torques, ``(periods, dof)``."""
    with SimRobot(name, engine=engine, control_dt=CONTROL_DT) as robot:
        effort = robot.description.effort_limit
        phase = np.arange(robot.dof)
        positions = []
        for k in range(round(seconds / CONTROL_DT)):
            t = k * CONTROL_DT
            robot.apply(NJointAction.Torque(0.2 * effort * np.sin(2 * np.pi * t / 0.8 + phase)))
            robot.step()
            positions.append(robot.read().position)
        return np.array(positions)


def closed_loop(name: str, engine: str, seconds: float = 2.5) -> tuple[np.ndarray, np.ndarray]:
    """Positions and Commander references every control period, ``(periods, dof)`` each.

    The program: a trajectory through home, the target and home again (waypoints at 0, 1
    and 2 s) on every independent joint, run for a fixed ``seconds`` on either engine.
    """
    with SimRobot(name, engine=engine, control_dt=CONTROL_DT) as robot:
        description = robot.description
        commander = Commander(robot)
        joints = np.flatnonzero(~description.dependent)
        home = description.home[joints]
        span = np.minimum(
            description.soft_upper[joints] - home, description.soft_velocity_limit[joints]
        )
        target = home + 0.3 * span  # within reach of the velocity limits in one second
        commander.follow_trajectory(
            [
                {"time_from_start": t, "position": p}
                for t, p in ((0.0, home), (1.0, target), (2.0, home))
            ],
            joints=joints.tolist(),
        )
        positions, references = [], []
        for _ in range(round(seconds / CONTROL_DT)):
            action = commander.update()
            robot.step()
            positions.append(robot.read().position)
            references.append(np.where(np.isnan(action.position), positions[-1], action.position))
        return np.array(positions), np.array(references)


def rms(values: np.ndarray) -> float:
    """Root mean square over every entry."""
    return float(np.sqrt(np.mean(np.square(values))))


def parity_row(name: str) -> dict[str, float]:
    """The table row of one robot (differences in rad or m)."""
    free = ~load_robot(name).dependent
    a, b = (open_loop(name, engine)[:, free] for engine in ENGINES)
    (pa, ra), (pb, rb) = (closed_loop(name, engine) for engine in ENGINES)
    return {
        "open_rms": rms(a - b),
        "open_max": float(np.abs(a - b).max()),
        "closed_rms": rms(pa[:, free] - pb[:, free]),
        "closed_max": float(np.abs(pa[:, free] - pb[:, free]).max()),
        "track_pybullet": rms(pa[:, free] - ra[:, free]),
        "track_mujoco": rms(pb[:, free] - rb[:, free]),
    }


def push_displacement(engine: str, seed: int) -> float:
    """Horizontal distance (m) the Push box ends from its start after random actions.

    ``jointlab/Push-v0`` (planar2) is reset with ``seed`` and its action space seeded with it,
    then runs :data:`PUSH_ACTIONS` uniformly random actions (or until the episode ends).
    """
    env = gymnasium.make("jointlab/Push-v0", engine=engine)
    try:
        env.reset(seed=seed)
        env.action_space.seed(seed)
        task = env.unwrapped.task
        start = task.box_start.copy()
        for _ in range(PUSH_ACTIONS):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                break
        return float(np.linalg.norm((task.box_position - start)[:2]))
    finally:
        env.close()


def main() -> None:
    print(
        "| robot | open loop: RMS / max difference | closed loop: RMS / max difference "
        "| tracking error RMS, PyBullet / MuJoCo |"
    )
    print("|---|---|---|---|")
    for name in builtin_robots():
        row = parity_row(name)
        print(
            f"| {name} | {row['open_rms']:.2e} / {row['open_max']:.2e} "
            f"| {row['closed_rms']:.2e} / {row['closed_max']:.2e} "
            f"| {row['track_pybullet']:.2e} / {row['track_mujoco']:.2e} |",
            flush=True,
        )
    print(
        f"\n| engine | Push box displacement, m: median [min-max] over {PUSH_SEEDS} seeds | mean |"
    )
    print("|---|---|---|")
    for engine in ENGINES:
        moved = np.array([push_displacement(engine, seed) for seed in range(PUSH_SEEDS)])
        print(
            f"| {engine} | {np.median(moved):.2f} [{moved.min():.2f}-{moved.max():.2f}] "
            f"| {moved.mean():.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
