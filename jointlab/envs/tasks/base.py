"""The task interface: what an environment asks of its task.

A task is the only part of an environment that differs between ``Reach``, ``JointTracking``,
``Hold`` and ``Push``: its reset distribution, its observation parts, its reward and its
termination. It owns no physics: it talks to the :class:`~jointlab.contract.Robot` (and, for
tasks with objects, to the simulator's ``World`` through the robot), never to PyBullet.

The environment calls, in order::

    task.bind(robot)                       # once, at construction
    q, qd = task.reset(rng, options)       # at every reset, before the robot is reset
    task.after_reset(state)                # the robot is at q, qd; objects can be placed
    loop:
        task.before_step(rng)              # e.g. external pushes, before the physics runs
        ... robot.apply(action); robot.step(); state = robot.read()
        parts = task.observe(state)        # the task's observation parts
        outcome = task.evaluate(state, action)  # the env's step: task.evaluate_into
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError, quote
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.description import RobotDescription

from .kinematics import ChainKinematics
from .observations import ObservationPart

__all__ = [
    "GOAL_RGBA",
    "REWARD_KEYS",
    "TARGET_RGBA",
    "BatchOutcome",
    "Marker",
    "Outcome",
    "Task",
    "effort_penalty",
    "option_vector",
]

#: ``info`` keys of the common reward terms (built once, not at every step).
REWARD_KEYS = {
    name: f"reward_{name}"
    for name in ("distance", "success", "effort", "sparse", "position", "velocity", "goal", "reach")
}
#: Colour of goal markers (where something should end up), RGBA.
GOAL_RGBA = (0.15, 0.8, 0.25, 0.55)
#: Colour of target markers (a moving or held reference), RGBA.
TARGET_RGBA = (0.2, 0.45, 0.95, 0.7)


@dataclass(frozen=True)
class Outcome:
    """A task's verdict on one step."""

    #: Total reward (the weighted sum of ``terms``).
    reward: float
    #: Weighted reward terms, each already multiplied by its weight (they sum to ``reward``).
    terms: dict[str, float]
    #: True when the episode ended by the task's own rule (success or failure).
    terminated: bool
    #: Extra step information, always with ``is_success``.
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def trusted(
        cls, reward: float, terms: dict[str, float], terminated: bool, info: dict[str, Any]
    ) -> Outcome:
        """An Outcome from values of the right types, without the dataclass machinery.

        The per-step path of a task (a frozen dataclass's ``__init__`` costs about 1 µs):
        ``reward`` a float, ``terminated`` a bool, ``info`` a new dict.
        """
        outcome = object.__new__(cls)
        outcome.__dict__.update(reward=reward, terms=terms, terminated=terminated, info=info)
        return outcome


@dataclass(frozen=True)
class BatchOutcome:
    """A task's observation parts and verdicts for N environments' steps (batched envs)."""

    #: The task's observation parts, each of shape ``(N, part.size)``, in part order.
    parts: list[np.ndarray]
    #: Rewards, shape ``(N,)``.
    reward: np.ndarray
    #: Terminations, shape ``(N,)``.
    terminated: np.ndarray
    #: Per-step details (``is_success``, reward terms as ``reward_<term>``...), each ``(N,)``.
    info: dict[str, np.ndarray]


@dataclass(frozen=True)
class Marker:
    """A goal or target the environment draws in renders and the GUI (it has no physics)."""

    #: Name, unique within the task.
    name: str
    #: Centre in the world frame, metres, shape ``(3,)``.
    position: np.ndarray
    #: Sphere or disc radius, metres.
    radius: float = 0.03
    #: Colour, four numbers in [0, 1].
    rgba: tuple[float, float, float, float] = GOAL_RGBA
    #: ``"sphere"`` or ``"disc"`` (flat, for goals on the ground).
    shape: str = "sphere"


def effort_penalty(state: ArrayState, effort_limit: np.ndarray) -> float:
    """Mean squared applied torque as a fraction of the effort limit (dimensionless, 0..1)."""
    return float(np.mean(np.square(state.torque / effort_limit)))


