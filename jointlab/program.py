"""Command programs: a YAML list of Commander commands that runs on any backend.

The format is documented in ``docs/programs.md``; examples are in ``examples/programs/``.
A program is a list of one-key mappings ``{verb: arguments}``. Verbs are the Commander's
(``home``, ``set_position``, ``set_positions``, ``set_velocity``, ``set_velocities``,
``set_effort``, ``set_current``, ``set_currents``, ``follow_trajectory``, ``hold``, ``stop``,
``configure_speed``, ``configure_accel``, ``power``, ``brakes``) plus ``wait: SECONDS``.
Each motion command runs until it is done; ``for: SECONDS`` bounds it instead (needed for
open-ended commands such as ``hold``)::

    - home: {}
    - follow_trajectory:
        waypoints:
          - {position: [0.0, 0.4, 1.0, 0.0, 0.8, 0.0], time_from_start: 0.0}
          - {position: [0.4, 0.2, 1.2, 0.2, 0.6, 0.0], time_from_start: 1.5}
    - set_positions: {positions: [0.3, 0.6, 0.8, 0.0, 0.5, 0.2]}
    - hold: {for: 0.5}
    - stop: {mode: decelerate}

The same file runs on ``sim://``, ``emulated://`` and ``serial://`` backends.
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.bounded_yaml import load_yaml, read_text
from jointlab.contract import Robot
from jointlab.controllers import Commander, RunSummary, run
from jointlab.errors import ConfigurationError, JointLabError, quote
from jointlab.faults import FaultRule
from jointlab.program_checks import check_shapes, check_values
from jointlab.robots.description import RobotDescription

VERBS = (
    "home",
    "set_position",
    "set_positions",
    "set_velocity",
    "set_velocities",
    "set_effort",
    "set_current",
    "set_currents",
    "follow_trajectory",
    "hold",
    "stop",
    "configure_speed",
    "configure_accel",
    "power",
    "brakes",
    "wait",
)
#: Robot-time limit of one step that does not say ``for:``, seconds.
DEFAULT_STEP_TIMEOUT = 30.0


@dataclass(frozen=True)
class ProgramStep:
    """One command of a program."""

    verb: str
    arguments: dict[str, Any]
    #: Run for this long (seconds) instead of until the command is done.
    duration: float | None = None


#: A parsed program: its steps in order.
Program = list[ProgramStep]


@dataclass(frozen=True)
class StepResult:
    """What one step did."""

    step: ProgramStep
    summary: RunSummary | None
    #: Peak |applied torque| over the step, N·m or N (NaN if the step ran no ticks).
    peak_torque: float


def load_program(source: str | Path | Sequence[Any]) -> Program:
    """Parse and validate a program from a YAML file path, YAML text or a loaded list.

    Every step is checked before anything runs: its verb, its argument names against the
    Commander method's (with a suggestion for a typo), required arguments, and durations
    (``wait``, ``for``) > 0 s. Values are checked by the Commander when the step runs.
    A list of :class:`ProgramStep` (an already parsed program) is returned as it is.

    Raises:
        ConfigurationError: an unreadable file or an invalid step (names the file, the step
            index, the verb and the argument).
    """
    if (
        isinstance(source, Sequence)
        and not isinstance(source, str)
        and source
        and all(isinstance(step, ProgramStep) for step in source)
    ):
        return list(source)
    where = "<program>"
    data: Any = source
    if isinstance(source, Path) or (isinstance(source, str) and source.endswith((".yaml", ".yml"))):
        where = quote(str(source), 200)[1:-1]
        data = load_yaml(
            read_text(source, "program", ConfigurationError), where, ConfigurationError
        )
    elif isinstance(source, str):
        data = load_yaml(source, where, ConfigurationError)
    if not isinstance(data, list) or not data:
        raise ConfigurationError(f"{where}: a program is a non-empty list of {{verb: args}}")
    steps = []
    for index, item in enumerate(data):
        if not isinstance(item, Mapping) or len(item) != 1:
            raise ConfigurationError(
                f"{where}: step {index} must be a mapping with exactly one verb, got {quote(item)}"
            )
        ((verb, arguments),) = item.items()
        if verb not in VERBS:
            import difflib

            hint = difflib.get_close_matches(str(verb)[:100], VERBS, n=1)
            suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
            raise ConfigurationError(
                f"{where}: step {index}: unknown verb {quote(verb, 60)}{suggestion}"
            )
        here = f"{where}: step {index} ({verb})"
        if verb == "wait":
            steps.append(ProgramStep("wait", {}, _seconds(here, arguments)))
            continue
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ConfigurationError(
                f"{here}: arguments must be a mapping {{name: value}}, got {quote(arguments)}"
            )
        arguments = dict(arguments or {})
        duration = arguments.pop("for", None)
        _check_arguments(here, verb, arguments)
        check_values(here, verb, arguments)
        seconds = None if duration is None else _seconds(f"{here} for", duration)
        steps.append(ProgramStep(verb, arguments, seconds))
    return steps


def _seconds(where: str, value: Any) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigurationError(f"{where}: expected a duration > 0 in seconds, got {quote(value)}")
    return seconds


def _check_arguments(where: str, verb: str, arguments: dict[str, Any]) -> None:
    """Raise if ``arguments`` do not fit ``Commander.<verb>`` (names, required ones)."""
    import difflib
    import inspect

    signature = inspect.signature(getattr(Commander, verb))
    names = [n for n in signature.parameters if n != "self"]
    for name in arguments:
        if name not in names:
            hint = difflib.get_close_matches(str(name)[:100], [*names, "for"], n=1)
            raise ConfigurationError(
                f"{where}: unknown argument {quote(name, 60)}; {verb} takes {names} and 'for'"
                + (f"; did you mean {hint[0]!r}?" if hint else "")
            )
    try:
        signature.bind(None, **arguments)
    except TypeError as exc:
        raise ConfigurationError(f"{where}: {exc} (arguments: {names})") from exc


class _PeakTorque:
    """Wraps a recorder (or nothing) and tracks the largest applied torque."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self.peak = 0.0

    def log(self, time: float, **loggables: Any) -> None:
        applied = loggables.get("applied")
        if applied is not None:
            self.peak = max(self.peak, float(np.max(np.abs(applied.torque), initial=0.0)))
        if self.recorder is not None:
            self.recorder.log(time, **loggables)

    def event(self, *args: Any, **kwargs: Any) -> Any:
        if self.recorder is not None and hasattr(self.recorder, "event"):
            return self.recorder.event(*args, **kwargs)
        return None


