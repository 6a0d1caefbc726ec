"""Gymnasium ids of the manipulation tasks, registered on ``import jointlab.envs``.

============================  ==============  ===============  =================
id                            task            default robot    max_episode_steps
============================  ==============  ===============  =================
``jointlab/Lift-v0``          :class:`Lift`   ``so101``        50
``jointlab/Push-v1``          :class:`Push`   ``so101``        80
``jointlab/PickPlace-v0``     PickPlace       ``so101``        80
``jointlab/Stack-v0``         :class:`Stack`  ``so101``        120
============================  ==============  ===============  =================

Each takes every :class:`ManipulationEnv` keyword (``robot=``, ``engine=``,
``action_space=``, ``reward_type=`` ...). ``jointlab/Push-v1`` supersedes the planar2
``jointlab/Push-v0`` (a box pushed by a two-link arm's links, kept for its stored results).
"""

from __future__ import annotations

from typing import Any

import gymnasium

from jointlab.errors import JointLabError

from .env import ManipulationEnv
from .goals import GOAL_TASKS

__all__ = ["MANIPULATION_IDS", "make_manipulation_env", "register_manipulation_envs"]

#: Gymnasium id -> task name (a key of :data:`GOAL_TASKS`).
MANIPULATION_IDS: dict[str, str] = {cls.env_id: name for name, cls in GOAL_TASKS.items()}


def make_manipulation_env(env_id: str, **kwargs: Any) -> ManipulationEnv:
    """Build the environment registered as ``env_id`` (without Gymnasium's wrappers).

    Raises:
        JointLabError: any construction error, re-raised as the same type with the id and
            keywords in its message.
    """
    task = MANIPULATION_IDS[env_id]
    try:
        return ManipulationEnv(task, **kwargs)
    except JointLabError as exc:
        raise type(exc)(f"{env_id} with {kwargs}: {exc}") from exc


def _make_lift(**kwargs: Any) -> ManipulationEnv:
    return make_manipulation_env("jointlab/Lift-v0", **kwargs)


def _make_push(**kwargs: Any) -> ManipulationEnv:
    return make_manipulation_env("jointlab/Push-v1", **kwargs)


def _make_pick_place(**kwargs: Any) -> ManipulationEnv:
    return make_manipulation_env("jointlab/PickPlace-v0", **kwargs)


def _make_stack(**kwargs: Any) -> ManipulationEnv:
    return make_manipulation_env("jointlab/Stack-v0", **kwargs)


_ENTRY_POINTS = {
    "lift": _make_lift,
    "push": _make_push,
    "pick_place": _make_pick_place,
    "stack": _make_stack,
}


def register_manipulation_envs() -> None:
    """Register every id of :data:`MANIPULATION_IDS` with Gymnasium (idempotent)."""
    for env_id, task in MANIPULATION_IDS.items():
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=env_id,
            entry_point=f"{__name__}:{_ENTRY_POINTS[task].__name__}",
            max_episode_steps=GOAL_TASKS[task].max_episode_steps,
        )
