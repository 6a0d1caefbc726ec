"""Instructions per environment step, counted by callgrind: figures that do not move with load.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/instructions.py [--steps 400]

The script runs itself under valgrind's callgrind (``valgrind`` must be installed; without it
the script says so and stops) and splits the count at each phase boundary with
``callgrind_control --dump``, so setup and warm-up are left out. Phases, each ``--steps`` env
steps of ``jointlab/Reach-v0`` (arm6, position mode, 20 physics steps of 1 ms, the same
random actions and episode resets as ``env_throughput.py`` and ``engines.py``):

* ``env``: the env through ``gymnasium.make`` (wrappers included), on PyBullet;
* ``robot``: its robot alone fed the same NJointActions (apply + step, a reset every 50);
* ``batched``: :class:`~jointlab.envs.vector.BatchedEnv` of 8, per sub-environment step;
* ``env-mj`` and ``robot-mj``: the same two on MuJoCo (the env layer's share there),
  ``floor-mj``: the floor of that share, :class:`FloorReach` (the cheapest Gymnasium env
  around the same robot with Reach's observation, made by ``gymnasium.make`` with the same
  wrappers; no action check, no clipping, no ``info``), and ``batched64-mj``: ``BatchedEnv``
  of 64 on MuJoCo, per sub-environment step (at least two batched steps);
* ``env-mujoco`` and ``raw-mujoco``: Reach on MuJoCo and ``engines.py``'s hand-written MuJoCo
  loop (physics, observation and reward); ``raw-pybullet`` likewise on PyBullet;
* ``commander``: ``Commander.compute`` of ``control_loop.py``'s arm6 program at 1 kHz, replayed
  on the states of a recorded run (so no physics is counted), per tick.

It prints instructions per env step and the ratios: the env layer's share of a step
(``1 - robot / env``), one env / BatchedEnv(8), raw MuJoCo / JointLab on MuJoCo. The counts
repeat to the instruction between runs on one machine, busy or idle. They are not time: a
cache miss costs one instruction and a hundred cycles, and Python's small numpy calls after
20 physics steps miss more than the physics does, so an env layer of 4 % of the
instructions is about 10 % of the time (``env_throughput.py`` measures that, with its
spread). Use these figures to compare two versions of the code on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from _report import header, load, row, write_summary  # noqa: E402

PHASES = (
    "env",
    "robot",
    "batched",
    "env-mj",
    "robot-mj",
    "floor-mj",
    "batched64-mj",
    "env-mujoco",
    "raw-mujoco",
    "raw-pybullet",
)
#: Sub-environments of the large MuJoCo batch.
LARGE_BATCH = 64
#: Commander ticks counted per env step of ``--steps`` (2,000 ticks, 2 s at 1 kHz, by default).
TICKS_PER_STEP = 5


def _dump(label: str) -> None:
    """End a phase: callgrind writes the instructions counted since the last dump."""
    subprocess.run(
        ["callgrind_control", "--dump=" + label, str(os.getpid())],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def commander_ticks(ticks: int) -> None:
    """Count ``Commander.compute`` alone: record a 1 kHz run's states, replay them."""
    import control_loop

    import jointlab

    with jointlab.connect("sim://arm6?dt=0.001&control_dt=0.001") as robot:
        states = []
        commander = control_loop.follow(robot)
        commander.reset(robot.read())
        for _ in range(ticks + 50):
            state = robot.read()
            _ = state.position  # derived outside the count (control_loop.py times it apart)
            states.append(state)
            robot.apply(commander.compute(state))
            robot.step()
        robot.reset()  # the same start: a second Commander plans the same trajectory
        replay = control_loop.follow(robot)
        replay.reset(states[0])
        for state in states[:50]:  # warm-up
            replay.compute(state)
        _dump("setup")
        for state in states[50:]:
            replay.compute(state)
        _dump("commander")


def _env_phase(env: Any, actions: Any, steps: int, label: str) -> None:
    """Count phase ``label``: ``steps`` env steps from a seeded reset, resetting at episode ends."""
    env.reset(seed=0)
    _dump("setup")
    for i in range(steps):
        _, _, terminated, truncated, _ = env.step(actions[i])
        if terminated or truncated:
            env.reset()
    _dump(label)


def _env_and_robot_phases(
    env: Any, robot: Any, actions: Any, njoint: list[Any], steps: int, suffix: str
) -> None:
    """Count the phases ``env`` + ``suffix`` and ``robot`` + ``suffix``.

    The env runs from a seeded reset; then its robot alone is fed the same NJointActions,
    with a reset every 50 steps.
    """
    _env_phase(env, actions, steps, "env" + suffix)
    robot.reset()
    _dump("setup")
    for i in range(steps):
        robot.apply(njoint[i])
        robot.step()
        if i % 50 == 49:
            robot.reset()
    _dump("robot" + suffix)


