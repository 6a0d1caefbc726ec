"""The imitation loop through LeRobot's own console scripts, on tiny sizes.

Expert demonstrations (``jointlab record so101 expert``) -> a LeRobotDataset ->
``lerobot-train`` for two steps -> ``lerobot-eval`` on JointLab's environment
(``--env.type=jointlab``, found by ``--env.discover_packages_path``), each run as installed
(the venv's console scripts, in their own processes); and ``lerobot-record`` running a
checkpoint on the emulated servo arm (``--robot.url=emulated://so101``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from jointlab.errors import ConfigurationError
from jointlab.interop.dataset import ENVIRONMENT, dataset_info
from jointlab.interop.demos import record_expert
from jointlab.interop.lerobot_gym import LeRobotTaskEnv, check_policy, register_lerobot_env
from jointlab.interop.units import LeRobotUnits
from jointlab.robots import load_robot

BIN = Path(sys.executable).parent
TINY_ACT = [
    "--policy.type=act",
    "--policy.device=cpu",
    "--policy.push_to_hub=false",
    "--policy.dim_model=16",
    "--policy.n_heads=2",
    "--policy.dim_feedforward=32",
    "--policy.n_encoder_layers=1",
    "--policy.n_decoder_layers=1",
    "--policy.chunk_size=5",
    "--policy.n_action_steps=5",
    "--policy.use_vae=false",
    "--policy.pretrained_backbone_weights=null",
    "--steps=2",
    "--batch_size=2",
    "--save_freq=2",
    "--log_freq=1",
    "--num_workers=0",
    "--wandb.enable=false",
    "--eval_freq=0",
]


def _script(name: str, *flags: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run LeRobot's console script ``name`` as installed; fail with its output's tail."""
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: `make test` installs LeRobot's console scripts")
    environ = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [str(path), *flags],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"{name} exited {done.returncode}:\n{(done.stdout + done.stderr)[-4000:]}")
    return done


# ---------------------------------------------------------------------- the environment
def test_the_env_speaks_lerobot_units_and_reports_success_at_the_end() -> None:
    env_id = register_lerobot_env("Reach")
    env = gymnasium.make(env_id, max_episode_steps=3, render_mode=None)
    try:
        observation, _ = env.reset(seed=7)
        units = LeRobotUnits.of(load_robot("so101"))
        home = units.to_lerobot(load_robot("so101").home)
        np.testing.assert_allclose(observation["agent_pos"], home, atol=0.5)
        assert units.units[-1] == "0-100" and units.units[0] == "deg"
        goal = observation["environment_state"]
        assert goal.shape == (3,) and np.linalg.norm(goal) < 1.0  # a position in metres
        again, _ = env.reset(seed=7)
        np.testing.assert_array_equal(again["environment_state"], goal)
    finally:
        env.close()
    vector = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make(env_id, max_episode_steps=3, render_mode=None)],
        autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP,
    )
    try:
        observation, _ = vector.reset(seed=[7])
        for _ in range(3):
            observation, _, _, truncated, info = vector.step(observation["agent_pos"])
        assert truncated.all() and info["final_info"]["is_success"].dtype == bool
    finally:
        vector.close()


def test_an_unknown_task_and_a_wrong_action_are_named() -> None:
    with pytest.raises(ConfigurationError, match=r"unknown JointLab task 'Reech'.*'Reach'"):
        LeRobotTaskEnv("Reech")
    env = LeRobotTaskEnv("Reach", render_mode=None)
    try:
        env.reset(seed=0)
        with pytest.raises(ConfigurationError, match="takes 6 joint targets"):
            env.step(np.zeros(5))
    finally:
        env.close()


def test_a_policy_of_other_features_is_refused_before_it_runs(tmp_path) -> None:
    config = {
        "input_features": {
            "observation.state": {"type": "STATE", "shape": [6]},
            "observation.environment_state": {"type": "ENV", "shape": [3]},
        },
        "output_features": {"action": {"type": "ACTION", "shape": [6]}},
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    check_policy(tmp_path, "Reach")  # matches
    config["input_features"]["observation.velocity"] = {"type": "STATE", "shape": [6]}
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigurationError, match=r"'observation.velocity'.*not an output"):
        check_policy(tmp_path, "Reach")
    del config["input_features"]["observation.velocity"]
    config["input_features"]["observation.state"]["shape"] = [5]
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigurationError, match=r"'observation.state' has shape \(5,\).*\(6,\)"):
        check_policy(tmp_path, "Reach")


