"""Environment throughput: jointlab/Reach-v0 against a raw PyBullet loop and panda-gym.

All figures come from one run of this script::

    PYTHONPATH=. .venv/bin/python benchmarks/env_throughput.py [--steps 1500] [--rounds 7]

What is measured, in CPU time of the process that steps (PyBullet DIRECT runs in-thread):

* ``env``: ``gymnasium.make("jointlab/Reach-v0", robot="arm6", action_mode="position")``,
  a fixed random action sequence, resets on episode end. One env step = 20 physics steps of
  1 ms with the NJointAction PD evaluated at every physics step (``control_dt`` 0.02 s);
  the env layer is everything in those steps but the robot's ``apply``, ``step`` and
  ``reset`` (action mapping, reading and observing the state, reward, info, the task's
  resets, Gymnasium wrappers), timed inside the same steps (:func:`env_layer`);
  ``robot``: the robot alone fed the same NJointActions (apply + step, same resets), in a
  loop of its own (reported, not used for the layer: two loops timed one after the other
  differ by whatever the machine did in between);
* ``raw``: the same physics work written directly against PyBullet on the same robot and
  scene, fed the same targets with the default gains and reset as often;
* ``panda``: panda-gym ``PandaReach-v3`` (also 20 substeps per step), run by a Python that
  has panda-gym (``--panda-python``, default ``/tmp/bench-venv/bin/python`` when it exists,
  else this interpreter); skipped with a message when none has it. panda-gym pins its own
  gymnasium and pybullet, so give it a venv of its own (never a JointLab dependency)::

      python -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install panda-gym

Each round measures env, raw and panda one after the other; ratios are paired within a
round and reported as the median [lowest - highest] over the rounds, ratios first, with the
load average at the start and end. Targets (issue 15): ``env / panda >= 2.0``; env layer
``<= 5 %`` of a step. Vector environments: ``vector_env.py`` and ``scaling.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium
import numpy as np
import pybullet
import pybullet_data

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _report import header, load, row, spread, write_summary  # noqa: E402

import jointlab.envs  # noqa: E402,F401  (registers the ids)
from jointlab.robots import (  # noqa: E402
    description_to_urdf,
    load_robot,
)

ENV_ID = "jointlab/Reach-v0"
SUBSTEPS = 20
DT = 0.001
#: Episode length of jointlab/Reach-v0 (the raw loop resets the arm as often).
EPISODE_STEPS = 50

PANDA_SNIPPET = r"""
import json, sys, time
import gymnasium, numpy as np, panda_gym  # noqa: F401
count = int(sys.argv[1])
env = gymnasium.make("PandaReach-v3")
env.reset(seed=0)
rng = np.random.default_rng(0)
actions = rng.uniform(-1, 1, size=(4096,) + env.action_space.shape).astype(np.float32)
for i in range(50):
    env.step(actions[i])
start = time.process_time()
for steps in range(count):
    _, _, terminated, truncated, _ = env.step(actions[steps % 4096])
    if terminated or truncated:
        env.reset()
elapsed = time.process_time() - start
print(json.dumps({"steps_per_s": count / elapsed,
                  "substeps": env.unwrapped.sim.n_substeps}))
