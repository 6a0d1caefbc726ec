"""Tasks: the reset distribution, observation parts, reward and termination of an env."""

from __future__ import annotations

import difflib

from jointlab.errors import ConfigurationError

from .base import Outcome, Task
from .hold import Hold, PushEvent
from .kinematics import ChainKinematics, workspace_radius
from .push import Push
from .reach import Reach
from .tracking import JointTracking, SineReference

__all__ = [
    "TASKS",
    "ChainKinematics",
    "Hold",
    "JointTracking",
    "Outcome",
    "Push",
    "PushEvent",
    "Reach",
    "SineReference",
    "Task",
    "task_class",
    "workspace_radius",
]

#: Task name -> class, for ``JointLabEnv(task="reach")``.
TASKS: dict[str, type[Task]] = {
    "reach": Reach,
    "joint_tracking": JointTracking,
    "hold": Hold,
    "push": Push,
}


def task_class(name: str) -> type[Task]:
    """The task class called ``name`` (see :data:`TASKS`), with a suggestion when unknown.

    Raises:
        ConfigurationError: ``name`` is not a known task.
    """
    if name in TASKS:
        return TASKS[name]
    hint = difflib.get_close_matches(str(name).lower(), TASKS, n=1)
    suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
    raise ConfigurationError(f"unknown task {name!r}; expected one of {list(TASKS)}{suggestion}")
