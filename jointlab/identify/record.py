"""Running an excitation (or any program) on a robot and recording what identification needs."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jointlab.contract import Robot
from jointlab.identify.excite import Excitation
from jointlab.identify.planted import physics_dt
from jointlab.program import ProgramStep, run_program
from jointlab.recording import LogMetadata, Recorder

__all__ = ["record_excitation"]


def record_excitation(
    robot: Robot,
    program: Excitation | Sequence[Any] | str | os.PathLike[str],
    path: str | os.PathLike[str],
    *,
    on_step: Callable[[int, ProgramStep], None] | None = None,
    **extra: Any,
) -> Path:
    """Run ``program`` on ``robot`` (any backend) and record it to ``path`` for :func:`fit`.

    The log holds, every control period, the state, the desired action and the applied
    torque (see :func:`jointlab.controllers.run`), and in its metadata the physics step (or
    device tick) that ``motor.delay`` counts, the excitation's settings and ``extra``.

    Args:
        robot: The robot; armed here if it is not.
        program: An :class:`Excitation`, or any command program (list, YAML text or file).
        path: Log file; ``.npz``, ``.csv`` or ``.parquet``.
        on_step: Called with ``(index, step)`` before each program step (progress).
        **extra: JSON values stored in the log's metadata (e.g. the backend URL).

    Returns:
        The log path.
    """
    settings: dict[str, Any] = {"physics_dt": physics_dt(robot), **extra}
    steps = program
    if isinstance(program, Excitation):
        settings["excitation"] = program.settings()
        steps = program.program
    if isinstance(steps, os.PathLike):
        steps = Path(steps)
    metadata = LogMetadata.from_robot(robot, **settings)
    with Recorder(path, metadata) as recorder:
        run_program(robot, steps, recorder=recorder, on_step=on_step)
    return Path(path)