"""


def _make_env() -> gymnasium.Env:
    return gymnasium.make(ENV_ID, robot="arm6", action_mode="position")


def _timed_loop(step: Callable[[], None], steps: int, warmup: int = 20) -> float:
    """Calls per CPU second of ``step``."""
    for _ in range(warmup):
        step()
    start = time.process_time()
    for _ in range(steps):
        step()
    return steps / (time.process_time() - start)


def _actions() -> np.ndarray:
    """The action sequence every single-env measure uses (normalised position targets)."""
    return np.random.default_rng(0).uniform(-1, 1, size=(4096, 6)).astype(np.float32)


def env_stepper(env: gymnasium.Env) -> Callable[[], None]:
    """One env step per call with the common action sequence, resetting on episode end."""
    env.reset(seed=0)
    actions = _actions()
    i = 0

    def step() -> None:
        nonlocal i
        _, _, terminated, truncated, _ = env.step(actions[i % 4096])
        i += 1
        if terminated or truncated:
            env.reset()

    return step


def env_layer(env: gymnasium.Env, steps: int) -> float:
    """Percent of ``steps`` env steps' time spent outside the robot's apply, step and reset.

    Both parts are timed inside the same steps (``perf_counter_ns`` around the robot's two
    calls and around each env step), so what disturbs a step disturbs both in proportion:
    a paired split, unlike two loops timed one after the other.
    """
    robot = env.unwrapped.robot
    apply, advance, reset = robot.apply, robot.step, robot.reset
    clock = time.perf_counter_ns
    inside = 0

    def timed_apply(action: object) -> None:
        nonlocal inside
        start = clock()
        apply(action)
        inside += clock() - start

    def timed_step() -> None:
        nonlocal inside
        start = clock()
        advance()
        inside += clock() - start

    def timed_reset(*args: object, **kwargs: object) -> object:
        nonlocal inside
        start = clock()
        state = reset(*args, **kwargs)
        inside += clock() - start
        return state

    robot.apply, robot.step, robot.reset = timed_apply, timed_step, timed_reset
    try:
        step = env_stepper(env)
        for _ in range(20):
            step()
        inside, total = 0, 0
        for _ in range(steps):
            start = clock()
            step()
            total += clock() - start
    finally:
        del robot.apply, robot.step, robot.reset  # the class's methods again
    return 100.0 * (total - inside) / total


def bench_env(steps: int) -> dict[str, float]:
    """Single env steps/s, the env layer's share of a step, the robot alone's steps/s."""
    env = _make_env()
    rate = _timed_loop(env_stepper(env), steps)
    layer = env_layer(env, steps)
    actions = _actions()
    # Where the time goes: the robot alone, fed the same NJointActions with the same resets.
    base = env.unwrapped
    robot = base.robot
    njoint = [base.actions.to_njoint(a).action for a in actions]
    robot.reset()
    j = 0

    def robot_step() -> None:
        nonlocal j
        robot.apply(njoint[j % 4096])
        robot.step()
        j += 1
        if j % EPISODE_STEPS == 0:
            robot.reset()

    robot_rate = _timed_loop(robot_step, steps)
    env.close()
    return {"steps_per_s": rate, "robot_step_per_s": robot_rate, "layer": layer}


def bench_raw(steps: int) -> float:
    """The same physics work written directly against PyBullet (env steps/s).

    Same robot, scene, action sequence (as position targets with the default gains) and
    episode resets as :func:`bench_env`.
    """
    description = load_robot("arm6")
    client = pybullet.connect(pybullet.DIRECT)
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as handle:
            handle.write(description_to_urdf(description))
            path = handle.name
        # The same scene as the env's World: ground plane, same URDF flags and settings.
        pybullet.setTimeStep(DT, physicsClientId=client)
        pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
        pybullet.setPhysicsEngineParameter(deterministicOverlappingPairs=1, physicsClientId=client)
        pybullet.loadURDF(
            os.path.join(pybullet_data.getDataPath(), "plane.urdf"), physicsClientId=client
        )
        body = pybullet.loadURDF(
            path,
            useFixedBase=True,
            physicsClientId=client,
            flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
        )
        os.unlink(path)
        for link in range(-1, pybullet.getNumJoints(body, physicsClientId=client)):
            pybullet.changeDynamics(
                body, link, linearDamping=0.0, angularDamping=0.0, physicsClientId=client
            )
        names = [
            pybullet.getJointInfo(body, j, physicsClientId=client)[1].decode()
            for j in range(pybullet.getNumJoints(body, physicsClientId=client))
        ]
        joints = [names.index(n) for n in description.joint_names]
        pybullet.setJointMotorControlArray(
            body,
            joints,
            pybullet.VELOCITY_CONTROL,
            forces=[0.0] * len(joints),
            physicsClientId=client,
        )
        home = [float(q) for q in description.home]

        def reset() -> None:
            for j, q in zip(joints, home, strict=True):
                pybullet.resetJointState(body, j, q, 0.0, physicsClientId=client)

        reset()
        kp, kd = np.array(description.default_kp), np.array(description.default_kd)
        effort = np.array(description.effort_limit)
        low, high = np.array(description.soft_lower), np.array(description.soft_upper)
        targets = low + (_actions().astype(np.float64) + 1.0) * 0.5 * (high - low)
        i = 0

        def step() -> None:
            nonlocal i
            target = targets[i % 4096]
            for _ in range(SUBSTEPS):
                states = pybullet.getJointStates(body, joints, physicsClientId=client)
                q = np.array([s[0] for s in states])
                qd = np.array([s[1] for s in states])
                tau = np.clip(kp * (target - q) - kd * qd, -effort, effort)
                pybullet.setJointMotorControlArray(
                    body, joints, pybullet.TORQUE_CONTROL, forces=tau, physicsClientId=client
                )
                pybullet.stepSimulation(physicsClientId=client)
            i += 1
            if i % EPISODE_STEPS == 0:
                reset()

        return _timed_loop(step, steps)
    finally:
        pybullet.disconnect(client)


def bench_panda(steps: int, python: str | None) -> dict[str, float] | str:
    """PandaReach-v3 steps/s from an interpreter that has panda-gym, or why it was skipped."""
    candidates = [python] if python else []
    default = Path("/tmp/bench-venv/bin/python")
    if not python and default.exists():
        candidates.append(str(default))
    candidates.append(sys.executable)
    for candidate in candidates:
        try:
            result = subprocess.run(
                [candidate, "-c", PANDA_SNIPPET, str(steps)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if result.returncode == 0:
            data = json.loads(result.stdout.strip().splitlines()[-1])
            data["python"] = candidate
            return data
    return "skipped: panda-gym is not importable (pip install panda-gym in a separate venv)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500, help="env steps of each measure")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (median, spread)")
    parser.add_argument("--panda-python", default=None, help="a Python with panda-gym")
    parser.add_argument("--quick", action="store_true", help="300 steps, 3 rounds")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.rounds = 300, 3
    header("env_throughput")
    print(
        f"{ENV_ID} (arm6, position mode, {SUBSTEPS} physics steps of {DT * 1e3:g} ms per step)"
        f", {args.steps} steps x {args.rounds} rounds, CPU time"
    )
    envs, robots, raws, pandas, layer = [], [], [], [], []
    skipped = ""
    for _ in range(args.rounds):
        measured = bench_env(args.steps)
        envs.append(measured["steps_per_s"])
        robots.append(measured["robot_step_per_s"])
        layer.append(measured["layer"])
        raws.append(bench_raw(args.steps))
        if not skipped:
            panda = bench_panda(args.steps, args.panda_python)
            if isinstance(panda, str):
                skipped = panda
            else:
                pandas.append(panda["steps_per_s"])
    summary = [row("Reach-v0 env layer, % of a step", layer, "%", "<= 5")]
    print("  ratios, median [min-max] over rounds:")
    if pandas:
        versus = [e / p for e, p in zip(envs, pandas, strict=True)]
        print(f"    Reach-v0 / PandaReach-v3      {spread(versus)}x   (target >= 2.0)")
        summary.insert(0, row("Reach-v0 / PandaReach-v3 steps/s", versus, "x", ">= 2.0"))
    else:
        print(f"    Reach-v0 / PandaReach-v3      {skipped}")
    print(
        f"    raw PyBullet / Reach-v0       "
        f"{spread([r / e for r, e in zip(raws, envs, strict=True)])}x"
    )
    print(
        f"    env layer                     {spread(layer, 1, 1)} % of a step (target <= 5;"
        " timed inside the same steps)"
    )
    print(
        f"    robot alone / Reach-v0        "
        f"{spread([r / e for r, e in zip(robots, envs, strict=True)])}x   (separate loops)"
    )
    print("  this machine, steps per CPU second:")
    print(f"    Reach-v0          {spread(envs, 1, 0)}")
    print(f"    robot alone       {spread(robots, 1, 0)}  (apply + step, physics + law)")
    print(f"    raw PyBullet      {spread(raws, 1, 0)}")
    if pandas:
        print(f"    PandaReach-v3     {spread(pandas, 1, 0)}")
    write_summary(summary)
    print(f"end {load()}")


if __name__ == "__main__":
    main()