def child(steps: int) -> None:
    """The measured program (runs under callgrind)."""
    import engines
    import gymnasium
    import numpy as np

    import jointlab.envs  # noqa: F401  (registers the ids)
    from jointlab.envs.vector import BatchedEnv

    actions = np.random.default_rng(0).uniform(-1, 1, (4096, 6)).astype(np.float32)
    env = gymnasium.make("jointlab/Reach-v0", robot="arm6", action_mode="position")
    base = env.unwrapped
    robot = base.robot
    njoint = [base.actions.to_njoint(a).action for a in actions[:steps]]
    batch = BatchedEnv("jointlab/Reach-v0", 8, robot="arm6", action_mode="position")
    batch.reset(seed=0)
    rows = actions[: 8 * (steps // 8)].reshape(-1, 8, 6)
    env.reset(seed=0)
    for i in range(20):  # warm-up
        env.step(actions[i])
        batch.step(rows[0])
    _env_and_robot_phases(env, robot, actions, njoint, steps, "")
    for block in rows:
        batch.step(block)
    _dump("batched")
    env.close()
    batch.close()
    _same_on_mujoco(actions, steps)

    def counted(label: str) -> Callable[..., float]:
        def loop(step: Callable[[], None], seconds: float, warmup: int = 20) -> float:
            for _ in range(warmup):
                step()
            _dump("setup")
            for _ in range(steps):
                step()
            _dump(label)
            return 1.0

        return loop

    for label, measure in (
        ("env-mujoco", lambda: engines.bench_env("mujoco", 0.0)),
        ("raw-mujoco", lambda: engines.bench_raw_mujoco(0.0)),
        ("raw-pybullet", lambda: engines.bench_raw_pybullet(0.0)),
    ):
        engines._timed_loop = counted(label)
        measure()
    commander_ticks(TICKS_PER_STEP * steps)


class FloorReach:
    """The cheapest Gymnasium env around Reach's robot on MuJoCo: the env layer's floor.

    Per step: the position mode's mapping (three ufuncs, no range check), apply, step,
    read, the tool from the engine's kinematics, the observation Reach-v0 has (joint
    positions and velocities, goal, tool, goal - tool; not clipped), reward ``-distance``
    and an empty ``info``. A reset puts the robot home with a fixed goal.
    """

    @staticmethod
    def make() -> Any:
        """``gymnasium.make`` of it, with Reach-v0's wrappers and episode length."""
        import gymnasium

        if "bench/FloorReach-v0" not in gymnasium.registry:
            gymnasium.register(
                "bench/FloorReach-v0", entry_point=FloorReach._env, max_episode_steps=50
            )
        return gymnasium.make("bench/FloorReach-v0")

    @staticmethod
    def _env() -> Any:
        import math

        import gymnasium
        import numpy as np

        from jointlab.interface import NJointAction
        from jointlab.sim import SimRobot

        class Floor(gymnasium.Env):
            def __init__(self) -> None:
                self.robot = robot = SimRobot(
                    "arm6", engine="mujoco", dt=0.001, control_dt=0.02, seed=0
                )
                robot.arm()
                d = robot.description
                self._low = np.array(d.soft_lower)
                self._half = 0.5 * (np.array(d.soft_upper) - self._low)
                self._ones = np.ones(d.dof)
                self._locate = robot.frame_locator(d.tool_names[0])
                self.goal = np.array([0.3, 0.1, 0.4])
                self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (d.dof,), np.float32)
                self.observation_space = gymnasium.spaces.Box(
                    -np.inf, np.inf, (2 * d.dof + 9,), np.float32
                )

            def _observe(self, state: Any) -> tuple[Any, float]:
                tool = self._locate(state)
                to_goal = self.goal - tool
                x, y, z = to_goal.tolist()
                observation = np.concatenate(
                    (state.position, state.velocity, self.goal, tool, to_goal), dtype=np.float32
                )
                return observation, -math.sqrt(x * x + y * y + z * z)

            def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
                super().reset(seed=seed)
                self.robot.reset()
                return self._observe(self.robot.read())[0], {}

            def step(self, action: Any) -> Any:
                values = np.add(action, self._ones)
                np.multiply(values, self._half, out=values)
                np.add(self._low, values, out=values)
                robot = self.robot
                robot.apply(NJointAction.position_from_validated(values))
                robot.step()
                observation, reward = self._observe(robot.read())
                return observation, reward, False, False, {}

            def close(self) -> None:
                self.robot.close()

        return Floor()


def large_batch_steps(steps: int) -> int:
    """Batched steps of the ``LARGE_BATCH`` phase: about ``steps`` env steps, at least two."""
    return max(2, steps // LARGE_BATCH)


def _same_on_mujoco(actions: Any, steps: int) -> None:
    """The env, its robot alone and a BatchedEnv of 64, on MuJoCo."""
    import gymnasium

    from jointlab.envs.vector import BatchedEnv

    env = gymnasium.make("jointlab/Reach-v0", robot="arm6", action_mode="position", engine="mujoco")
    base = env.unwrapped
    robot = base.robot
    njoint = [base.actions.to_njoint(a).action for a in actions[:steps]]
    env.reset(seed=0)
    for i in range(20):  # warm-up
        env.step(actions[i])
    _env_and_robot_phases(env, robot, actions, njoint, steps, "-mj")
    env.close()
    floor = FloorReach.make()
    floor.reset(seed=0)
    for i in range(20):  # warm-up
        floor.step(actions[i])
    _env_phase(floor, actions, steps, "floor-mj")
    floor.close()
    batch = BatchedEnv(
        "jointlab/Reach-v0", LARGE_BATCH, robot="arm6", action_mode="position", engine="mujoco"
    )
    batch.reset(seed=0)
    blocks = large_batch_steps(steps)
    rows = actions[: LARGE_BATCH * blocks].reshape(blocks, LARGE_BATCH, -1)
    for i in range(3):  # warm-up
        batch.step(rows[i % blocks])
    _dump("setup")
    for block in rows:
        batch.step(block)
    _dump("batched64-mj")
    batch.close()


def counts(folder: Path) -> dict[str, int]:
    """Instructions per phase label from the callgrind dump files in ``folder``."""
    totals: dict[str, int] = {}
    for path in folder.iterdir():
        text = path.read_text(errors="replace")
        trigger = re.search(r"^desc: Trigger: (?:Client Request: )?dump (\S+)", text, re.M)
        summary = re.search(r"^summary: (\d+)", text, re.M)
        if trigger and summary:
            totals[trigger.group(1)] = totals.get(trigger.group(1), 0) + int(summary.group(1))
    return totals


def callgrind_totals(script: str, arguments: list[str]) -> dict[str, int] | None:
    """Run ``script --child ARGUMENTS`` under callgrind; instructions per dumped phase label.

    Returns None (after saying so) where valgrind is not installed.
    """
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("  skipped: valgrind (callgrind) is not installed")
        return None
    with tempfile.TemporaryDirectory() as folder:
        command = [
            "valgrind",
            "--tool=callgrind",
            "-q",
            f"--callgrind-out-file={folder}/callgrind.%p",
            sys.executable,
            script,
            "--child",
            *arguments,
        ]
        subprocess.run(
            command,
            check=True,
            stdout=subprocess.DEVNULL,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            },
        )
        return counts(Path(folder))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="env steps per phase")
    parser.add_argument("--quick", action="store_true", help="80 steps per phase")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.steps = 80
    args.steps = max(8, args.steps - args.steps % 8)  # whole batched steps
    if args.child:
        child(args.steps)
        return
    header("instructions")
    totals = callgrind_totals(__file__, ["--steps", str(args.steps)])
    if totals is None:
        return
    per_step = {name: totals[name] / args.steps for name in PHASES}
    per_step["batched64-mj"] = totals["batched64-mj"] / (
        LARGE_BATCH * large_batch_steps(args.steps)
    )
    layer = 100 * (1 - per_step["robot"] / per_step["env"])
    layer_mj = 100 * (1 - per_step["robot-mj"] / per_step["env-mj"])
    floor_mj = 100 * (1 - per_step["robot-mj"] / per_step["floor-mj"])
    batched64 = per_step["env-mj"] / per_step["batched64-mj"]
    batched = per_step["env"] / per_step["batched"]
    mujoco = per_step["env-mujoco"] / per_step["raw-mujoco"]
    tick = totals["commander"] / (TICKS_PER_STEP * args.steps)
    print(
        f"jointlab/Reach-v0 (arm6, position mode), {args.steps} env steps per phase, "
        "instructions counted by callgrind (load-independent, not time):"
    )
    print(f"  env layer, share of a Reach-v0 step      {layer:.1f} % (PyBullet)")
    print(f"  env layer, share of a Reach-v0 step      {layer_mj:.1f} % (MuJoCo)")
    print(f"  its floor (FloorReach on MuJoCo)         {floor_mj:.1f} %")
    print(f"  one env / BatchedEnv(64), MuJoCo         {batched64:.3f}x")
    print(f"  one env / BatchedEnv(8), per env step    {batched:.3f}x")
    print(f"  JointLab on MuJoCo / raw MuJoCo loop     {mujoco:.3f}x")
    print(f"  Commander.compute, arm6 at 1 kHz         {tick / 1e3:.1f} thousand per tick")
    print("  millions of instructions per env step:")
    for name in PHASES:
        print(f"    {name:14s} {per_step[name] / 1e6:8.3f}")
    print(f"end {load()}")
    write_summary(
        [
            row("Reach-v0 env layer, % of instructions", [layer], "%"),
            row("Reach-v0 env layer on MuJoCo, % of instructions", [layer_mj], "%"),
            row("its floor (FloorReach on MuJoCo), % of instructions", [floor_mj], "%"),
            row("one env / BatchedEnv(64) on MuJoCo, instructions", [batched64], "x"),
            row("one env / BatchedEnv(8), instructions", [batched], "x"),
            row("JointLab on MuJoCo / raw MuJoCo, instructions", [mujoco], "x"),
            row("Commander.compute, thousand instructions per tick", [tick / 1e3], ""),
        ]
    )


if __name__ == "__main__":
    main()
