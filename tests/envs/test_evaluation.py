"""The evaluation helper: an SB3 model trained briefly, then run on sim:// and emulated://.

(An RLlib checkpoint goes through the same helper in ``test_rllib.py``.)
"""

import gymnasium
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jointlab
import jointlab.envs  # registers the ids
from jointlab.envs.evaluation import (
    EvaluationResult,
    Policy,
    SB3Policy,
    evaluate_policy,
    load_policy,
)
from jointlab.errors import ConfigurationError

ENV_ID = "jointlab/Reach-v0"
ENV_KWARGS = {"robot": "arm6", "action_mode": "position"}


def _manual_returns(path, episodes, seed):
    """The evaluation written by hand with SB3's own API, to compare with the helper."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    model = PPO.load(path, device="cpu")
    env = gymnasium.make(ENV_ID, **ENV_KWARGS)
    stats = VecNormalize.load(str(path.with_name("vecnormalize.pkl")), DummyVecEnv([lambda: env]))
    returns = []
    for episode in range(episodes):
        observation, _ = env.reset(seed=seed if episode == 0 else None)
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(stats.normalize_obs(observation), deterministic=True)
            observation, reward, terminated, truncated, _ = env.step(action)
            total, done = total + reward, terminated or truncated
        returns.append(total)
    env.close()
    return returns


@pytest.mark.slow
def test_sb3_model_on_sim_matches_a_hand_written_loop(sb3_model):
    policy = load_policy(sb3_model)
    assert isinstance(policy, SB3Policy) and policy.normalizer is not None  # found beside it
    result = evaluate_policy(policy, "sim://arm6", env_kwargs=ENV_KWARGS, episodes=3, seed=4)
    assert isinstance(result, EvaluationResult)
    assert result.env_id == ENV_ID and result.backend == "sim://arm6"
    assert result.lengths.tolist() == [50, 50, 50]
    assert result.successes.dtype == bool and 0.0 <= result.success_rate <= 1.0
    np.testing.assert_allclose(result.returns, _manual_returns(sb3_model, 3, seed=4))
    assert result.mean_return == pytest.approx(np.mean(result.returns))
    assert "3 episodes" in result.summary()


@pytest.mark.slow
def test_a_live_robot_and_its_url_give_the_same_episodes(sb3_model):
    by_url = evaluate_policy(sb3_model, "sim://arm6", env_kwargs=ENV_KWARGS, episodes=2, seed=1)
    with jointlab.connect("sim://arm6?control_dt=0.02") as robot:
        live = evaluate_policy(sb3_model, robot, env_kwargs=ENV_KWARGS, episodes=2, seed=1)
        robot.read()  # the helper did not close a robot it was given
    np.testing.assert_array_equal(by_url.returns, live.returns)


@pytest.mark.slow
def test_a_pybullet_trained_model_runs_on_mujoco(sb3_model):
    result = evaluate_policy(
        sb3_model, "sim://arm6?engine=mujoco", env_kwargs=ENV_KWARGS, episodes=2, seed=4
    )
    assert result.lengths.tolist() == [50, 50] and np.all(np.isfinite(result.returns))
    assert "sim://arm6?engine=mujoco" in result.summary()


@pytest.mark.slow
def test_sb3_model_on_the_emulated_device(sb3_model):
    # the device runs in real time (50 steps of 20 ms plus a move home per episode)
    result = evaluate_policy(sb3_model, "emulated://arm6", env_kwargs=ENV_KWARGS, episodes=2)
    assert result.backend == "emulated://arm6"
    assert result.lengths.tolist() == [50, 50]
    assert np.all(np.isfinite(result.returns)) and np.all(result.returns < 0)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("backend", "env_kwargs", "match"),
    [
        ("sim://planar2", ENV_KWARGS, "trained on 'arm6'"),
        ("sim://arm6?control_dt=0.001", ENV_KWARGS, "control_dt=0.02"),
        ("sim://arm6", {**ENV_KWARGS, "observe_torque": True}, "observes shape"),
    ],
)
def test_mismatched_backend_or_env_is_refused(sb3_model, backend, env_kwargs, match):
    with pytest.raises(ConfigurationError, match=match):
        evaluate_policy(sb3_model, backend, env_kwargs=env_kwargs, episodes=1)


def test_bad_paths_and_counts_are_refused(tmp_path):
    with pytest.raises(ConfigurationError, match=r"missing\.zip: no such policy file"):
        load_policy(tmp_path / "missing.zip")
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(ConfigurationError, match="expected an RLlib checkpoint folder"):
        load_policy(tmp_path / "notes.txt")
    with pytest.raises(ConfigurationError, match="not an RLlib algorithm checkpoint"):
        load_policy(tmp_path)
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(ConfigurationError, match="SB3 model"):
        load_policy(tmp_path / "notes.txt")


class _Zero(Policy):
    """Any Policy subclass works: this one always commands mid-range positions."""

    def act(self, observation):
        return np.zeros(6, dtype=np.float32)


def test_any_policy_object_runs_and_episodes_are_validated():
    result = evaluate_policy(_Zero(), "sim://arm6", episodes=1)
    assert result.lengths.tolist() == [50] and not result.successes[0]
    with pytest.raises(ConfigurationError, match="episodes must be >= 1"):
        evaluate_policy(_Zero(), "sim://arm6", episodes=0)
    with pytest.raises(ConfigurationError, match="unknown environment"):
        evaluate_policy(_Zero(), "sim://arm6", env_id="jointlab/Nope-v0")


def test_policy_paths_expand_the_home_folder(sb3_model, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "models").mkdir()
    for name in ("model.zip", "vecnormalize.pkl"):
        (tmp_path / "models" / name).write_bytes((sb3_model.parent / name).read_bytes())
    result = evaluate_policy("~/models/model.zip", "sim://arm6", env_kwargs=ENV_KWARGS, episodes=1)
    assert result.lengths.tolist() == [50]
    with pytest.raises(ConfigurationError, match="no such policy"):
        load_policy("~/models/missing.zip")


@pytest.mark.slow
def test_every_episode_is_filmed_on_a_simulated_robot(sb3_model, tmp_path):
    pytest.importorskip("moviepy")
    evaluate_policy(
        sb3_model, "sim://arm6", env_kwargs=ENV_KWARGS, episodes=2, video_folder=tmp_path / "video"
    )
    videos = sorted((tmp_path / "video").glob("*.mp4"))
    assert [v.name for v in videos] == ["Reach-v0-episode-0.mp4", "Reach-v0-episode-1.mp4"]
    assert all(v.stat().st_size > 5_000 for v in videos)
    with pytest.raises(ConfigurationError, match="needs a simulated robot"):
        evaluate_policy(
            sb3_model,
            "emulated://arm6",
            env_kwargs=ENV_KWARGS,
            episodes=1,
            video_folder=tmp_path / "nope",
        )


@pytest.mark.slow
def test_a_recorded_episode_replays_exactly_in_simulation(sb3_model, tmp_path):
    from jointlab.envs.episodes import record_episode
    from jointlab.recording import Recorder, load_log
    from jointlab.recording.replay import replay

    record = record_episode(
        sb3_model, "sim://arm6", tmp_path / "episode.npz", env_kwargs=ENV_KWARGS, seed=5
    )
    log = load_log(record.path)
    assert record.steps == len(log) == 50 and log.metadata.dt == pytest.approx(0.02)
    assert log.metadata.extra["env_id"] == ENV_ID and len(log.metadata.extra["goal"]) == 3
    assert np.isclose(log["episode.reward"].sum(), record.episode_return)
    with jointlab.connect("sim://arm6?control_dt=0.02") as robot:
        with Recorder(tmp_path / "replay.npz", metadata=robot) as recorder:
            replay(robot, log, recorder=recorder)
    again = load_log(tmp_path / "replay.npz")
    assert np.array_equal(again["state.position"], log["state.position"])


# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I,
# method 3 (Wilson score interval without continuity correction).
@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval_matches_published_values(successes, trials, low, high):
    from jointlab.envs.evaluation import wilson_interval

    assert wilson_interval(successes, trials) == pytest.approx((low, high), abs=1e-4)


@given(trials=st.integers(1, 2000), data=st.data())
def test_wilson_interval_matches_scipy(trials, data):
    stats = pytest.importorskip("scipy.stats")
    from jointlab.envs.evaluation import wilson_interval

    successes = data.draw(st.integers(0, trials))
    expected = stats.binomtest(successes, trials).proportion_ci(method="wilson")
    low, high = wilson_interval(successes, trials)
    assert (low, high) == pytest.approx((expected.low, expected.high), abs=1e-9)
    assert 0.0 <= low <= successes / trials <= high <= 1.0


def test_success_interval_of_a_result_and_bad_counts():
    from jointlab.envs.evaluation import wilson_interval

    result = EvaluationResult(
        "jointlab/Push-v0", "sim://planar2", np.zeros(100), np.arange(100) < 92, np.full(100, 150)
    )
    assert result.success_rate == pytest.approx(0.92)
    assert result.success_interval == pytest.approx(wilson_interval(92, 100))
    assert result.success_interval == pytest.approx((0.8500, 0.9589), abs=1e-4)
    empty = EvaluationResult(
        "jointlab/Push-v0", "sim://planar2", np.zeros(0), np.zeros(0, bool), np.zeros(0, int)
    )
    assert empty.success_interval == (0.0, 1.0)
    with pytest.raises(ConfigurationError, match="successes"):
        wilson_interval(5, 4)
