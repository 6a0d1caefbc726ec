"""A short TQC + HER run on jointlab/Lift-v0: SB3's HerReplayBuffer works unchanged."""

import numpy as np
import pytest

from jointlab.envs.manipulation.baseline import evaluate_success, train_her


@pytest.mark.parametrize("algorithm", ["tqc"])
def test_her_trains_and_saves_a_policy_with_its_curve(tmp_path, algorithm):
    pytest.importorskip("sb3_contrib")
    result = train_her(
        "jointlab/Lift-v0",
        tmp_path,
        steps=300,
        algorithm=algorithm,
        eval_every=300,
        eval_episodes=1,
        log=lambda line: None,
    )
    assert (tmp_path / "model.zip").is_file()
    lines = (tmp_path / "curve.csv").read_text().splitlines()
    assert lines[0] == "steps,seconds,success,low,high" and lines[1].startswith("300,")
    assert result.steps == 300 and result.final.trials == 1


def test_her_relabelling_uses_the_env_reward():
    sb3 = pytest.importorskip("stable_baselines3")
    import gymnasium

    env = gymnasium.make("jointlab/Lift-v0")
    try:
        model = sb3.SAC(
            "MultiInputPolicy",
            env,
            replay_buffer_class=sb3.HerReplayBuffer,
            learning_starts=60,
            batch_size=16,
            seed=0,
            device="cpu",
            policy_kwargs={"net_arch": [16]},
        )
        model.learn(total_timesteps=120)
        buffer = model.replay_buffer
        sample = buffer.sample(32)
        achieved = sample.next_observations["achieved_goal"].numpy()
        desired = sample.observations["desired_goal"].numpy()
        expected = env.unwrapped.compute_reward(achieved, desired, {})
        np.testing.assert_array_equal(sample.rewards.numpy().reshape(-1), expected)
        outcomes = evaluate_success(lambda o: model.predict(o, deterministic=True)[0], env, [7])
        assert outcomes.shape == (1,)
    finally:
        env.close()
