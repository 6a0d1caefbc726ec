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
returns by 1.4e-3; the bounds below leave a factor 5.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import jointlab
from jointlab.contract import Robot
from jointlab.envs.evaluation import policy_env
from jointlab.hardware import EmulatorProcess, SerialRobot

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


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorProcess]:
    process = EmulatorProcess("arm6", lockstep=True)
    yield process
    process.close()
    assert not process.alive


def run_both(emulator: EmulatorProcess, script: Callable[[Robot, Any], None], period: int = 1
             ) -> tuple[Any, Any]:  # fmt: skip
    """``script`` on the Python emulator, then on the firmware; their outcomes."""
    emulator.reset()
    outcomes = (parity.Outcome(), parity.Outcome())
    with SerialRobot(emulator.path, "arm6", lockstep=True, stream_period=period,
                     **parity.PATIENT) as robot:  # fmt: skip
        script(robot, outcomes[0])
    with jointlab.connect(f"{FIRMWARE}&stream_period={period}", **parity.PATIENT) as robot:
        script(robot, outcomes[1])
        assert robot.firmware.plant.error is None
        process = robot.firmware.process
    assert process.poll() is not None  # QEMU stopped with the robot
    return outcomes


@pytest.mark.slow
@pytest.mark.parametrize("script", [parity.tracking, parity.state_changes, parity.settings,
                                    parity.resets, parity.action_errors],
                         ids=lambda s: s.__name__)  # fmt: skip
def test_robot_verbs_behave_alike_on_the_firmware(pil_firmware: None, emulator: EmulatorProcess,
                                                  script: Any) -> None:  # fmt: skip
    parity.assert_same_outcome(*run_both(emulator, script))


@pytest.mark.slow
@pytest.mark.parametrize("verbs", [parity.moves, parity.velocities, parity.efforts,
                                   parity.trajectory, parity.requests, parity.refusals],
                         ids=lambda v: v.__name__)  # fmt: skip
def test_commander_programs_behave_alike_on_the_firmware(pil_firmware: None,
                                                         emulator: EmulatorProcess,
                                                         verbs: Any) -> None:  # fmt: skip
    script = parity.commander_script(verbs)
    parity.assert_same_outcome(*run_both(emulator, script, parity.COMMANDER_PERIOD))


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