def option_vector(options: dict[str, Any] | None, key: str, size: int) -> np.ndarray | None:
    """Read a float vector of ``size`` elements from reset ``options`` (None when absent).

    Raises:
        ConfigurationError: the value has the wrong shape or is not finite.
    """
    if not options or options.get(key) is None:
        return None
    try:
        value = np.asarray(options[key])
    except (TypeError, ValueError, OverflowError):
        value = np.asarray(None)
    if value.dtype.kind not in "biuf":
        value = np.full(0, np.nan)
    value = value.astype(np.float64)
    if value.shape != (size,) or not np.isfinite(value).all():
        raise ConfigurationError(
            f"reset option {key!r} must be {size} finite numbers, got {quote(options[key])}"
        )
    return value


class Task(abc.ABC):
    """Base class of the tasks. Subclasses take their weights as keyword arguments."""

    #: Built-in robot used when the environment is given none.
    default_robot: ClassVar[str] = "arm6"
    #: Reset option keys the task understands (besides the env's own ``q`` and ``qd``).
    option_keys: ClassVar[tuple[str, ...]] = ()

    robot: Robot
    description: RobotDescription

    def bind(self, robot: Robot) -> None:
        """Attach the task to its robot (once, before the first reset)."""
        self.robot = robot
        self.description = robot.description

    @property
    def control_dt(self) -> float:
        """The environment step in seconds."""
        return float(self.robot.control_dt)

    @abc.abstractmethod
    def observation_parts(self) -> list[ObservationPart]:
        """The task's observation parts (after the joint-space parts), with bounds."""

    @abc.abstractmethod
    def reset(
        self, rng: np.random.Generator, options: dict[str, Any] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sample a new episode; return the initial joint positions and velocities.

        Args:
            rng: The environment's ``np_random``; the only source of randomness.
            options: The ``options`` given to ``env.reset``.

        Returns:
            ``(q, qd)``, each of shape ``(dof,)``, in rad (m) and rad/s (m/s).
        """

    def after_reset(self, state: ArrayState) -> None:  # noqa: B027 - optional hook
        """Called once the robot is at its initial state (place objects here)."""

    def before_step(self, rng: np.random.Generator) -> None:  # noqa: B027 - optional hook
        """Called before each environment step's physics (apply disturbances here)."""

    @abc.abstractmethod
    def observe(self, state: ArrayState) -> list[np.ndarray]:
        """Values of :meth:`observation_parts` for ``state`` (same order and sizes)."""

    @abc.abstractmethod
    def evaluate(self, state: ArrayState, action: NJointAction) -> Outcome:
        """Reward, termination and info for the step that ended in ``state``."""

    def evaluate_into(
        self, state: ArrayState, action: NJointAction, info: dict[str, Any]
    ) -> tuple[float, bool]:
        """:meth:`evaluate`, written into an environment step's ``info``.

        Adds ``outcome.info``'s entries, then each reward term as ``reward_<term>``, in
        that order, and returns ``(reward, terminated)``. A task may override it with a
        path that builds no :class:`Outcome` (the environment's step calls it); the
        entries, their order and the values must stay those of :meth:`evaluate`.
        """
        outcome = self.evaluate(state, action)
        info.update(outcome.info)
        keys = REWARD_KEYS
        for name, value in outcome.terms.items():
            info[keys.get(name) or f"reward_{name}"] = value
        return outcome.reward, outcome.terminated

    def markers(self) -> list[Marker]:
        """Goals and targets to draw in renders (called before each rendered frame)."""
        return []

    def tool_markers(self, q: np.ndarray, rgba: tuple[float, ...] = TARGET_RGBA) -> list[Marker]:
        """One marker per tool frame of the robot at joint positions ``q`` (rad or m)."""
        chains = getattr(self, "_tool_chains", None)
        if chains is None:
            chains = [ChainKinematics(self.description, t) for t in self.description.tool_names]
            self._tool_chains = chains
        return [
            Marker(f"target {chain.frame}", chain.position(q), radius=0.025, rgba=rgba)
            for chain in chains
        ]  # type: ignore[arg-type]

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release anything the task created (objects in the world)."""

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        """The keyword arguments the task's constructor accepts."""
        import inspect

        return tuple(
            name
            for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self" and p.kind is inspect.Parameter.KEYWORD_ONLY
        )