def test_lift_observes_the_cube_and_the_goal_and_its_expert_lifts() -> None:
    from jointlab.interop.demos import expert_for

    env = LeRobotTaskEnv("Lift", render_mode=None)
    try:
        observation, _ = env.reset(seed=5)
        names = env.spec_task.environment
        assert names[:3] == ("cube0.x", "cube0.y", "cube0.z") and names[-3:] == (
            "goal0.x",
            "goal0.y",
            "goal0.z",
        )
        state = dict(zip(names, observation["environment_state"], strict=True))
        assert 0.0 < state["cube0.z"] < 0.05  # on the table
        expert = expert_for("Lift")
        expert.begin(env)
        for _ in range(env.spec_task.episode_steps):
            _, _, _, _, info = env.step(env.units.to_lerobot(expert.target(env)))
        assert info["is_success"]
    finally:
        env.close()


# ---------------------------------------------------------------------- demonstrations
def test_expert_demonstrations_carry_the_environment_state(tmp_path) -> None:
    summary = record_expert(tmp_path / "reach", "Reach", "so101", 2, seed=3)
    assert summary.successes == (True, True)
    features = dataset_info(tmp_path / "reach")["features"]
    assert features[ENVIRONMENT]["names"] == ["goal.x", "goal.y", "goal.z"]
    assert "observation.velocity" not in features  # what the env observes, nothing more
    assert features["observation.state"]["names"][-1] == "gripper.pos"
    meta = json.loads((tmp_path / "reach" / "meta" / "jointlab.json").read_text())
    assert meta["units"]["joints"]["gripper.pos"] == "0-100"


