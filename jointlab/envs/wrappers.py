"""Wrappers for sim-to-real work: domain randomisation, observation noise, action latency.

All randomness comes from the wrapped environment's ``np_random``, so ``reset(seed=...)``
still reproduces episodes exactly.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from jointlab.errors import ConfigurationError

from .env import JointLabEnv

__all__ = ["ActionLatency", "DomainRandomization", "ObservationNoise"]


def _base(env: gymnasium.Env) -> JointLabEnv:
    base = env.unwrapped
    if not isinstance(base, JointLabEnv):
        raise ConfigurationError(
            f"this wrapper needs a JointLabEnv underneath, got {type(base).__name__}"
        )
    return base


class DomainRandomization(gymnasium.Wrapper):
    """Draw new physical parameters at every reset (a ``jointlab.sim.Randomization``).

    The robot is reset with ``randomize=True``; the draw uses the robot's generator, which
    the environment reseeds from its ``np_random`` at every reset, so episodes stay
    reproducible. The drawn parameters (``SimRobot.episode``, an ``EpisodeParameters``) are
    reported in ``info["randomization"]``.

    Args:
        env: An environment whose base is a :class:`JointLabEnv` on a simulated robot.
        randomization: The ranges to draw from. None uses the ranges the environment was
            built with (``gymnasium.make(id, randomization=...)``); a new one needs a robot
            whose ``randomization`` can be set.
    """

    def __init__(self, env: gymnasium.Env, randomization: Any = None) -> None:
        super().__init__(env)
        base = _base(env)
        robot = base.robot
        if not hasattr(robot, "episode"):
            raise ConfigurationError(
                f"DomainRandomization needs a simulated robot; {type(robot).__name__} cannot "
                "randomise its physics"
            )
        if randomization is None:
            randomization = base.randomization
            if randomization is None:
                raise ConfigurationError(
                    "DomainRandomization: give the ranges (a jointlab.sim.Randomization) here "
                    "or to the environment (randomization=...)"
                )
        elif randomization is not base.randomization:
            setter = getattr(type(robot), "randomization", None)
            if not isinstance(setter, property) or setter.fset is None:
                raise ConfigurationError(
                    f"DomainRandomization: {type(robot).__name__} cannot change its ranges "
                    "after construction; build the environment with randomization=... instead"
                )
            robot.randomization = randomization
        base.randomization = randomization
        self.randomization = randomization

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset with freshly drawn parameters; report them in ``info["randomization"]``."""
        observation, info = self.env.reset(seed=seed, options=options)
        info["randomization"] = _base(self.env).robot.episode
        return observation, info


class ObservationNoise(gymnasium.ObservationWrapper):
    """Add zero-mean Gaussian noise to named observation parts (sensor noise).

    Args:
        env: An environment whose base is a :class:`JointLabEnv`.
        std: Standard deviation in the units of each part: one number for every part in
            ``parts``, or a mapping part name -> std.
        parts: Parts the single ``std`` applies to (ignored when ``std`` is a mapping).
            Defaults to the joint measurements ``("position", "velocity")``.
    """

    def __init__(
        self,
        env: gymnasium.Env,
        std: float | Mapping[str, float] = 0.01,
        parts: Sequence[str] = ("position", "velocity"),
    ) -> None:
        super().__init__(env)
        layout = _base(env).observation_layout
        stds = dict(std) if isinstance(std, Mapping) else {p: float(std) for p in parts}
        unknown = [p for p in stds if p not in layout.slices]
        if unknown:
            raise ConfigurationError(
                f"ObservationNoise: unknown observation part(s) {unknown}; known: "
                f"{list(layout.names)}"
            )
        if any(v < 0 for v in stds.values()):
            raise ConfigurationError(f"ObservationNoise: std must be >= 0, got {stds}")
        sigma = np.zeros(layout.space.shape[0])
        for name, value in stds.items():
            sigma[layout.slices[name]] = value
        self.sigma = sigma
        self._low = layout.space.low.astype(np.float64)
        self._high = layout.space.high.astype(np.float64)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        """The observation plus noise, clipped into the observation space."""
        noisy = observation + self.sigma * self.np_random.standard_normal(self.sigma.shape[0])
        return np.clip(noisy, self._low, self._high).astype(np.float32)


class ActionLatency(gymnasium.Wrapper):
    """Delay actions by a whole number of environment steps (a slow link or controller).

    The action passed to ``step`` is applied ``steps`` steps later; until then the queue
    holds actions that keep the pose of the reset state (zero torque in torque mode). The
    action actually applied is in ``info["applied_action"]``.

    Args:
        env: An environment whose base is a :class:`JointLabEnv`.
        steps: Delay in environment steps (0 = no delay).
    """

    def __init__(self, env: gymnasium.Env, steps: int = 1) -> None:
        super().__init__(env)
        if int(steps) != steps or steps < 0:
            raise ConfigurationError(f"ActionLatency steps must be an integer >= 0, got {steps}")
        self.steps = int(steps)
        self._queue: deque[Any] = deque()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset and fill the queue with pose-holding actions."""
        observation, info = self.env.reset(seed=seed, options=options)
        base = _base(self.env)
        hold = base.actions.hold(base.state)
        self._queue = deque([hold] * self.steps)
        return observation, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """Queue ``action`` and apply the one from ``steps`` steps ago."""
        self._queue.append(action)
        applied = self._queue.popleft()
        observation, reward, terminated, truncated, info = self.env.step(applied)
        info["applied_action"] = applied
        return observation, reward, terminated, truncated, info