def check_program(program: str | Path | Sequence[Any], description: RobotDescription) -> Program:
    """Load ``program`` and check it against the robot (joint names, vector lengths).

    What :func:`run_program` checks before the robot moves, for callers that want it before
    they open a log. Values the robot judges (limits) are refused when a step runs.

    Raises:
        ConfigurationError: a malformed step, or one that does not fit ``description``
            (names the step).
    """
    steps = load_program(program)
    for index, step in enumerate(steps):
        check_shapes(f"program step {index} ({step.verb})", step.arguments, description)
    return steps


def run_program(
    robot: Robot,
    program: str | Path | Sequence[Any],
    *,
    recorder: Any = None,
    commander: Commander | None = None,
    on_step: Callable[[int, ProgramStep], None] | None = None,
) -> list[StepResult]:
    """Run a command program on ``robot`` (any backend) and return one result per step.

    Args:
        robot: The robot (armed, or armed here when it is not).
        program: Path, YAML text or list (see the module docstring).
        recorder: Optional :class:`jointlab.recording.Recorder`; desired and applied actions,
            states and command events are logged.
        commander: Reuse a Commander (default: a new one with default settings).
        on_step: Called with ``(index, step)`` before each step (progress reporting).
    """
    steps = check_program(program, robot.description)
    if not robot.read().armed:
        robot.arm()
        with FaultRule(robot, recorder):  # the one rule, as in every run() below
            robot.step()  # read() reports the arming from the next state on (hardware)
    commander = commander or Commander(robot)
    results = []
    first = True
    for index, step in enumerate(steps):
        if on_step is not None:
            on_step(index, step)
        tracker = _PeakTorque(recorder)
        with _naming_step(index, step):
            summary = _run_step(robot, commander, step, tracker, first)
            if summary is None:
                raise ConfigurationError(
                    f"program step {index} ({step.verb}) did not finish within "
                    f"{DEFAULT_STEP_TIMEOUT} s of robot time; give it 'for: SECONDS'"
                )
        first = False
        peak = tracker.peak if summary.ticks else math.nan
        results.append(StepResult(step, summary, peak))
    return results


