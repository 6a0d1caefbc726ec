"""Environment throughput: jointlab/Reach-v0 against a raw PyBullet loop, panda-gym and workers.

All figures come from one run of this script::

    PYTHONPATH=. .venv/bin/python benchmarks/env_throughput.py [--seconds 3] [--json out.json]

What is measured (env steps per second, higher is better):

* ``env``: ``gymnasium.make("jointlab/Reach-v0", robot="arm6", action_mode="position")``,
  random actions, resets on episode end. One env step = 20 physics steps of 1 ms with the
  NJointAction PD evaluated at every physics step (``control_dt`` 0.02 s).
* ``raw``: the same physics work written directly against PyBullet on the same robot, fed
  the same action sequence (as position targets with the default gains) and reset as often
  (``description.to_urdf()``, loaded like the env's world loads it, with the ground
  plane): per physics step ``getJointStates`` + numpy PD +
  ``setJointMotorControlArray(TORQUE_CONTROL)`` + ``stepSimulation``, 20 times per "step".
* ``panda``: panda-gym ``PandaReach-v3`` (also 20 substeps per step), run by a Python that
  has panda-gym (``--panda-python``, default ``/tmp/bench-venv/bin/python`` when it exists,
  else this interpreter); skipped with a message when none has it. panda-gym pins its own
  gymnasium and pybullet, so give it a venv of its own::

      python -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install panda-gym

* ``async1``/``async2``: ``gymnasium.vector.AsyncVectorEnv`` with 1 and 2 workers (total env
  steps per second), plus the cost of the vector machinery alone (a no-op env) and two fully
  independent processes, to show where the time goes.

The single-env figures are the best of ``--rounds`` alternating runs (the machine is shared;
the best run is the least disturbed one). Targets (issue 5): ``raw / env <= 1.2``;
``env / panda >= 1.5``; ``async2 / async1 >= 1.5``.
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

from _processes import in_processes  # noqa: E402  (benchmarks/ is on sys.path)

import jointlab.envs  # noqa: E402,F401  (registers the ids)
from jointlab.robots import load_robot  # noqa: E402

ENV_ID = "jointlab/Reach-v0"
SUBSTEPS = 20
DT = 0.001
#: Episode length of jointlab/Reach-v0 (the raw loop resets the arm as often).
EPISODE_STEPS = 50

PANDA_SNIPPET = r"""
import json, sys, time
import gymnasium, numpy as np, panda_gym  # noqa: F401
seconds = float(sys.argv[1])
env = gymnasium.make("PandaReach-v3")
env.reset(seed=0)
rng = np.random.default_rng(0)
actions = rng.uniform(-1, 1, size=(4096,) + env.action_space.shape).astype(np.float32)
for i in range(50):
    env.step(actions[i])
steps, start = 0, time.perf_counter()
while time.perf_counter() - start < seconds:
    _, _, terminated, truncated, _ = env.step(actions[steps % 4096])
    steps += 1
    if terminated or truncated:
        env.reset()
elapsed = time.perf_counter() - start
print(json.dumps({"steps_per_s": steps / elapsed,
                  "substeps": env.unwrapped.sim.n_substeps}))
"""


def _make_env() -> gymnasium.Env:
    # "module:id": workers started with spawn or forkserver import (and register) it too.
    return gymnasium.make(f"jointlab.envs:{ENV_ID}", robot="arm6", action_mode="position")


class _NoOpEnv(gymnasium.Env):
    """An env that does nothing: what the vector machinery alone costs."""

    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (21,), np.float32)
    action_space = gymnasium.spaces.Box(-1.0, 1.0, (6,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(21, np.float32), {}

    def step(self, action):
        return np.zeros(21, np.float32), 0.0, False, False, {}


def _timed_loop(step, seconds: float, warmup: int = 20) -> float:
    for _ in range(warmup):
        step()
    count, start = 0, time.perf_counter()
    while True:
        for _ in range(20):
            step()
        count += 20
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count / elapsed


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


def bench_env(seconds: float) -> dict[str, float]:
    """Single env steps/s, and the robot's share of a step (apply + step, same actions)."""
    env = _make_env()
    rate = _timed_loop(env_stepper(env), seconds)
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

    robot_rate = _timed_loop(robot_step, seconds / 2)
    env.close()
    return {"steps_per_s": rate, "robot_step_per_s": robot_rate}


def bench_raw(seconds: float) -> float:
    """The same physics work written directly against PyBullet (env steps/s).

    Same robot, scene, action sequence (as position targets with the default gains) and
    episode resets as :func:`bench_env`.
    """
    description = load_robot("arm6")
    client = pybullet.connect(pybullet.DIRECT)
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as handle:
            handle.write(description.to_urdf())
            path = handle.name
        # The same scene as the env's World: ground plane, same URDF flags and settings.
        pybullet.setTimeStep(DT, physicsClientId=client)
        pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
        pybullet.setPhysicsEngineParameter(deterministicOverlappingPairs=1,
                                           physicsClientId=client)  # fmt: skip
        pybullet.loadURDF(os.path.join(pybullet_data.getDataPath(), "plane.urdf"),
                          physicsClientId=client)  # fmt: skip
        body = pybullet.loadURDF(path, useFixedBase=True, physicsClientId=client,
                                 flags=pybullet.URDF_USE_INERTIA_FROM_FILE)  # fmt: skip
        os.unlink(path)
        for link in range(-1, pybullet.getNumJoints(body, physicsClientId=client)):
            pybullet.changeDynamics(body, link, linearDamping=0.0, angularDamping=0.0,
                                    physicsClientId=client)  # fmt: skip
        names = [
            pybullet.getJointInfo(body, j, physicsClientId=client)[1].decode()
            for j in range(pybullet.getNumJoints(body, physicsClientId=client))
        ]
        joints = [names.index(n) for n in description.joint_names]
        pybullet.setJointMotorControlArray(body, joints, pybullet.VELOCITY_CONTROL,
                                           forces=[0.0] * len(joints), physicsClientId=client)
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
                pybullet.setJointMotorControlArray(body, joints, pybullet.TORQUE_CONTROL,
                                                   forces=tau, physicsClientId=client)
                pybullet.stepSimulation(physicsClientId=client)
            i += 1
            if i % EPISODE_STEPS == 0:
                reset()

        return _timed_loop(step, seconds)
    finally:
        pybullet.disconnect(client)


