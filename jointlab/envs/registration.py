"""Gymnasium ids of the JointLab environments, registered on ``import jointlab.envs``.

=============================  ================  ==================  =================
id                             task              default robot       max_episode_steps
=============================  ================  ==================  =================
``jointlab/Reach-v0``          :class:`Reach`    ``arm6``            50
``jointlab/JointTracking-v0``  JointTracking     ``planar2``         200
``jointlab/Hold-v0``           :class:`Hold`     ``arm6``            150
``jointlab/Push-v0``           :class:`Push`     ``planar2``         150
=============================  ================  ==================  =================

Each takes every :class:`~jointlab.envs.env.JointLabEnv` keyword (``robot=``,
``action_mode=``, ``control_dt=``, ``render_mode=`` ...) plus the task's keywords. Errors
raised while building an environment are re-raised with the id and the keywords.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium

from jointlab.errors import JointLabError

from .env import JointLabEnv

__all__ = ["ENV_SPECS", "EnvEntry", "make_env", "register_envs"]


@dataclass(frozen=True)
class EnvEntry:
    """One registered environment."""

    #: Gymnasium id.
    id: str
    #: Task name (a key of :data:`jointlab.envs.tasks.TASKS`).
    task: str
    #: Episode length in environment steps (Gymnasium's ``TimeLimit``).
    max_episode_steps: int


ENV_SPECS: tuple[EnvEntry, ...] = (
    EnvEntry("jointlab/Reach-v0", "reach", 50),
    EnvEntry("jointlab/JointTracking-v0", "joint_tracking", 200),
    EnvEntry("jointlab/Hold-v0", "hold", 150),
    EnvEntry("jointlab/Push-v0", "push", 150),
)
_BY_ID = {entry.id: entry for entry in ENV_SPECS}


def make_env(env_id: str, **kwargs: Any) -> JointLabEnv:
    """Build the environment registered as ``env_id`` (without Gymnasium's wrappers).

    Raises:
        JointLabError: any construction error, re-raised as the same type with the id and
            keywords in its message.
    """
    entry = _BY_ID[env_id]
    try:
        return JointLabEnv(task=entry.task, **kwargs)
    except JointLabError as exc:
        raise type(exc)(f"{env_id} with {kwargs}: {exc}") from exc


def _make_reach(**kwargs: Any) -> JointLabEnv:
    return make_env("jointlab/Reach-v0", **kwargs)


def _make_joint_tracking(**kwargs: Any) -> JointLabEnv:
    return make_env("jointlab/JointTracking-v0", **kwargs)


def _make_hold(**kwargs: Any) -> JointLabEnv:
    return make_env("jointlab/Hold-v0", **kwargs)


def _make_push(**kwargs: Any) -> JointLabEnv:
    return make_env("jointlab/Push-v0", **kwargs)


_ENTRY_POINTS = {
    "reach": _make_reach,
    "joint_tracking": _make_joint_tracking,
    "hold": _make_hold,
    "push": _make_push,
}


def register_envs() -> None:
    """Register every id of :data:`ENV_SPECS` with Gymnasium (idempotent)."""
    for entry in ENV_SPECS:
        if entry.id in gymnasium.registry:
            continue
        gymnasium.register(
            id=entry.id,
            entry_point=f"{__name__}:{_ENTRY_POINTS[entry.task].__name__}",
            max_episode_steps=entry.max_episode_steps,
        )
