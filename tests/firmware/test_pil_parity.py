"""Parity: the reference firmware in QEMU gives the outcomes of the Python device emulator.

The scripts of tests/test_parity.py (every Robot verb, every Commander verb) run on a
lockstep ``emulated://arm6`` (the Python emulator) and on a lockstep
``emulated://arm6?device=firmware`` (the C firmware on an emulated Cortex-M3, the same
PyBullet physics behind its second UART), both through the unchanged ``SerialRobot``, and are
compared with that suite's tolerances: times and flags exactly, numbers to float32
rounding. Both runs depend only on what the host sent (lockstep), never on the machine's
load, so they pass or fail the same way every time.

The differences that remain are the firmware's law in float32 (the emulator's simulator
computes it in float64) and the plant's state crossing the plant link as float32: measured
on the tracking script (251 ticks) at 1.2e-7 rad, 2.5e-6 rad/s, 1.3e-4 N·m. A trained Reach
policy (notebooks/models/sim_to_sim/pybullet-nominal) amplifies them through its network:
over one 50-step episode (1000 ticks) the joints differ by at most 1.0e-3 rad and the
returns by 1.4e-3; the bounds below leave a factor 5. A Commander program
(examples/programs/arm6_tour.yaml, 5980 ticks) differs by at most 1.2e-7 rad; the short
program below is held to 1e-5 rad. `PYTHONPATH=. python benchmarks/pil_tracking.py` prints
these figures.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest

import jointlab
from jointlab.contract import Robot
from jointlab.envs import ENV_SPECS, TASKS
from jointlab.envs.evaluation import policy_env
from jointlab.errors import ConfigurationError
from jointlab.hardware import EmulatorProcess, SerialRobot
from jointlab.program import run_program

TESTS = Path(__file__).resolve().parents[1]
REACH_MODEL = (
    TESTS.parent / "notebooks" / "models" / "sim_to_sim" / "pybullet-nominal" / "model.zip"
)


def _parity_suite() -> Any:
    """tests/test_parity.py, whose scripts and comparisons this file reuses."""
    module = sys.modules.get("test_parity")
    if module is None:
        spec = importlib.util.spec_from_file_location("test_parity", TESTS / "test_parity.py")
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules["test_parity"] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


parity = _parity_suite()
FIRMWARE = "emulated://arm6?device=firmware&lockstep=1"


def run_both(script: Callable[[Robot, Any], None], period: int = 1) -> tuple[Any, Any]:
    """``script`` on a new Python emulator, then on a new firmware device; their outcomes."""
    outcomes = (parity.Outcome(), parity.Outcome())
    with (
        EmulatorProcess("arm6", lockstep=True) as emulator,
        SerialRobot(
            emulator.path, "arm6", lockstep=True, stream_period=period, **parity.PATIENT
        ) as robot,
    ):
        script(robot, outcomes[0])
    with jointlab.connect(f"{FIRMWARE}&stream_period={period}", **parity.PATIENT) as robot:
        script(robot, outcomes[1])
        assert robot.firmware.plant.error is None
        process = robot.firmware.process
    assert process.poll() is not None  # QEMU stopped with the robot
    return outcomes


@pytest.mark.slow
@pytest.mark.parametrize(
    "script",
    [parity.tracking, parity.state_changes, parity.settings, parity.resets, parity.action_errors],
    ids=lambda s: s.__name__,
)
def test_robot_verbs_behave_alike_on_the_firmware(pil_firmware: None, script: Any) -> None:
    parity.assert_same_outcome(*run_both(script))


@pytest.mark.slow
@pytest.mark.parametrize(
    "verbs",
    [
        parity.moves,
        parity.velocities,
        parity.efforts,
        parity.trajectory,
        parity.requests,
        parity.refusals,
    ],
    ids=lambda v: v.__name__,
)
def test_commander_programs_behave_alike_on_the_firmware(pil_firmware: None, verbs: Any) -> None:
    script = parity.commander_script(verbs)
    parity.assert_same_outcome(*run_both(script, parity.COMMANDER_PERIOD))


@pytest.mark.slow
@pytest.mark.parametrize("spec", ENV_SPECS, ids=lambda spec: spec.id)
def test_every_environment_behaves_alike_on_the_firmware(
    pil_build: Callable[[str], None], spec: Any
) -> None:
    """test_parity's environment check: 15 random steps of 20 ticks, on each robot's build."""
    robot_name = TASKS[spec.task].default_robot
    pil_build(robot_name)
    outcomes = []
    for url in (
        f"emulated://{robot_name}?lockstep=1",
        f"emulated://{robot_name}?device=firmware&lockstep=1",
    ):
        with jointlab.connect(f"{url}&stream_period=20", **parity.PATIENT) as robot:
            robot.arm()
            try:
                env = gymnasium.make(spec.id, robot=robot, **parity.env_kwargs(spec.id))
            except ConfigurationError as error:  # a task that needs a simulated world
                assert spec.id == "jointlab/Push-v0" and "world" in str(error)
                continue
            with env:
                outcomes.append(parity.env_run(env))
    if spec.id != "jointlab/Push-v0":
        parity.assert_same_outcome(*outcomes)


#: A Commander program (docs/programs.md): a timed trajectory, a move, a decelerating stop.
PROGRAM = [
    {"home": {}},
    {
        "follow_trajectory": {
            "waypoints": [
                {"position": [0.0, 0.4, 1.0, 0.0, 0.8, 0.0], "time_from_start": 0.0},
                {"position": [0.4, 0.2, 1.2, 0.2, 0.6, 0.0], "time_from_start": 0.8},
            ]
        }
    },
    {"set_positions": {"positions": [0.3, 0.6, 0.8, 0.0, 0.5, 0.2]}},
    {"stop": {"mode": "decelerate"}},
]


class Positions:
    """A recorder of the measured joint positions at every control step."""

    def __init__(self) -> None:
        self.positions: list[np.ndarray] = []

    def log(self, time: float, **loggables: Any) -> None:
        if "state" in loggables:
            self.positions.append(loggables["state"].position)


@pytest.mark.slow
def test_a_commander_program_tracks_alike_on_the_firmware(pil_firmware: None) -> None:
    runs = []
    for url in ("emulated://arm6?lockstep=1", FIRMWARE):
        recorder = Positions()
        with jointlab.connect(url, stream_period=parity.COMMANDER_PERIOD) as robot:
            results = run_program(robot, PROGRAM, recorder=recorder)
            runs.append(
                (
                    np.array(recorder.positions),
                    robot.read().time,
                    [r.summary.ticks for r in results],
                )
            )
    (a, time_a, ticks_a), (b, time_b, ticks_b) = runs
    assert time_a == time_b and ticks_a == ticks_b  # the same steps, each as long
    assert a.shape == b.shape and len(a) > 300
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-5)  # 1.2e-7 on arm6_tour.yaml


def reach_episode(url: str) -> tuple[np.ndarray, float, int]:
    """One episode of the trained Reach policy: joint positions per step, return, steps."""
    with policy_env(REACH_MODEL, url) as opened:
        env, policy = opened.env, opened.policy
        observation, _ = env.reset(seed=0)
        policy.begin(observation, env)
        positions, total, done = [], 0.0, False
        while not done:
            observation, reward, terminated, truncated, _ = env.step(policy.act(observation))
            policy.record(observation, float(reward), terminated, truncated)
            positions.append(env.unwrapped.robot.read().position)
            total, done = total + float(reward), terminated or truncated
    return np.array(positions), total, len(positions)


@pytest.mark.slow
def test_a_trained_reach_policy_tracks_alike_on_the_firmware(pil_firmware: None) -> None:
    pytest.importorskip("stable_baselines3")
    emulated = reach_episode("emulated://arm6?lockstep=1")
    firmware = reach_episode(FIRMWARE)
    assert emulated[2] == firmware[2] == 50
    np.testing.assert_allclose(firmware[0], emulated[0], rtol=0, atol=5e-3)
    assert firmware[1] == pytest.approx(emulated[1], abs=1e-2)