def bench_panda(seconds: float, python: str | None) -> dict[str, float] | str:
    """PandaReach-v3 steps/s from an interpreter that has panda-gym, or why it was skipped."""
    candidates = [python] if python else []
    default = Path("/tmp/bench-venv/bin/python")
    if not python and default.exists():
        candidates.append(str(default))
    candidates.append(sys.executable)
    for candidate in candidates:
        try:
            result = subprocess.run(
                [candidate, "-c", PANDA_SNIPPET, str(seconds)],
                capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            continue
        if result.returncode == 0:
            data = json.loads(result.stdout.strip().splitlines()[-1])
            data["python"] = candidate
            return data
    return "skipped: panda-gym is not importable (pip install panda-gym in a separate venv)"


def bench_vector(env_fn, workers: int, seconds: float) -> float:
    """Total env steps/s of an AsyncVectorEnv with ``workers`` processes."""
    vec = gymnasium.vector.AsyncVectorEnv([env_fn] * workers)
    vec.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(256, workers, 6)).astype(np.float32)
    i = 0

    def step() -> None:
        nonlocal i
        vec.step(actions[i % 256])
        i += 1

    try:
        return workers * _timed_loop(step, seconds)
    finally:
        vec.close()


def _env_steps_per_s(seconds: float) -> float:
    return bench_env(seconds)["steps_per_s"]


def bench_independent(workers: int, seconds: float) -> float:
    """Total steps/s of ``workers`` processes each running its own env loop (no IPC)."""
    return float(sum(in_processes(_env_steps_per_s, workers, seconds)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="duration of each measure")
    parser.add_argument("--rounds", type=int, default=3,
                        help="env and raw are measured alternately this often; best of each")
    parser.add_argument("--panda-python", default=None, help="a Python with panda-gym")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    s = args.seconds

    print(f"{ENV_ID} (arm6, position mode, {SUBSTEPS} physics steps of {DT * 1e3:g} ms per step)")
    # Alternate env and raw so that load from other processes hits both alike; keep the best.
    env_runs, raw_runs = [], []
    for _ in range(args.rounds):
        env_runs.append(bench_env(s))
        raw_runs.append(bench_raw(s))
    env = max(env_runs, key=lambda r: r["steps_per_s"])
    raw = max(raw_runs)
    panda = bench_panda(s, args.panda_python)
    noop1 = bench_vector(_NoOpEnv, 1, s / 2)
    async1 = bench_vector(_make_env, 1, s)
    async2 = bench_vector(_make_env, 2, s)
    independent2 = bench_independent(2, s)

    figures = {
        "env_steps_per_s": env["steps_per_s"],
        "robot_step_per_s": env["robot_step_per_s"],
        "raw_steps_per_s": raw,
        "panda": panda,
        "async1_steps_per_s": async1,
        "async2_steps_per_s": async2,
        "independent2_steps_per_s": independent2,
        "async_machinery_ms": 1e3 / noop1,
    }
    env_ms = 1e3 / env["steps_per_s"]
    robot_ms = 1e3 / env["robot_step_per_s"]
    raw_ms = 1e3 / raw
    print(f"  env            {env['steps_per_s']:8.0f} steps/s  ({env_ms:.3f} ms/step)")
    print(f"    robot alone  {env['robot_step_per_s']:8.0f} /s       ({robot_ms:.3f} ms: "
          f"apply + step, physics + PD); env layer {env_ms - robot_ms:.3f} ms")  # fmt: skip
    print(f"  raw PyBullet   {raw:8.0f} steps/s  ({raw_ms:.3f} ms/step)")
    print(f"  overhead raw/env = {raw / env['steps_per_s']:.2f}x  (target <= 1.2x)")
    if isinstance(panda, dict):
        print(f"  panda-gym PandaReach-v3 {panda['steps_per_s']:8.0f} steps/s "
              f"({panda['substeps']} substeps)")  # fmt: skip
        print(f"  env/panda = {env['steps_per_s'] / panda['steps_per_s']:.2f}x  (target >= 1.5x)")
    else:
        print(f"  panda-gym: {panda}")
    print(f"  AsyncVectorEnv 1 worker  {async1:8.0f} steps/s")
    print(f"  AsyncVectorEnv 2 workers {async2:8.0f} steps/s")
    print(f"  2 workers / 1 worker = {async2 / async1:.2f}x  (target >= 1.5x)")
    print(f"  where the time goes: vector machinery alone {1e3 / noop1:.3f} ms per vector step "
          f"(no-op env); 2 independent env processes {independent2:.0f} steps/s = "
          f"{independent2 / env['steps_per_s']:.2f}x one env")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
