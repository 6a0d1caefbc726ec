"""Reach-v0 on PyBullet and on MuJoCo, each against its raw engine loop, in one run.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/engines.py [--seconds 2] [--rounds 7] [--clock cpu]
        [--json F]

Four measures of env steps per second (higher is better), at equal physics settings: arm6,
position action mode, one env step = 20 physics steps of 1 ms with the NJointAction PD
evaluated at every physics step (``control_dt`` 0.02 s), the same random action sequence,
a reset every 50 steps (Reach-v0's episode length):

* ``pybullet``: ``gymnasium.make("jointlab/Reach-v0", robot="arm6", action_mode="position")``;
* ``mujoco``: the same with ``engine="mujoco"``;
* ``raw-pybullet``: the same work written directly against PyBullet, in the same scene (built
  by ``World`` and ``RobotBody``, not timed): per physics step ``getJointStates``, numpy PD
  with the default gains, ``setJointMotorControlArray(TORQUE_CONTROL)``,
  ``stepSimulation``; per env step the observation (joint state, tool position from
  ``getLinkState``) and the reward (tool-to-goal distance);
* ``raw-mujoco``: the same against MuJoCo on the same compiled model (``World(engine=
  "mujoco")``, not timed): per env step the position targets as the drive actuators' ``ctrl``
  (their PD bias set once), ``mj_step(model, data, 20)``, the observation (``qpos``,
  ``qvel``, the tool site after ``mj_kinematics``) and the reward.

The raw loops do the physics, observation and reward an env step does, without JointLab's
layers (action mapping, NJointAction, actuator models, state flags, task, info). The four
measures alternate over ``--rounds`` rounds so that load from other processes hits them
alike; each figure is the median, with the min-max range, and the load average is printed
at the start and the end. ``--clock cpu`` counts the benchmark thread's CPU time
(``time.thread_time``) instead of wall time: on a machine shared with other jobs that
leaves out the time spent waiting for a core, so ratios stay meaningful (all four measures
are single-threaded); the lead's final figures use the default wall clock on an idle
machine. Targets (issue 18): ``mujoco / pybullet >= 5``; JointLab's
overhead on MuJoCo, ``raw-mujoco / mujoco <= 1.3``.

``--parts STEPS`` prints instead where a Reach step's CPU time goes on each engine (action
mapping, apply, robot step, read, observation, reward, info, resets), timed in place.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium
import numpy as np
import pybullet
from env_throughput import _actions, env_stepper  # the script's folder

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.robots import load_robot
from jointlab.sim import World
from jointlab.sim.pybullet.body import RobotBody

SUBSTEPS = 20
EPISODE_STEPS = 50
ROBOT = "arm6"
TOOL = "wrist_yaw_tool"
#: The goal of the raw loops' reward, world frame, m.
GOAL = np.array([0.4, 0.2, 0.5])


#: The clock of the measures: ``time.perf_counter`` (wall) or ``time.thread_time`` (CPU).
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}
clock = time.perf_counter


def _timed_loop(step: Callable[[], None], seconds: float, warmup: int = 20) -> float:
    """Calls of ``step`` per second of :data:`clock`, over at least ``seconds`` of it."""
    for _ in range(warmup):
        step()
    count, start = 0, clock()
    while True:
        for _ in range(20):
            step()
        count += 20
        elapsed = clock() - start
        if elapsed >= seconds:
            return count / elapsed


def _targets() -> np.ndarray:
    """The same actions as joint position targets (the position mode's mapping), rad."""
    description = load_robot(ROBOT)
    low, high = np.array(description.soft_lower), np.array(description.soft_upper)
    return low + (_actions().astype(np.float64) + 1.0) * 0.5 * (high - low)


def observe(q: np.ndarray, qd: np.ndarray, tip: np.ndarray) -> tuple[np.ndarray, float]:
    """What a Reach env step returns besides physics: the observation and the reward."""
    return np.concatenate([q, qd, GOAL, tip, GOAL - tip]), -float(np.linalg.norm(GOAL - tip))


def bench_env(engine: str, seconds: float) -> float:
    """Env steps per second of Reach-v0 on ``engine``."""
    env = gymnasium.make("jointlab/Reach-v0", robot=ROBOT, action_mode="position", engine=engine)
    try:
        return _timed_loop(env_stepper(env), seconds)
    finally:
        env.close()


def bench_raw_pybullet(seconds: float) -> float:
    """Env steps per second of the hand-written PyBullet loop (module docstring)."""
    description = load_robot(ROBOT)
    with World() as world:
        body = RobotBody(world, description)
        cid, body_id, joints = world.client_id, body.body_id, body.indices
        tool = body.link_index(TOOL)
        kp, kd = np.array(description.default_kp), np.array(description.default_kd)
        effort = np.array(description.effort_limit)
        home = np.array(description.home)
        targets = _targets()
        mode = pybullet.TORQUE_CONTROL
        i = 0

        def reset() -> None:
            body.reset(home, np.zeros(home.size))

        def step() -> None:
            nonlocal i
            target = targets[i % 4096]
            for _ in range(SUBSTEPS):
                states = pybullet.getJointStates(body_id, joints, physicsClientId=cid)
                q = np.array([s[0] for s in states])
                qd = np.array([s[1] for s in states])
                tau = np.clip(kp * (target - q) - kd * qd, -effort, effort)
                pybullet.setJointMotorControlArray(
                    body_id, joints, mode, forces=tau.tolist(), physicsClientId=cid
                )
                pybullet.stepSimulation(physicsClientId=cid)
            states = pybullet.getJointStates(body_id, joints, physicsClientId=cid)
            q = np.array([s[0] for s in states])
            qd = np.array([s[1] for s in states])
            tip = np.array(
                pybullet.getLinkState(
                    body_id, tool, computeForwardKinematics=True, physicsClientId=cid
                )[4]
            )
            observe(q, qd, tip)
            i += 1
            if i % EPISODE_STEPS == 0:
                reset()

        reset()
        return _timed_loop(step, seconds)


def bench_raw_mujoco(seconds: float) -> float:
    """Env steps per second of the hand-written MuJoCo loop (module docstring)."""
    from jointlab.sim.mujoco.body import MujocoBody
    from jointlab.sim.mujoco.library import import_mujoco

    mujoco = import_mujoco()
    description = load_robot(ROBOT)
    with World(engine="mujoco") as world:
        body = MujocoBody(world, description, prefix="raw:")
        model, data = world.model, world.data
        qpos, dofs, drive = body.qpos, body.dofs, body.drive
        site = body.link_index(TOOL).site
        kp, kd = np.array(description.default_kp), np.array(description.default_kd)
        model.actuator_biasprm[drive, 1] = -kp
        model.actuator_biasprm[drive, 2] = -kd
        home = np.array(description.home)
        targets = _targets()
        ctrl = data.ctrl
        i = 0

        def reset() -> None:
            data.qpos[qpos] = home
            data.qvel[:] = 0.0
            data.qacc_warmstart[:] = 0.0

        def step() -> None:
            nonlocal i
            ctrl[drive] = kp * targets[i % 4096]
            mujoco.mj_step(model, data, SUBSTEPS)
            q, qd = data.qpos[qpos], data.qvel[dofs]
            mujoco.mj_kinematics(model, data)
            observe(q, qd, data.site_xpos[site].copy())
            i += 1
            if i % EPISODE_STEPS == 0:
                reset()

        reset()
        return _timed_loop(step, seconds)


#: The parts of a Reach env step that :func:`step_parts` times, in step order.
PARTS = (
    "action mapping",
    "apply",
    "robot step",
    "read",
    "observation (incl. tool kinematics)",
    "reward",
    "info",
    "reset (per step)",
)


def step_parts(engine: str, steps: int) -> dict[str, float]:
    """CPU µs per env step of each part of ``JointLabEnv.step`` (unwrapped), in place.

    The body of ``JointLabEnv.step`` for the position mode, part by part, with
    ``time.thread_time_ns`` around each (its own cost, about 1 µs on a loaded machine, is
    printed as ``timer``): the parts run in the step's order, on the caches a real step
    leaves them, not in a warm micro-benchmark.
    """
    env = gymnasium.make("jointlab/Reach-v0", robot=ROBOT, action_mode="position", engine=engine)
    base = env.unwrapped
    base.reset(seed=0)
    actions, robot, task = _actions(), base.robot, base.task
    now = time.thread_time_ns
    totals = np.zeros(len(PARTS) + 1)
    for i in range(steps + 50):
        if i == 50:
            totals[:] = 0.0  # warm-up done
        t0 = now()
        njoint, _ = base.actions.convert(actions[i % 4096])
        t1 = now()
        robot.apply(njoint)
        t2 = now()
        robot.step()
        t3 = now()
        state = base.state = robot.read()
        t4 = now()
        info = base._info(state)  # first, as in the env's step: the observation reuses it
        t4b = now()
        base._observation(state)
        t5 = now()
        outcome = task.evaluate(state, njoint)
        t6 = now()
        info.update(outcome.info)
        t7 = now()
        if i % EPISODE_STEPS == EPISODE_STEPS - 1:
            base.reset()
        t8 = now()
        t9 = now()
        totals += (
            t1 - t0,
            t2 - t1,
            t3 - t2,
            t4 - t3,
            t5 - t4b,
            t6 - t5,
            (t4b - t4) + (t7 - t6),
            t8 - t7,
            t9 - t8,
        )
    env.close()
    micro = totals / steps / 1e3
    return {**dict(zip(PARTS, micro[:-1], strict=True)), "timer": micro[-1]}


def print_parts(steps: int) -> None:
    """Per-part breakdown of a Reach env step on each engine (``--parts``)."""
    print(f"load average (1, 5, 15 min) at start: {os.getloadavg()}")
    parts = {engine: step_parts(engine, steps) for engine in ("pybullet", "mujoco")}
    print(f"CPU us per env step, {steps} steps (timer overhead included in each part):")
    print(f"  {'part':38s} {'pybullet':>9s} {'mujoco':>9s}")
    for name in (*PARTS, "timer"):
        print(f"  {name:38s} {parts['pybullet'][name]:9.1f} {parts['mujoco'][name]:9.1f}")
    for engine, values in parts.items():
        python = sum(values[p] for p in PARTS if p != "robot step")
        timers = (len(PARTS) - 1) * values["timer"]
        print(
            f"  {engine}: JointLab's Python besides the robot step {python - timers:.1f} us "
            f"(timers subtracted)"
        )


MEASURES: dict[str, Callable[[float], float]] = {
    "pybullet": lambda s: bench_env("pybullet", s),
    "mujoco": lambda s: bench_env("mujoco", s),
    "raw-pybullet": bench_raw_pybullet,
    "raw-mujoco": bench_raw_mujoco,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="duration of each measure")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (median)")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall time, or this thread's CPU time (a shared machine)",
    )
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    parser.add_argument(
        "--parts",
        type=int,
        default=0,
        metavar="STEPS",
        help="instead: time each part of a Reach step over STEPS steps",
    )
    args = parser.parse_args()
    if args.parts:
        print_parts(args.parts)
        return
    global clock
    clock = CLOCKS[args.clock]
    load_start = os.getloadavg()
    runs: dict[str, list[float]] = {name: [] for name in MEASURES}
    for _ in range(args.rounds):
        for name, measure in MEASURES.items():
            runs[name].append(measure(args.seconds))
    load_end = os.getloadavg()
    median = {name: statistics.median(values) for name, values in runs.items()}
    print(
        f"jointlab/Reach-v0 ({ROBOT}, position mode, {SUBSTEPS} physics steps of 1 ms per "
        f"step); median of {args.rounds} alternating rounds of {args.seconds:g} s "
        f"({args.clock} clock)"
    )
    print(
        f"load average (1, 5, 15 min): start {load_start[0]:.2f} {load_start[1]:.2f} "
        f"{load_start[2]:.2f}, end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}"
    )
    ratios = {
        "mujoco / pybullet": (median["mujoco"] / median["pybullet"], ">= 5"),
        "raw-mujoco / mujoco (JointLab overhead on MuJoCo)": (
            median["raw-mujoco"] / median["mujoco"],
            "<= 1.3",
        ),
        "raw-pybullet / pybullet (JointLab overhead on PyBullet)": (
            median["raw-pybullet"] / median["pybullet"],
            "",
        ),
        "raw-mujoco / raw-pybullet (the engines alone)": (
            median["raw-mujoco"] / median["raw-pybullet"],
            "",
        ),
    }
    for label, (value, target) in ratios.items():
        print(f"  {label:56s} {value:6.2f}x" + (f"  (target {target})" if target else ""))
    # Issue 34's figure: Reach's engine ratio as a share of the raw engines', round by round
    shares = sorted(
        m * rp / (p * rm)
        for m, p, rm, rp in zip(
            runs["mujoco"], runs["pybullet"], runs["raw-mujoco"], runs["raw-pybullet"], strict=True
        )
    )
    raw_ratio = median["raw-mujoco"] / median["raw-pybullet"]
    share = median["mujoco"] / median["pybullet"] / raw_ratio
    print(
        f"  {'Reach mujoco/pybullet as a share of the raw engines':56s} {share:6.2f}x  "
        f"(per round {statistics.median(shares):.2f} [{shares[0]:.2f}-{shares[-1]:.2f}]; "
        "target >= 0.9)"
    )
    for name, values in runs.items():
        print(
            f"  {name:14s} {median[name]:9.0f} env steps/s  (min {min(values):.0f}, "
            f"max {max(values):.0f}; {1e6 / median[name]:.0f} us/step)"
        )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "runs": runs,
                    "median": median,
                    "load_start": load_start,
                    "load_end": load_end,
                    "ratios": {k: v[0] for k, v in ratios.items()},
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
