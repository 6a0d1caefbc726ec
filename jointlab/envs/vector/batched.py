"""``BatchedEnv``: N JointLab environments stepped together in one process (Gymnasium 1.x).

Each sub-environment is a full :class:`~jointlab.envs.env.JointLabEnv` (its own robot in its
own world, its own task and ``np_random``), so resets, seeding and episodes are exactly those
of N single environments: ``reset(seed=s)`` seeds sub-environment ``i`` with ``s + i``, as
Gymnasium's ``SyncVectorEnv`` does, and the observations equal N single environments' (a test
checks it). What is batched is everything between the policy and PyBullet's per-body calls:

* the action mapping (``[-1, 1]`` to physical targets) as one ``(N, n)`` expression;
* the torque law at every physics step (:class:`jointlab.sim.batch.BatchStepper`);
* observation, reward and success for tasks that offer ``batch_outcome`` (``Reach``); other
  tasks are asked env by env.

Autoreset follows Gymnasium 1.x: ``autoreset_mode=AutoresetMode.NEXT_STEP`` (default: the
step after an episode ended resets that sub-environment, returns its first observation with
reward 0 and ignores its action) or ``SAME_STEP`` (the reset happens in the step that ended
the episode; the last observation and info are in ``info["final_obs"]`` and
``info["final_info"]``). Episodes are truncated after the registration's
``max_episode_steps``.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from jointlab.errors import ActionError, ConfigurationError
from jointlab.interface import NJointAction

from ..actions import _real_array
from ..env import JointLabEnv
from ..registration import ENV_SPECS, make_env

__all__ = ["BatchedEnv"]

_MAX_STEPS = {entry.id: entry.max_episode_steps for entry in ENV_SPECS}


class BatchedEnv(VectorEnv):
    """``num_envs`` copies of a JointLab environment in one process (module docstring).

    Args:
        env_id: A JointLab id (``"jointlab/Reach-v0"``).
        num_envs: Number of sub-environments.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``SAME_STEP``.
        max_episode_steps: Episode length (default: the id's registration).
        **env_kwargs: Keywords of every :class:`JointLabEnv` (``robot``, ``action_mode``,
            ``engine``...). Robots are built by the environments (no live robots, no GUI) and
            the action mode must be a flat one.
    """

    def __init__(
        self,
        env_id: str = "jointlab/Reach-v0",
        num_envs: int = 8,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        **env_kwargs: Any,
    ) -> None:
        if env_id not in _MAX_STEPS:
            raise ConfigurationError(f"unknown JointLab id {env_id!r}; ids: {list(_MAX_STEPS)}")
        if int(num_envs) < 1:
            raise ConfigurationError(f"num_envs must be >= 1, got {num_envs}")
        if env_kwargs.get("render_mode") == "human" or "backend" in env_kwargs:
            raise ConfigurationError(
                "BatchedEnv builds simulated robots itself: no backend= and no render_mode='human'"
            )
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        if self.autoreset_mode is AutoresetMode.DISABLED:
            raise ConfigurationError("BatchedEnv supports autoreset NEXT_STEP and SAME_STEP")
        self.env_id = env_id
        self.num_envs = int(num_envs)
        self.max_episode_steps = int(max_episode_steps or _MAX_STEPS[env_id])
        self.envs: list[JointLabEnv] = []
        try:
            for _ in range(self.num_envs):
                self.envs.append(make_env(env_id, **env_kwargs))
        except BaseException:
            self.close()
            raise
        first = self.envs[0]
        if first.action_mode == "njoint":
            raise ConfigurationError("BatchedEnv needs a flat action mode, not 'njoint'")
        self.metadata = {**first.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = first.render_mode
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(first.observation_space, self.num_envs)
        self.action_space = batch_space(first.action_space, self.num_envs)
        self.stepper = _stepper([env.robot for env in self.envs])
        adapter = first.actions
        self._fields, self._dof = adapter.fields, adapter.dof
        self._low, self._half_span = adapter.low, adapter._half_span
        nan, zeros = np.full(self._dof, np.nan), np.zeros(self._dof)
        nan.setflags(write=False)
        zeros.setflags(write=False)
        #: Per NJointAction field: its index in the action's fields (or None) and default.
        self._columns = [
            (self._fields.index(name) if name in self._fields else None, default)
            for name, default in (
                ("torque", zeros),
                ("position", nan),
                ("position_kp", nan),
                ("position_kd", nan),
                ("velocity", nan),
            )
        ]
        self._layout = first.observation_layout
        self._batch_outcome = getattr(type(first.task), "batch_outcome", None)
        self._simple_observation = not (first._observe_torque or first._observe_previous_action)
        self._elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self._actions_shape = (self.num_envs, *self.single_action_space.shape)
        #: Whether the task does something before each step (Task.before_step overridden).
        self._before_step = first._task_before_step
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        self._started = False

    # ------------------------------------------------------------------ Gymnasium API
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-environment; ``seed`` as in ``SyncVectorEnv`` (``s + i``)."""
        seeds = sub_seeds(seed, self.num_envs)
        observations = np.empty(
            (self.num_envs, *self.single_observation_space.shape), dtype=np.float32
        )
        for i, (env, s) in enumerate(zip(self.envs, seeds, strict=True)):
            observations[i], _ = env.reset(seed=s, options=options)
        self._elapsed[:] = 0
        self._needs_reset[:] = False
        self._started = True
        return observations, {}

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-environment with its row of ``actions`` (autoreset as documented)."""
        if not self._started:
            raise ConfigurationError("call reset() before step()")
        array, within = check_actions(actions, self._actions_shape, self.envs[0].action_mode)
        n = self.num_envs
        observations = np.empty((n, *self.single_observation_space.shape), dtype=np.float32)
        rewards = np.zeros(n)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        info = self.step_checked(array, within, observations, rewards, terminated, truncated)
        return observations, rewards, terminated, truncated, info

    def step_checked(
        self,
        array: np.ndarray,
        within: bool,
        observations: np.ndarray,
        rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
    ) -> dict[str, Any]:
        """:meth:`step` of actions :func:`check_actions` accepted, into the caller's arrays.

        For :class:`~jointlab.envs.vector.AsyncBatchedEnv`, whose processes write straight
        into shared memory: ``array`` and ``within`` are what :func:`check_actions` returned
        for this env's action shape; ``observations`` (float32) is overwritten, ``rewards``
        must hold zeros and ``terminated`` and ``truncated`` False (rows of environments
        that reset in this step keep them). Returns the step's ``info``.
        """
        if not self._started:
            raise ConfigurationError("call reset() before step()")
        n = self.num_envs
        resetting = self._needs_reset.copy()
        stepping = np.flatnonzero(~resetting)
        for i in np.flatnonzero(resetting):
            observations[i], _ = self.envs[i].reset()
            self._elapsed[i] = 0
        info: dict[str, Any] = {}
        if stepping.size:
            rows = slice(None) if stepping.size == n else stepping  # a slice is cheaper
            self._step_some(
                stepping, rows, array[rows], within, observations, rewards, terminated, info
            )
            self._elapsed[rows] += 1
            truncated[rows] = self._elapsed[rows] >= self.max_episode_steps
        done = terminated | truncated
        if self.autoreset_mode is AutoresetMode.SAME_STEP and done.any():
            final_obs = np.empty(n, dtype=object)
            for i in np.flatnonzero(done):
                final_obs[i] = observations[i].copy()
            info["final_obs"], info["_final_obs"] = final_obs, done.copy()
            info["final_info"] = {
                k: v for k, v in info.items() if not k.startswith(("final", "_final"))
            }
            info["_final_info"] = done.copy()
            for i in np.flatnonzero(done):
                observations[i], _ = self.envs[i].reset()
                self._elapsed[i] = 0
        else:
            self._needs_reset = done
        return info

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-environment (their robots and worlds)."""
        for env in getattr(self, "envs", []):
            env.close()

    def render(self) -> tuple[np.ndarray, ...] | None:
        """Each sub-environment's ``rgb_array`` image, or None without a render mode."""
        if self.render_mode != "rgb_array":
            return None
        return tuple(env.render() for env in self.envs)

    # ------------------------------------------------------------------ the batch
    def _to_actions(self, values: np.ndarray) -> list[NJointAction]:
        """One action per row of physical ``values`` (``(n, len(fields) * dof)``).

        Position mode builds plain ``Position(q)`` actions through the trusted factory, as a
        single environment's ``ActionAdapter.convert`` does (the rows were checked and mapped
        into the joints' bounds already; the drive takes its one-multiplication path); other
        modes fill absent fields with the ``NJointAction`` defaults.
        """
        if self._fields == ("position",):
            return [NJointAction.position_from_validated(row) for row in values]
        dof = self._dof
        columns = [
            values[:, k * dof : (k + 1) * dof] if k is not None else repeat(default)
            for k, default in self._columns
        ]
        # strict=False: repeat() is endless
        return [NJointAction.from_validated(*parts) for parts in zip(*columns, strict=False)]

    def _step_some(
        self,
        which: np.ndarray,
        rows: np.ndarray | slice,
        actions: np.ndarray,
        within: bool,
        observations: np.ndarray,
        rewards: np.ndarray,
        terminated: np.ndarray,
        info: dict[str, Any],
    ) -> None:
        """Apply, step and observe the sub-environments ``which`` (rows of ``actions``).

        ``rows`` indexes them in the batch arrays: ``which`` itself, or ``slice(None)`` when
        ``which`` is every sub-environment. ``within``: every action of the batch is in
        ``[-1, 1]`` (:func:`check_actions`), so none is clipped.
        """
        clipped = np.zeros(self.num_envs, dtype=np.int64)
        if not within:  # NaN and inf were refused by check_actions
            limited = np.minimum(np.maximum(actions, -1.0), 1.0)
            clipped[rows] = np.count_nonzero(limited != actions, axis=1)
            actions = limited
        values = self._low + (actions + 1.0) * self._half_span
        envs = [self.envs[i] for i in which]
        before_step = self._before_step
        for env, action in zip(envs, self._to_actions(values), strict=True):
            if before_step:
                env.task.before_step(env.np_random)
            env.robot.apply(action)
            env._last_action = action
        stacked = self.stepper(which)
        states = [env.robot.read() for env in envs]
        for env, state, count in zip(envs, states, clipped[rows].tolist(), strict=True):
            env.state = state
            env._clipped_total += count
        if self._batch_outcome is not None and self._simple_observation:
            if stacked is None:  # torques: stacked by batch_outcome if its reward needs them
                stacked = (
                    np.array([s.position for s in states]),
                    np.array([s.velocity for s in states]),
                    None,
                )
            outcome = self._batch_outcome([env.task for env in envs], states, *stacked[::2])
            observations[rows] = self._layout.build_batch([*stacked[:2], *outcome.parts])
            rewards[rows] = outcome.reward
            terminated[rows] = outcome.terminated
            details = outcome.info
        else:
            details = {}
            for k, (i, env, state) in enumerate(zip(which, envs, states, strict=True)):
                observations[i] = env._observation(state)
                outcome = env.task.evaluate(state, env._last_action)
                rewards[i], terminated[i] = outcome.reward, outcome.terminated
                entries = {**outcome.info, **{f"reward_{t}": v for t, v in outcome.terms.items()}}
                for key, value in entries.items():
                    details.setdefault(key, [None] * len(which))[k] = value
            details = {key: np.array(values) for key, values in details.items()}
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[rows] = True
        for key, values in details.items():
            if isinstance(rows, np.ndarray):
                full = np.zeros(self.num_envs, dtype=np.asarray(values).dtype)
                full[rows] = values
                values = full
            info[key], info[f"_{key}"] = values, mask
        info["action_clipped"], info["_action_clipped"] = clipped, mask


def check_actions(actions: Any, shape: tuple[int, ...], mode: str) -> tuple[np.ndarray, bool]:
    """``actions`` as a float64 array of ``shape`` (one row per environment), all finite.

    Returns:
        The array, and whether every value lies in ``[-1, 1]`` (one reduction answers both
        questions in the common case; the finiteness check runs only when it does not).

    Raises:
        ActionError: text, complex numbers or objects; another shape; NaN or infinite values
            (naming the environments).
    """
    array = _real_array(actions, mode)  # no text, complex, objects
    if array.shape != shape:
        raise ActionError(
            f"actions have shape {array.shape}, expected {shape} (one row per environment)"
        )
    within = bool(np.abs(array).max() <= 1.0)  # False for NaN and inf too
    if not within and not np.isfinite(array).all():
        bad = np.flatnonzero(~np.isfinite(array).reshape(shape[0], -1).all(axis=1)).tolist()
        raise ActionError(f"actions of environments {bad} are NaN or infinite")
    return array, within


def sub_seeds(seed: int | list[int | None] | None, count: int) -> list[int | None]:
    """Seeds of ``count`` sub-environments: ``seed + i`` (as ``SyncVectorEnv``), or a list."""
    if seed is None or isinstance(seed, (int, np.integer)):
        return [None if seed is None else int(seed) + i for i in range(count)]
    seeds = list(seed)
    if len(seeds) != count:
        raise ConfigurationError(f"{len(seeds)} seeds for {count} environments")
    return seeds


def _stepper(robots: list[Any]) -> Any:
    """``step(which)`` for these robots: batched on simulated robots, one by one otherwise.

    ``step`` returns the stacked positions, velocities and torques the robots' states now
    report (three ``(N, dof)`` arrays, from :meth:`BatchStepper.step` and
    :attr:`BatchStepper.torque`), or ``None``.
    """
    from jointlab.sim import SimRobot
    from jointlab.sim.batch import BatchStepper

    if all(isinstance(robot, SimRobot) for robot in robots):
        steppers: dict[tuple[int, ...], BatchStepper] = {}

        def step(which: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
            key = tuple(which.tolist())
            stepper = steppers.get(key)
            if stepper is None:
                if len(steppers) > 64:  # subsets vary only while episodes end out of step
                    steppers.clear()
                stepper = steppers[key] = BatchStepper([robots[i] for i in key])
            stacked = stepper.step()
            return None if stacked is None else (*stacked, stepper.torque)

        return step

    def step_each(which: np.ndarray) -> None:
        for i in which:
            robots[i].step()
        return None

    return step_each