# ---------------------------------------------------------------------- the loop
def _train(work: Path, *record_flags: str) -> Path:
    """Expert demonstrations (``jointlab record``), then two steps of ``lerobot-train``."""
    done = subprocess.run(
        [
            str(BIN / "jointlab"),
            "record",
            "so101",
            "expert",
            "--env",
            "Reach",
            "--episodes",
            "2",
            "--dataset",
            str(work / "demos"),
            *record_flags,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the expert succeeded in 2" in done.stdout
    _script(
        "lerobot-train",
        "--dataset.repo_id=local/demos",
        f"--dataset.root={work / 'demos'}",
        *TINY_ACT,
        f"--output_dir={work / 'train'}",
        cwd=work,
    )
    checkpoint = work / "train" / "checkpoints" / "last" / "pretrained_model"
    assert (checkpoint / "model.safetensors").exists()
    return checkpoint


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """ACT on joint state + environment state (the simulation's policy)."""
    return _train(tmp_path_factory.mktemp("loop-state"))


@pytest.fixture(scope="module")
def trained_on_camera(tmp_path_factory) -> Path:
    """ACT on joint state + a 32x32 camera (PNG frames), no environment state: the device's."""
    work = tmp_path_factory.mktemp("loop-camera")
    return _train(work, "--camera", "front:32x32", "--no-environment-state")


@pytest.mark.slow
def test_lerobot_eval_runs_the_checkpoint_in_jointlab(trained, tmp_path) -> None:
    _script(
        "lerobot-eval",
        f"--policy.path={trained}",
        "--policy.device=cpu",
        "--env.discover_packages_path=lerobot_env_jointlab",
        "--env.type=jointlab",
        "--env.task=Reach",
        "--env.episode_length=4",
        "--env.render_width=32",
        "--env.render_height=32",
        "--eval.n_episodes=1",
        "--eval.batch_size=1",
        f"--output_dir={tmp_path / 'eval'}",
        "--seed=1000",
        cwd=tmp_path,
    )
    info = json.loads((tmp_path / "eval" / "eval_info.json").read_text())
    assert info["overall"]["n_episodes"] == 1
    assert len(info["per_task"][0]["metrics"]["successes"]) == 1


@pytest.mark.slow
def test_lerobot_eval_refuses_a_checkpoint_of_another_camera_set(
    trained_on_camera, tmp_path
) -> None:
    path = BIN / "lerobot-eval"
    done = subprocess.run(
        [
            str(path),
            f"--policy.path={trained_on_camera}",
            "--policy.device=cpu",
            "--env.discover_packages_path=lerobot_env_jointlab",
            "--env.type=jointlab",
            "--env.task=Reach",
            "--eval.n_episodes=1",
            "--eval.batch_size=1",
            f"--output_dir={tmp_path / 'eval'}",
        ],
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert done.returncode != 0
    assert "'observation.images.front'" in done.stderr and "--env.cameras" in done.stderr


@pytest.mark.slow
def test_lerobot_record_runs_the_checkpoint_on_the_emulated_arm(
    trained_on_camera, tmp_path
) -> None:
    _script(
        "lerobot-record",
        "--robot.type=jointlab",
        "--robot.url=emulated://so101",
        "--robot.sim_cameras=[front]",
        "--robot.camera_width=32",
        "--robot.camera_height=32",
        f"--robot.calibration_dir={tmp_path / 'calibration'}",
        "--robot.task=Reach",
        "--robot.task_seed=1000",
        f"--robot.task_log={tmp_path / 'verdicts.jsonl'}",
        f"--policy.path={trained_on_camera}",
        "--policy.device=cpu",
        "--dataset.repo_id=local/eval_reach",
        f"--dataset.root={tmp_path / 'rollout'}",
        "--dataset.single_task=reach the goal with the gripper",
        "--dataset.num_episodes=1",
        "--dataset.episode_time_s=0.6",
        "--dataset.reset_time_s=0",
        "--dataset.fps=25",
        "--dataset.push_to_hub=false",
        "--play_sounds=false",
        "--display_data=false",
        cwd=tmp_path,
    )
    info = dataset_info(tmp_path / "rollout")
    assert info["total_episodes"] == 1 and info["total_frames"] >= 1  # as many as time allowed
    assert info["robot_type"] == "jointlab"
    verdict = json.loads((tmp_path / "verdicts.jsonl").read_text())  # judged by the task
    assert verdict["task"] == "Reach" and verdict["seed"] == 1000
    assert verdict["url"] == "emulated://so101" and isinstance(verdict["success"], bool)


# ---------------------------------------------------------------------- the device path
def test_the_robot_plugin_judges_an_episode_by_the_envs_task_and_seed(tmp_path) -> None:
    from jointlab.controllers.ik import solve_ik
    from jointlab.interop.lerobot_bridge import RobotBridge

    env = LeRobotTaskEnv("Reach", render_mode=None)
    try:
        goal = env.reset(seed=1003)[0]["environment_state"]
        tool = env.task.tool_name
    finally:
        env.close()
    with pytest.raises(ConfigurationError, match="unknown JointLab task"):
        RobotBridge("sim://so101", task="Reech")
    with pytest.raises(ConfigurationError, match="holds no objects"):
        RobotBridge("emulated://so101", task="Lift")
    log = tmp_path / "verdicts.jsonl"
    for reach_it in (False, True):
        bridge = RobotBridge(
            "sim://so101",
            task="Reach",
            task_seed=1003,
            task_log=str(log),
            cameras=["front"],
            camera_size=(32, 32),
        )
        bridge.connect()
        try:
            np.testing.assert_array_equal(bridge.judge.environment_state(), goal)
            if reach_it:
                q = bridge.units.to_lerobot(solve_ik(bridge.description, goal, tool=tool).q)
                for _ in range(40):
                    bridge.send_action(dict(zip(bridge.units.keys, q, strict=True)))
        finally:
            bridge.disconnect()
        assert bridge.verdict["success"] is reach_it
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["success"] for line in lines] == [False, True]
    assert lines[0]["seed"] == 1003 and lines[0]["environment_state"] == goal.tolist()