def _run_step(
    robot: Robot, commander: Commander, step: ProgramStep, tracker: _PeakTorque, first: bool
) -> RunSummary | None:
    """Run one step; None if it did not finish within :data:`DEFAULT_STEP_TIMEOUT`."""
    if step.verb == "wait":
        return run(robot, commander, duration=step.duration, recorder=tracker, reset=first)
    handle = getattr(commander, step.verb)(**step.arguments)
    if step.duration is not None:
        return run(robot, commander, duration=step.duration, recorder=tracker, reset=first)
    deadline = robot.time + DEFAULT_STEP_TIMEOUT
    summary = run(
        robot,
        commander,
        recorder=tracker,
        reset=first,
        until=lambda state, h=handle, d=deadline: h.done or state.time >= d,
    )
    return summary if handle.done else None


@contextlib.contextmanager
def _naming_step(index: int, step: ProgramStep) -> Iterator[None]:
    """Re-raise a refusal or error of step ``index`` with the step named first."""
    prefix = f"program step {index} ({step.verb})"
    try:
        yield
    except JointLabError as exc:
        if str(exc).startswith(prefix):
            raise
        named = copy.copy(exc)
        named.args = (f"{prefix}: {exc}", *exc.args[1:])
        raise named from exc
    except (TypeError, ValueError, OverflowError) as exc:
        raise ConfigurationError(f"{prefix}: {type(exc).__name__}: {str(exc)[:200]}") from exc


def _clearance(description: RobotDescription, q: np.ndarray) -> float:
    """Lowest height (m) of any link end above the ground plane at ``q``."""
    from jointlab.robots import forward_kinematics

    return float(forward_kinematics(description, q).ends[..., 2, 3].min())


#: Longest demo excursion of a joint, in seconds of its configured speed.
DEMO_EXCURSION_TIME = 0.5
#: Largest demo excursion of a joint, as a fraction of its soft range.
DEMO_EXCURSION_FRACTION = 0.15


def demo_program(source: RobotDescription | Robot) -> Program:
    """The ``jointlab demo`` program of a robot: home, a trajectory, a move, hold, stop.

    Derived from the description alone, for any robot: each independent joint swings away
    from home by 15 % of its soft range or half a second at its configured speed, whichever
    is less (of a few sign patterns, the one keeping the links highest above the floor, so
    the demo shows motion, not collisions), and back. Dependent (coupled) joints follow
    their leaders. The trajectory's waypoints carry no times: they are timed within each
    joint's velocity, acceleration and jerk limits (and configured speed).

    Args:
        source: A description, or a robot (its description is used).
    """
    description = getattr(source, "description", source)
    home = description.home
    lower, upper = description.soft_lower, description.soft_upper
    free = ~description.dependent
    names = [n for n, f in zip(description.joint_names, free, strict=True) if f]
    reach = np.minimum(
        DEMO_EXCURSION_FRACTION * (upper - lower), DEMO_EXCURSION_TIME * description.config_speed
    )
    span = np.where(free, reach, 0.0)
    alternating = np.where(np.arange(description.dof) % 2 == 0, 1.0, -1.0)
    signs = [np.ones(description.dof), -np.ones(description.dof), alternating, -alternating]
    candidates = [description.apply_coupling(np.clip(home + s * span, lower, upper)) for s in signs]
    away = max(candidates, key=lambda q: _clearance(description, q))
    back = description.apply_coupling(np.clip(home - 0.5 * (away - home), lower, upper))
    waypoints = [{"position": q[free].tolist()} for q in (home, away, back, home)]
    return load_program(
        [
            {"home": {}},
            {"follow_trajectory": {"waypoints": waypoints, "joints": names}},
            {"set_positions": {"positions": np.where(free, away, np.nan).tolist()}},
            {"hold": {"for": 0.5}},
            {"stop": {"mode": "decelerate"}},
        ]
    )
