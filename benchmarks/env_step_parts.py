"""Where the env layer of a Reach step goes, part by part, counted by callgrind.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/env_step_parts.py [--engine mujoco] [--steps 160]
        [--quick]

Runs itself under valgrind's callgrind, as ``instructions.py`` does. Each phase steps
``jointlab/Reach-v0`` (arm6, position mode) ``--steps`` times from the same seeded reset,
with the same random actions and an ``env.reset()`` every 50 steps in every phase (so the
resets cancel), and each phase does one part more than the one before: the robot alone
(``apply`` + ``step`` of prebuilt NJointActions), then ``read()``, the action conversion,
``info["state"]``, the observation, the task's verdict (``Task.evaluate_into``), the whole
unwrapped ``JointLabEnv.step`` and the step through ``gymnasium.make``'s wrappers. The
difference between two phases is what that part costs, in instructions per env step
(load-independent; not time).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from _report import header, load  # noqa: E402
from instructions import _dump, callgrind_totals  # noqa: E402

#: Phase label -> the part it adds to the phase before it.
PARTS = {
    "robot": "robot alone: apply + step (prebuilt actions)",
    "read": "robot.read()",
    "convert": "action conversion (ActionAdapter.convert)",
    "info": 'info["state"] (state.frozen())',
    "observation": "observation (joint state, tool kinematics, goal parts, build)",
    "verdict": "reward, success, info entries (Task.evaluate_into)",
    "unwrapped": "the rest of JointLabEnv.step",
    "wrapped": "gymnasium.make's wrappers",
}


def child(engine: str, steps: int) -> None:
    """The measured program (runs under callgrind)."""
    import gymnasium
    import numpy as np

    import jointlab.envs  # noqa: F401  (registers the ids)

    actions = np.random.default_rng(0).uniform(-1, 1, (steps, 6)).astype(np.float32)
    env = gymnasium.make("jointlab/Reach-v0", robot="arm6", action_mode="position", engine=engine)
    base = env.unwrapped
    robot, task, convert = base.robot, base.task, base.actions.convert
    njoint = [convert(a)[0] for a in actions]

    def parts(i: int, upto: int) -> None:
        if upto < 2:
            action = njoint[i]
        else:
            action = convert(actions[i])[0]
        robot.apply(action)
        robot.step()
        if upto < 1:
            return
        state = robot.read()
        if upto >= 3:
            info = {"state": state.frozen()}
        if upto >= 4:
            base._observation(state)
        if upto >= 5:
            task.evaluate_into(state, action, info)

    bodies = [lambda i, k=k: parts(i, k) for k in range(6)]
    bodies += [lambda i: base.step(actions[i]), lambda i: env.step(actions[i])]
    for label, body in zip(PARTS, bodies, strict=True):
        env.reset(seed=0)
        for i in range(10):  # warm-up
            body(i)
        env.reset(seed=0)
        _dump("setup")
        for i in range(steps):
            body(i)
            if i % 50 == 49:
                env.reset()
        _dump(label)
    env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("mujoco", "pybullet"), default="mujoco")
    parser.add_argument("--steps", type=int, default=160, help="env steps per phase")
    parser.add_argument("--quick", action="store_true", help="50 steps per phase")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.steps = 50
    if args.child:
        child(args.engine, args.steps)
        return
    header("env_step_parts")
    totals = callgrind_totals(__file__, ["--engine", args.engine, "--steps", str(args.steps)])
    if totals is None:
        return
    per_step = {label: totals[label] / args.steps for label in PARTS}
    print(
        f"jointlab/Reach-v0 on {args.engine} (arm6, position mode), {args.steps} env steps "
        "per phase, thousands of instructions per env step (callgrind):"
    )
    previous = None
    for label, what in PARTS.items():
        value = per_step[label]
        added = "" if previous is None else f"+{(value - previous) / 1e3:7.1f}"
        print(f"  {value / 1e3:9.1f} {added:>8s}  {what}")
        previous = value
    layer = per_step["wrapped"] - per_step["robot"]
    print(
        f"  env layer {layer / 1e3:.1f} thousand, {100 * layer / per_step['wrapped']:.1f} % "
        "of the step (resets excluded)"
    )
    print(f"end {load()}")


if __name__ == "__main__":
    main()
