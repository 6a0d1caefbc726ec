"""Evaluate manipulation policies: success with Wilson intervals, paired comparisons, demos.

``jointlab eval ROBOT POLICY --env jointlab/Lift-v0`` lands here when the id is a
manipulation task. POLICY is ``expert`` (the scripted expert, :mod:`.experts`) or a
Stable-Baselines3 model of an off-policy learner (TQC or SAC, as :mod:`.baseline` trains).
Episode ``i`` is reset with seed ``seed + i``, so two policies evaluated with the same
``seed`` meet the same cubes and goals: :func:`compare_paired` reports the difference of
their success rates with Newcombe's interval for paired proportions. Every step's
``info["control_period"]`` is checked against the configured ``control_dt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from jointlab.errors import ConfigurationError, SimulationError

from ..statistics import PairedDifference, Rate, paired_difference, success_rate
from .experts import expert_policy
from .registration import MANIPULATION_IDS

__all__ = [
    "ManipulationEvaluation",
    "compare_paired",
    "evaluate_manipulation",
    "load_actor",
    "record_demonstrations",
]

#: The POLICY name of the scripted expert.
EXPERT = "expert"


@dataclass(frozen=True)
class ManipulationEvaluation:
    """Outcome of :func:`evaluate_manipulation`."""

    env_id: str
    policy: str
    #: ``is_success`` at each episode's last step, shape ``(episodes,)``.
    successes: np.ndarray
    #: Undiscounted returns, shape ``(episodes,)``.
    returns: np.ndarray
    #: Seeds of the episodes' resets.
    seeds: np.ndarray
    #: The configured step and the largest deviation of a step's simulated period from it, s.
    control_dt: float
    period_error: float

    @property
    def rate(self) -> Rate:
        """Success rate with its 95 % Wilson interval."""
        return success_rate(self.successes)

    def summary(self) -> str:
        """One line: id, policy, success with interval, mean return, control period."""
        return (
            f"{self.env_id} {self.policy}: success {self.rate}, return "
            f"{np.mean(self.returns):.2f}, control period {self.control_dt * 1000:.1f} ms "
            f"(checked every step, largest deviation {self.period_error:.1e} s)"
        )


class _SB3Actor:
    def __init__(self, model: Any) -> None:
        self.model = model

    def reset(self) -> None:
        """Nothing to forget."""

    def __call__(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return self.model.predict(observation, deterministic=True)[0]


def load_actor(policy: str | Path, env: gymnasium.Env) -> Any:
    """The callable policy named ``policy``: ``"expert"`` or an SB3 TQC/SAC model file.

    Raises:
        ConfigurationError: no such file, or a file neither TQC nor SAC can load.
    """
    if str(policy) == EXPERT:
        return expert_policy(env)
    path = Path(policy).expanduser()
    if path.is_dir() and (path / "model.zip").is_file():
        path = path / "model.zip"
    if not path.is_file():
        raise ConfigurationError(
            f"{path}: no such policy file; POLICY is '{EXPERT}' or a "
            "model.zip of examples/06_manipulation_her.py"
        )
    errors = []
    for module, name in (("sb3_contrib", "TQC"), ("stable_baselines3", "SAC")):
        try:
            learner = getattr(__import__(module), name)
            return _SB3Actor(learner.load(path, env=None, device="cpu"))
        except Exception as exc:  # try the next learner, report all
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
    raise ConfigurationError(f"{path}: not a TQC or SAC model ({'; '.join(errors)})")


def _check(env_id: str) -> None:
    if env_id not in MANIPULATION_IDS:
        raise ConfigurationError(
            f"{env_id!r} is not a manipulation task; known: {sorted(MANIPULATION_IDS)}"
        )


def evaluate_manipulation(
    policy: str | Path,
    env_id: str,
    *,
    episodes: int = 100,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
) -> ManipulationEvaluation:
    """Run ``policy`` for ``episodes`` episodes (seeds ``seed..seed+episodes-1``) and score it.

    Raises:
        ConfigurationError: an unknown id, a bad policy or episode count.
        SimulationError: a step's simulated period differs from ``control_dt``.
    """
    _check(env_id)
    if episodes < 1:
        raise ConfigurationError(f"episodes must be >= 1, got {episodes}")
    env = gymnasium.make(env_id, **(env_kwargs or {}))
    try:
        actor = load_actor(policy, env)
        control_dt = float(env.unwrapped.control_dt)
        successes, returns, worst = [], [], 0.0
        for episode in range(episodes):
            observation, info = env.reset(seed=seed + episode)
            actor.reset()
            total, done = 0.0, False
            while not done:
                observation, reward, terminated, truncated, info = env.step(actor(observation))
                worst = max(worst, abs(info["control_period"] - control_dt))
                total += float(reward)
                done = terminated or truncated
            successes.append(bool(info["is_success"]))
            returns.append(total)
        if worst > 1e-9:
            raise SimulationError(f"{env_id}: a step advanced {worst} s off control_dt")
    finally:
        env.close()
    return ManipulationEvaluation(
        env_id,
        str(policy),
        np.array(successes, dtype=bool),
        np.array(returns),
        np.arange(seed, seed + episodes),
        control_dt,
        worst,
    )


def compare_paired(a: ManipulationEvaluation, b: ManipulationEvaluation) -> PairedDifference:
    """Success of ``a`` minus ``b`` on the same seeds, with its 95 % interval.

    Raises:
        ConfigurationError: the two were not run on the same seeds of the same task.
    """
    if a.env_id != b.env_id or not np.array_equal(a.seeds, b.seeds):
        raise ConfigurationError("a paired comparison needs the same task and seeds")
    return paired_difference(a.successes, b.successes)


def record_demonstrations(
    policy: str | Path,
    env_id: str,
    path: str | Path,
    *,
    episodes: int = 10,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
) -> Rate:
    """Record ``episodes`` episodes of ``policy`` into an NPZ file for imitation learning.

    The file holds, over all steps in order, ``observation``, ``achieved_goal``,
    ``desired_goal``, ``action``, ``reward``, ``episode`` (index), ``joint_target`` (the
    joint position targets the servos were given after the action, rad) and per episode
    ``success`` and ``seed``.

    Returns:
        The recorded episodes' success rate.
    """
    _check(env_id)
    env = gymnasium.make(env_id, **(env_kwargs or {}))
    columns: dict[str, list[Any]] = {
        k: []
        for k in (
            "observation",
            "achieved_goal",
            "desired_goal",
            "action",
            "reward",
            "episode",
            "joint_target",
        )
    }
    successes = []
    try:
        actor = load_actor(policy, env)
        for episode in range(episodes):
            observation, info = env.reset(seed=seed + episode)
            actor.reset()
            done = False
            while not done:
                action = actor(observation)
                for key in ("observation", "achieved_goal", "desired_goal"):
                    columns[key].append(observation[key])
                observation, reward, terminated, truncated, info = env.step(action)
                columns["action"].append(np.asarray(action, dtype=np.float32))
                columns["reward"].append(float(reward))
                columns["episode"].append(episode)
                columns["joint_target"].append(env.unwrapped.q_target.copy())
                done = terminated or truncated
            successes.append(bool(info["is_success"]))
    finally:
        env.close()
    arrays = {k: np.asarray(v) for k, v in columns.items()}
    np.savez_compressed(
        Path(path).expanduser(),
        **arrays,
        success=np.array(successes),
        seed=np.arange(seed, seed + episodes),
    )
    return success_rate(np.array(successes, dtype=bool))
