"""PPO training set-up shared by ``examples/02_train_reach.py`` and ``jointlab train``.

The settings are the ones that reach >= 90 % success on ``jointlab/Reach-v0`` (arm6, position
mode) within 300k environment steps (docs/environments.md): 8 environments stepped by
:class:`~jointlab.envs.vector.AsyncBatchedEnv` (two worker processes), rollouts of 2048
steps, normalised observations and rewards, a linearly decaying learning rate and a small
initial exploration noise. Needs the ``rl`` extra (stable-baselines3, torch).
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jointlab.errors import ConfigurationError
from jointlab.extras import require

from ..run_record import CURVE_FILE, TENSORBOARD_FOLDER, TrainingRun, write_run

#: File name of the saved model (``vecnormalize.pkl`` is saved beside it).
MODEL_NAME = "model.zip"
#: Discount and GAE factor: episodes are short (50 steps) and rewards dense.
GAMMA = 0.9
#: ``jointlab train TASK`` names -> (environment id, keyword arguments).
TASKS: dict[str, tuple[str, dict[str, Any]]] = {
    "reach": ("jointlab/Reach-v0", {"robot": "arm6", "action_mode": "position"}),
    "reach-so101": ("jointlab/Reach-v0", {"robot": "so101", "action_mode": "position"}),
    "reach-koch": ("jointlab/Reach-v0", {"robot": "koch", "action_mode": "position"}),
    "tracking": ("jointlab/JointTracking-v0", {"action_mode": "position"}),
    "hold": ("jointlab/Hold-v0", {"action_mode": "position"}),
    "push": ("jointlab/Push-v0", {"action_mode": "position"}),
}


def resolve_task(task: str) -> tuple[str, dict[str, Any]]:
    """Environment id and keywords of a task name (``reach``) or a registered id.

    Raises:
        ConfigurationError: neither a task name nor a JointLab environment id (with the
            nearest valid name).
    """
    from ..registration import ENV_SPECS

    if task in TASKS:
        env_id, kwargs = TASKS[task]
        return env_id, dict(kwargs)
    ids = [spec.id for spec in ENV_SPECS]
    if task in ids:
        return task, {}
    hint = difflib.get_close_matches(task, [*TASKS, *ids], n=1)
    raise ConfigurationError(
        f"unknown task {task!r}; expected one of {sorted(TASKS)} or an id of {ids}"
        + (f"; did you mean {hint[0]!r}?" if hint else "")
    )


#: How ``make_training_env`` vectorises: SB3's own vector envs, or JointLab's batched ones.
VECTOR_KINDS = ("dummy", "subprocess", "batched", "async")
#: The default: two worker processes step the environments while this one runs the policy
#: (the same episodes as ``dummy``, bit for bit, in less time; docs/benchmarks.md).
DEFAULT_VECTOR = "async"
#: Environment steps per PPO rollout, across all environments (``n_steps = 2048 // envs``).
ROLLOUT_STEPS = 2048
#: Passes over each rollout: 5 (was 10) halves the gradient updates, which took 40 % of the
#: training time, for about 10 % more environment steps to 90 % success (docs/benchmarks.md).
N_EPOCHS = 5


def make_training_env(
    env_id: str,
    env_kwargs: dict[str, Any],
    envs: int = 8,
    seed: int = 0,
    subprocess: bool = False,
    vector: str | None = None,
    gamma: float = GAMMA,
) -> Any:
    """``envs`` monitored copies of the env behind ``VecNormalize`` (observations, rewards).

    Args:
        env_id: A JointLab id.
        env_kwargs: Keywords of every environment.
        envs: Number of environments.
        seed: Environment ``i`` is seeded ``seed + i``.
        subprocess: Shorthand for ``vector="subprocess"``.
        vector: ``"dummy"`` (SB3's ``DummyVecEnv``), ``"subprocess"`` (``SubprocVecEnv``),
            ``"batched"`` (:class:`jointlab.envs.vector.BatchedEnv` in this process) or
            ``"async"`` (:class:`~jointlab.envs.vector.AsyncBatchedEnv`, two workers: this
            process and one child; the default).
        gamma: Discount of the normalised rewards' running return (use the PPO's).
    """
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import (
        DummyVecEnv,
        SubprocVecEnv,
        VecMonitor,
        VecNormalize,
    )

    import jointlab.envs  # noqa: F401  (registers the ids)

    kind = vector or ("subprocess" if subprocess else DEFAULT_VECTOR)
    if kind not in VECTOR_KINDS:
        raise ConfigurationError(f"unknown vector {kind!r}; expected one of {list(VECTOR_KINDS)}")
    if kind in ("batched", "async"):
        from gymnasium.vector import AutoresetMode

        from ..vector import AsyncBatchedEnv, BatchedEnv, SB3VecEnv

        options = {"autoreset_mode": AutoresetMode.SAME_STEP, **env_kwargs}
        batch = (
            BatchedEnv(env_id, envs, **options)
            if kind == "batched"
            else AsyncBatchedEnv(env_id, envs, workers=min(2, envs), **options)
        )
        vec = SB3VecEnv(batch)
        vec.seed(seed)
        vec = VecMonitor(vec)
    else:
        vec_cls = SubprocVecEnv if kind == "subprocess" and envs > 1 else DummyVecEnv
        vec = make_vec_env(
            env_id, n_envs=envs, seed=seed, env_kwargs=env_kwargs, vec_env_cls=vec_cls
        )
    return VecNormalize(vec, norm_obs=True, norm_reward=True, gamma=gamma)


def make_ppo(
    env: Any,
    seed: int = 0,
    net_arch: tuple[int, ...] = (256, 256),
    n_epochs: int = N_EPOCHS,
    *,
    gamma: float = GAMMA,
    log_std_init: float = -2.0,
) -> Any:
    """A Stable-Baselines3 PPO with the tuned Reach settings, on the CPU.

    Args:
        env: The (normalised, vectorised) training environment.
        seed: Seed of the policy and of SB3's own randomness.
        net_arch: Hidden layer sizes of the policy and value networks.
        n_epochs: Passes over each rollout of ``ROLLOUT_STEPS`` (minibatches of 256).
        gamma: Discount and GAE factor (longer tasks than Reach want it closer to 1).
        log_std_init: Initial log standard deviation of the exploration noise (normalised
            action units).
    """
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import Logger

    model = PPO(
        "MlpPolicy",
        env,
        n_steps=max(1, ROLLOUT_STEPS // env.num_envs),
        batch_size=256,
        n_epochs=n_epochs,
        learning_rate=lambda remaining: 1e-3 * remaining,  # linear decay to 0
        gamma=gamma,
        gae_lambda=0.9,
        ent_coef=0.0,
        clip_range=0.2,
        # Position targets are absolute, so exploration noise moves the whole arm: start it
        # small (std 0.135 of the half range, about 0.38 rad on the base joint).
        policy_kwargs={"net_arch": list(net_arch), "log_std_init": float(log_std_init)},
        seed=seed,
        device="cpu",
        verbose=0,
    )
    # A logger that writes nowhere: SB3's default one makes an empty /tmp/SB3-<time> folder
    # at every learn(). model.set_logger(...) installs another (e.g. for TensorBoard).
    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


#: Environment steps between evaluations of ``train`` (all environment copies together).
EVAL_EVERY = 20_000
#: Episodes per evaluation of ``train``.
EVAL_EPISODES = 20
#: Offset of the evaluation environment's seed from the training seed.
EVAL_SEED_OFFSET = 10_000


def train(
    task: str,
    steps: int,
    out: Path,
    *,
    envs: int = 8,
    seed: int = 0,
    engine: str | None = None,
    eval_every: int = EVAL_EVERY,
    eval_episodes: int = EVAL_EPISODES,
    on_progress: Callable[[int], None] | None = None,
) -> TrainingRun:
    """Train PPO on ``task`` for ``steps`` environment steps; save the model and the logs.

    Writes into ``out``: ``model.zip`` and ``vecnormalize.pkl``, ``tensorboard/`` (SB3's
    rollout and loss scalars and the evaluations, :mod:`jointlab.envs.training_log`),
    ``learning_curve.png`` (evaluation success against environment steps) and ``run.json``
    (:mod:`jointlab.envs.run_record`, what ``jointlab runs`` lists).

    Args:
        task: A task name of :data:`TASKS` or a JointLab environment id.
        steps: Environment steps (rounded up to whole rollouts of ``ROLLOUT_STEPS``).
        out: The run folder (made if missing).
        envs: Environment copies.
        seed: Seed of the environments and the policy; the evaluation environment's is
            ``seed + EVAL_SEED_OFFSET``.
        engine: Physics engine of the environments (default: the task's, else PyBullet).
        eval_every: Environment steps between evaluations (one more after the last step).
        eval_episodes: Deterministic episodes per evaluation.
        on_progress: Called with the environment steps done, at every vector step.

    Returns:
        The run's record, as written to ``run.json``.

    Raises:
        ConfigurationError: an unknown task, or ``steps``, ``eval_every`` or
            ``eval_episodes`` < 1.
    """
    for name, value in (
        ("steps", steps),
        ("eval_every", eval_every),
        ("eval_episodes", eval_episodes),
    ):
        if value < 1:
            raise ConfigurationError(f"{name} must be >= 1, got {value}")
    torch, _, _ = require("rl", "training", "torch", "stable_baselines3", "tensorboard")
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList

    from jointlab.sim.engine import DEFAULT_ENGINE

    from ..learning_curve import save_learning_curve
    from ..training_log import Evaluator, tensorboard_logger

    class _Progress(BaseCallback):
        def _on_step(self) -> bool:
            if on_progress is not None:
                on_progress(self.num_timesteps)
            return True

    env_id, env_kwargs = resolve_task(task)
    if engine is not None:
        env_kwargs["engine"] = engine
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    env = make_training_env(env_id, env_kwargs, envs=envs, seed=seed)
    eval_env = make_training_env(
        env_id, env_kwargs, envs=1, seed=seed + EVAL_SEED_OFFSET, vector="dummy"
    )
    model = make_ppo(env, seed=seed)
    model.set_logger(tensorboard_logger(out / TENSORBOARD_FOLDER))
    evaluator = Evaluator(eval_env, eval_every, eval_episodes, seed + EVAL_SEED_OFFSET)
    # Whole rollouts: SB3 finishes the last one anyway, and the learning rate's linear decay
    # (``1 - done / total``) must reach 0 there, not go negative past ``steps``.
    rollout = model.n_steps * model.n_envs
    started = time.perf_counter()
    try:
        model.learn(
            total_timesteps=-(-steps // rollout) * rollout,
            callback=CallbackList([_Progress(), evaluator]),
        )
    finally:
        model.logger.close()
        eval_env.close()
    wall_time = time.perf_counter() - started
    model.save(out / MODEL_NAME)
    env.save(str(out / "vecnormalize.pkl"))
    env.close()
    engine_name = str(env_kwargs.get("engine", DEFAULT_ENGINE))
    run = TrainingRun(
        task=task,
        env_id=env_id,
        engine=engine_name,
        seed=seed,
        envs=envs,
        steps=int(model.num_timesteps),
        wall_time=wall_time,
        env_kwargs=env_kwargs,
        evaluations=tuple(evaluator.evaluations),
    )
    save_learning_curve(
        run.evaluations, out / CURVE_FILE, title=f"PPO on {env_id} ({run.engine}), seed {seed}"
    )
    write_run(run, out)
    return run
