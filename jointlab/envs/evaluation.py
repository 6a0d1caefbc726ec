"""Try a trained policy on any backend: load an RLlib or SB3 checkpoint, run it, score it.

A policy trained on a cluster (RLlib) or on one machine (Stable-Baselines3) is evaluated
with the same code on the simulator, the device emulator or a real device; only the URL
changes::

    from jointlab.envs.evaluation import evaluate_policy

    result = evaluate_policy("/tmp/rllib_reach/checkpoint", "emulated://arm6", episodes=5)
    print(result.summary())

The environment is the policy's training environment (its id and keywords are read from an
RLlib checkpoint; give ``env_id``/``env_kwargs`` for an SB3 model) built on a robot from
:func:`jointlab.connect`. The backend's control period is set to the training
``control_dt`` (``sim://``: the ``control_dt`` option; ``emulated://``/``serial://``: the
device's stream period), unless the URL sets it, in which case a mismatch is an error. A
robot that starts disarmed (any ``SerialRobot``) is armed first.

Checkpoints are pickles: load only those you trust.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError
from jointlab.extras import check_installed
from jointlab.robots.yaml_io import load_robot

from .env import JointLabEnv
from .policies import Policy, RLlibPolicy, SB3Policy, load_policy
from .registration import ENV_SPECS
from .rllib import SEED_KEY
from .tasks import task_class

__all__ = [
    "EvaluationResult",
    "Policy",
    "PolicyEnv",
    "RLlibPolicy",
    "SB3Policy",
    "evaluate_policy",
    "load_policy",
    "open_backend",
    "policy_env",
    "record_video",
    "wilson_interval",
]

_DEFAULT_ENV = "jointlab/Reach-v0"
_TASKS = {entry.id: entry.task for entry in ENV_SPECS}
#: Keywords that configure a simulated robot built by the env; with a backend URL they
#: configure the backend (``control_dt``, ``dt``) or are checked against it (``robot``).
#: The training ``engine`` is dropped: the URL chooses the engine the policy is tried on.
_BACKEND_KEYS = ("robot", "control_dt", "dt", "backend", "engine")


#: Normal quantile of a two-sided 95 % interval.
Z_95 = 1.959963984540054


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a success probability from ``successes`` of ``trials``.

    Args:
        successes: Number of successes, 0..trials.
        trials: Number of trials; 0 gives ``(0.0, 1.0)`` (nothing is known).
        z: Normal quantile; the default gives a 95 % interval.

    Raises:
        ConfigurationError: counts out of range.
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise ConfigurationError(
            f"wilson_interval needs 0 <= successes <= trials, got {successes} of {trials}"
        )
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * np.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    low = 0.0 if successes == 0 else max(0.0, float(centre - half))
    high = 1.0 if successes == trials else min(1.0, float(centre + half))
    return low, high


@dataclass(frozen=True)
class EvaluationResult:
    """Per-episode outcome of :func:`evaluate_policy`."""

    #: Gymnasium id of the environment.
    env_id: str
    #: The backend URL (or the live robot's repr).
    backend: str
    #: Undiscounted return of each episode. Shape ``(episodes,)``.
    returns: np.ndarray
    #: ``info["is_success"]`` at each episode's last step. Shape ``(episodes,)``, bool.
    successes: np.ndarray
    #: Environment steps of each episode. Shape ``(episodes,)``, int.
    lengths: np.ndarray

    @property
    def success_rate(self) -> float:
        """Fraction of successful episodes, 0..1."""
        return float(np.mean(self.successes)) if self.successes.size else 0.0

    @property
    def success_interval(self) -> tuple[float, float]:
        """Wilson score 95 % interval of the success rate, ``(low, high)`` in 0..1.

        Unlike ``rate ± 1.96·√(rate(1-rate)/n)`` it stays inside 0..1 and is not empty at 0 %
        or 100 % (0 of 100 successes gives 0 to 3.7 %); no episodes gives ``(0, 1)``.
        """
        return wilson_interval(int(np.count_nonzero(self.successes)), int(self.successes.size))

    @property
    def mean_return(self) -> float:
        """Mean undiscounted return."""
        return float(np.mean(self.returns)) if self.returns.size else 0.0

    def summary(self) -> str:
        """One line: episodes, success rate, return mean ± std, on which backend."""
        std = float(np.std(self.returns)) if self.returns.size else 0.0
        return (
            f"{self.env_id} on {self.backend}: {self.returns.size} episodes, success "
            f"{self.success_rate:.0%}, return {self.mean_return:.2f} ± {std:.2f}"
        )


# ---------------------------------------------------------------------------- backend
def open_backend(url: str, control_dt: float, dt: float | None = None) -> Robot:
    """Connect to ``url`` with a control period of ``control_dt`` seconds, armed.

    ``sim://`` gets ``control_dt`` (and ``dt``) as options unless the URL sets them; a robot
    with a stream period (``emulated://``, ``serial://``) gets the number of device ticks
    closest to ``control_dt`` unless the URL sets ``stream_period``.

    Raises:
        ConfigurationError: the resulting period differs from ``control_dt`` (the robot is
            closed again), or ``control_dt`` is not a whole number of device ticks.
    """
    import jointlab
    from jointlab.connection import parse_url

    parsed = parse_url(url)
    query = parsed.query
    options: dict[str, Any] = {}
    if parsed.scheme == "sim":
        if "control_dt" not in query:
            options["control_dt"] = control_dt
        if dt is not None and "dt" not in query:
            options["dt"] = dt
    robot = jointlab.connect(url, **options)
    try:
        if hasattr(robot, "set_stream_period") and "stream_period" not in query:
            robot.set_stream_period(1)
            ticks = control_dt / robot.control_dt
            if abs(ticks - round(ticks)) > 1e-6 or round(ticks) < 1:
                raise ConfigurationError(
                    f"{url}: control_dt={control_dt} s is not a whole number of device ticks "
                    f"of {robot.control_dt} s"
                )
            robot.set_stream_period(round(ticks))
        if abs(robot.control_dt - control_dt) > 1e-9:
            raise ConfigurationError(
                f"{url}: the backend steps every {robot.control_dt} s but the policy was trained "
                f"with control_dt={control_dt} s; remove the period from the URL or make it match"
            )
        if not robot.read().armed:
            robot.arm()
    except BaseException:
        robot.close()
        raise
    return robot


def _check_robot(env_id: str, wanted: Any, robot: Robot, backend: str) -> None:
    name = wanted if wanted is not None else task_class(_TASKS[env_id]).default_robot
    expected = load_robot(name).name if isinstance(name, str | Path) else name.name
    if robot.description.name != expected:
        raise ConfigurationError(
            f"{backend} drives robot {robot.description.name!r} but the "
            f"policy was trained on {expected!r} ({env_id})"
        )


# ---------------------------------------------------------------------------- evaluation
@dataclass
class PolicyEnv:
    """A policy's environment on a backend, as :func:`policy_env` opens it."""

    #: The policy.
    policy: Policy
    #: The environment (wrapped in ``RecordVideo`` when a video folder was given).
    env: gymnasium.Env
    #: The robot it drives.
    robot: Robot
    #: Environment id.
    env_id: str
    #: The backend URL (or the live robot's repr).
    backend: str


@contextmanager
def policy_env(
    policy: Policy | str | Path,
    backend: str | Robot = "sim://arm6",
    *,
    env_id: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    video_folder: str | Path | None = None,
    video_prefix: str | None = None,
) -> Iterator[PolicyEnv]:
    """Open the policy's training environment on ``backend``; close both afterwards.

    Arguments as :func:`evaluate_policy`; ``video_folder`` records every episode to an MP4
    there (Gymnasium's ``RecordVideo``; needs a simulated robot and the ``video`` extra),
    named ``<video_prefix>-episode-<n>.mp4`` (default prefix: the id's name, ``Reach-v0``).

    Raises:
        ConfigurationError: unknown environment, wrong robot, period or observation shape,
            or a video of a robot that cannot be rendered.
    """
    if isinstance(policy, str | Path):
        policy = load_policy(policy)
    env_id = env_id or policy.env_id or _DEFAULT_ENV
    if env_id not in _TASKS:
        hint = difflib.get_close_matches(env_id, list(_TASKS), n=1)
        raise ConfigurationError(
            f"unknown environment {env_id!r}; known: {list(_TASKS)}"
            + (f"; did you mean {hint[0]!r}?" if hint else "")
        )
    if video_folder is not None:  # before a robot starts
        check_installed("video", "recording a video", "moviepy")
    kwargs = dict((policy.env_config or {}) if env_kwargs is None else env_kwargs)
    kwargs.pop(SEED_KEY, None)
    settings = {key: kwargs.pop(key) for key in _BACKEND_KEYS if key in kwargs}
    default_dt = inspect.signature(JointLabEnv).parameters["control_dt"].default
    control_dt = float(settings.get("control_dt", default_dt))
    if isinstance(backend, Robot):
        robot, name, owned = backend, repr(backend), False
    else:
        robot, name, owned = open_backend(backend, control_dt, settings.get("dt")), backend, True
    try:
        _check_robot(env_id, settings.get("robot"), robot, name)
        if abs(robot.control_dt - control_dt) > 1e-9:
            raise ConfigurationError(
                f"{name} steps every {robot.control_dt} s; the policy was "
                f"trained with control_dt={control_dt} s"
            )
        if video_folder is not None:
            if getattr(robot, "world", None) is None:
                raise ConfigurationError(
                    f"a video needs a simulated robot to render; {name} is not one (record "
                    "the episode on sim:// or replay its log there)"
                )
            kwargs["render_mode"] = "rgb_array"
        env = gymnasium.make(env_id, robot=robot, **kwargs)
        try:
            shape = tuple(env.observation_space.shape)
            if policy.observation_shape is not None and policy.observation_shape != shape:
                raise ConfigurationError(
                    f"{env_id} with {kwargs} observes shape {shape}, the policy expects "
                    f"{policy.observation_shape}: pass the training env_kwargs"
                )
            if video_folder is not None:
                env = record_video(env, video_folder, video_prefix or env_id.split("/")[-1])
            yield PolicyEnv(policy, env, robot, env_id, name)
        finally:
            env.close()
    finally:
        if owned:
            robot.close()


def record_video(env: gymnasium.Env, folder: str | Path, prefix: str = "episode") -> gymnasium.Env:
    """Wrap ``env`` in Gymnasium's ``RecordVideo``: every episode to ``folder`` as MP4.

    Raises:
        MissingExtraError: moviepy (the ``video`` extra) is not installed.
    """
    from gymnasium.wrappers import RecordVideo

    check_installed("video", "recording a video", "moviepy")
    return RecordVideo(
        env,
        str(Path(folder).expanduser()),
        episode_trigger=lambda _: True,
        name_prefix=prefix,
        disable_logger=True,
    )


def evaluate_policy(
    policy: Policy | str | Path,
    backend: str | Robot = "sim://arm6",
    *,
    env_id: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    episodes: int = 10,
    seed: int = 0,
    video_folder: str | Path | None = None,
) -> EvaluationResult:
    """Run ``policy`` for ``episodes`` episodes on ``backend`` and score it.

    Args:
        policy: A :class:`Policy` or a checkpoint path for :func:`load_policy` (``~`` is
            expanded).
        backend: A :func:`jointlab.connect` URL, or a live robot (used as is, not closed).
        env_id: Environment id; default: the checkpoint's, else ``"jointlab/Reach-v0"``.
        env_kwargs: Environment keywords (``action_mode``, task weights...); default: the
            checkpoint's ``env_config``. ``seed`` is ignored; ``robot`` is checked against
            the backend's robot; ``control_dt``/``dt`` set the backend's period.
        episodes: Number of episodes.
        seed: Seed of the first reset; later resets continue its stream.
        video_folder: Record every episode as an MP4 in this folder (simulated robots;
            the ``video`` extra).

    Raises:
        ConfigurationError: invalid episodes, wrong robot, period or observation shape.
    """
    if episodes < 1:
        raise ConfigurationError(f"episodes must be >= 1, got {episodes}")
    with policy_env(
        policy, backend, env_id=env_id, env_kwargs=env_kwargs, video_folder=video_folder
    ) as opened:
        returns, successes, lengths = _run(opened.policy, opened.env, episodes, seed)
    return EvaluationResult(
        opened.env_id,
        opened.backend,
        np.array(returns),
        np.array(successes, dtype=bool),
        np.array(lengths, dtype=np.int64),
    )


def _run(
    policy: Policy, env: gymnasium.Env, episodes: int, seed: int
) -> tuple[list[float], list[bool], list[int]]:
    returns, successes, lengths = [], [], []
    for episode in range(episodes):
        observation, info = env.reset(seed=seed if episode == 0 else None)
        policy.begin(observation, env)
        total, steps, done = 0.0, 0, False
        while not done:
            observation, reward, terminated, truncated, info = env.step(policy.act(observation))
            policy.record(observation, float(reward), terminated, truncated)
            total, steps, done = total + float(reward), steps + 1, terminated or truncated
        returns.append(total)
        successes.append(bool(info.get("is_success", False)))
        lengths.append(steps)
    return returns, successes, lengths
