"""``JointLabEnv``: a Gymnasium environment that holds a :class:`Robot` and a :class:`Task`.

The environment owns no physics. It converts actions (:mod:`jointlab.envs.actions`), hands
them to the robot, asks the task for the observation parts, reward and termination, and
reports everything in ``info``. Every PyBullet call lives in :mod:`jointlab.sim`.

Time semantics: one ``step()`` applies the action, advances the robot by one control period
(``control_dt``, 0.02 s by default, i.e. 20 physics steps of ``dt`` = 0.001 s in sim, with the
NJointAction's PD evaluated at every physics step) and observes the state at the end of it.
Episode length is set at registration (``max_episode_steps``), so ``truncated`` comes from
Gymnasium's ``TimeLimit`` and ``terminated`` only from the task.
"""

from __future__ import annotations

import difflib
import time as _time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium
import numpy as np

from jointlab.contract import Robot
from jointlab.errors import CommandRefused, ConfigurationError, JointLabError, quote
from jointlab.extras import check_installed, installed
from jointlab.faults import FAULTS, stop_after_fault
from jointlab.interface import ArrayState
from jointlab.robots.description import RobotDescription
from jointlab.robots.yaml_io import load_robot
from jointlab.sim.quiet import has_display

from .actions import ActionAdapter, check_action_mode
from .rendering import default_camera, draw_markers
from .tasks import TASKS, Task, task_class
from .tasks.base import option_vector
from .tasks.observations import ObservationLayout, ObservationPart, joint_parts

__all__ = [
    "ENV_PARAMETERS",
    "RENDER_MODES",
    "TASKS",
    "HeadlessRenderWarning",
    "JointLabEnv",
    "render_modes",
]


class HeadlessRenderWarning(UserWarning):
    """``render_mode="human"`` without a display (or on a live robot): the browser view is used.

    The message gives the view's address (:class:`jointlab.view.LiveView`).
    """


RENDER_MODES = ("human", "rgb_array")


def render_modes(builds_sim: bool = True) -> list[str]:
    """The render modes that can start in this install, on this machine.

    ``"rgb_array"`` always; ``"human"`` where it can start: the engine's GUI (a simulated
    robot the environment builds, and a display) or the browser view (the ``view`` extra).
    An environment declares these in its ``metadata["render_modes"]`` (the class declares
    every mode of :data:`RENDER_MODES`), so Gymnasium's ``check_env``, which builds one
    environment per declared mode, passes with and without the extras.

    Args:
        builds_sim: The environment builds its own simulated robot (not a live one).
    """
    human = (builds_sim and has_display()) or installed("viser")
    return [mode for mode in RENDER_MODES if mode != "human" or human]


#: The environment's own constructor keywords (everything else goes to the task).
ENV_PARAMETERS = (
    "task",
    "robot",
    "action_mode",
    "backend",
    "engine",
    "control_dt",
    "dt",
    "render_mode",
    "camera",
    "render_size",
    "observe_torque",
    "observe_previous_action",
    "randomization",
)


class JointLabEnv(gymnasium.Env):
    """A robot (any backend) plus a task, as a Gymnasium environment.

    Args:
        task: A :class:`Task` instance or a task name (``"reach"``, ``"joint_tracking"``,
            ``"hold"``, ``"push"``); a name is built with ``task_kwargs``.
        robot: A built-in robot name, a ``.yaml``/``.urdf`` path, a
            :class:`~jointlab.robots.RobotDescription` (each simulated with
            :class:`jointlab.sim.SimRobot`) or a live :class:`~jointlab.contract.Robot`
            (used as is, not closed by the env). None means the task's default robot.
        action_mode: One of :data:`jointlab.envs.actions.ACTION_MODES`.
        backend: A :func:`jointlab.connect` URL (``"sim://arm6?dt=0.001"``,
            ``"emulated://arm6"``, ``"serial:///dev/ttyUSB0"``) used instead of ``robot``.
        engine: Physics engine of a robot the env builds: ``"pybullet"`` (default) or
            ``"mujoco"``. A backend URL names its own (``sim://arm6?engine=mujoco``).
        control_dt: Environment step in seconds (simulated robots only).
        dt: Physics step in seconds; ``control_dt`` must be an integer multiple of it.
        render_mode: None, ``"rgb_array"`` (headless: PyBullet's TinyRenderer, MuJoCo's
            offscreen renderer) or ``"human"`` (the engine's GUI with a display; otherwise,
            and for live robots, the browser view of :mod:`jointlab.view`, whose address a
            :class:`HeadlessRenderWarning` gives; it needs the ``view`` extra, and without
            it ``"human"`` is a :class:`~jointlab.errors.MissingExtraError` here and is not
            among the instance's ``metadata["render_modes"]``: :func:`render_modes`).
        camera: A :class:`jointlab.sim.Camera` for ``rgb_array``; None frames the robot.
        render_size: ``(width, height)`` of ``rgb_array`` images in pixels.
        observe_torque: Add the applied torques to the observation.
        observe_previous_action: Add the previous (clipped) action to the observation
            (flat action modes only).
        randomization: A :class:`jointlab.sim.Randomization` applied at every reset
            (simulated robots built by the env only).
        **task_kwargs: Keyword arguments of the task class (weights, thresholds...).
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 50}  # noqa: RUF012

    def __init__(
        self,
        task: Task | str = "reach",
        robot: str | Path | RobotDescription | Robot | None = None,
        *,
        action_mode: str = "position",
        backend: str | None = None,
        engine: str | None = None,
        control_dt: float = 0.02,
        dt: float = 0.001,
        render_mode: str | None = None,
        camera: Any = None,
        render_size: tuple[int, int] = (320, 240),
        observe_torque: bool = False,
        observe_previous_action: bool = False,
        randomization: Any = None,
        **task_kwargs: Any,
    ) -> None:
        self._closed = True  # until construction succeeds, close() has nothing to do
        self.task = self._build_task(task, task_kwargs)
        check_action_mode(action_mode)
        if observe_previous_action and action_mode == "njoint":
            raise ConfigurationError(
                "observe_previous_action needs a flat action mode, not 'njoint'"
            )
        if engine is not None and (isinstance(robot, Robot) or backend is not None):
            raise ConfigurationError(
                f"engine={engine!r} applies to robots the environment builds; a live robot "
                "has its engine, and a backend URL names it (sim://NAME?engine=...)"
            )
        if randomization is not None and (isinstance(robot, Robot) or backend is not None):
            raise ConfigurationError(
                "randomization= applies to robots the environment builds; configure a live "
                "robot or a backend URL's robot yourself"
            )
        if render_mode is not None and render_mode not in RENDER_MODES:
            hint = difflib.get_close_matches(str(render_mode), RENDER_MODES, n=1)
            suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
            raise ConfigurationError(
                f"unknown render_mode {render_mode!r}; expected None or one of "
                f"{list(RENDER_MODES)}{suggestion}"
            )
        #: "human" shows the engine's GUI when the env builds a simulated robot and a display
        #: exists; otherwise (headless, or a live robot of any backend) the browser view.
        builds_sim = not isinstance(robot, Robot) and backend is None
        self._browser_view = render_mode == "human" and not (builds_sim and has_display())
        if self._browser_view:  # before any robot is built
            check_installed(
                "view",
                "render_mode='human' (here the browser view: no display, or a live robot)",
                "viser",
            )
        self._view: Any = None
        self.render_mode = render_mode
        self.camera = camera
        self.render_size = (int(render_size[0]), int(render_size[1]))
        self.randomization = randomization
        self.robot, self._owns_robot = self._build_robot(robot, backend, control_dt, dt, engine)
        self._closed = False
        try:
            self.description: RobotDescription = self.robot.description
            self.control_dt = float(self.robot.control_dt)
            self.metadata = {
                **type(self).metadata,
                "render_fps": round(1.0 / self.control_dt),
                "render_modes": render_modes(builds_sim),
            }
            self.actions = ActionAdapter(self.description, action_mode)
            self.action_mode = action_mode
            self.action_space = self.actions.space
            self.task.bind(self.robot)
            parts = joint_parts(self.description, torque=observe_torque)
            if observe_previous_action:
                n = self.action_space.shape[0]
                parts.append(
                    ObservationPart(
                        "previous_action", -np.ones(n), np.ones(n), "previous action, normalised"
                    )
                )
            parts.extend(self.task.observation_parts())
            self.observation_layout = ObservationLayout(parts)
            self.observation_space = self.observation_layout.space
        except BaseException:
            self.close()
            raise
        self._observe_torque = observe_torque
        #: Whether the task has a ``before_step`` hook to call (most tasks have none).
        self._task_before_step = type(self.task).before_step is not Task.before_step
        self._observe_previous_action = observe_previous_action
        self._previous_action = np.zeros(0)
        self._clipped_total = 0
        self._last_frame_time = 0.0
        self.state: ArrayState | None = None

    # ------------------------------------------------------------------ construction
    @staticmethod
    def _build_task(task: Task | str, task_kwargs: dict[str, Any]) -> Task:
        if isinstance(task, Task):
            if task_kwargs:
                raise ConfigurationError(
                    f"unknown JointLabEnv arguments {sorted(task_kwargs)} (task options go to "
                    f"the Task object when one is passed); known: {list(ENV_PARAMETERS)}"
                )
            return task
        cls = task_class(task)
        known = cls.parameter_names()
        unknown = [k for k in task_kwargs if k not in known]
        if unknown:
            choices = list(ENV_PARAMETERS) + list(known)
            hints = {k: difflib.get_close_matches(k, choices, n=1) for k in unknown}
            text = ", ".join(
                f"{k!r}" + (f" (did you mean {h[0]!r}?)" if h else "") for k, h in hints.items()
            )
            raise ConfigurationError(
                f"unknown argument(s) {text} for task {cls.__name__}; environment arguments: "
                f"{list(ENV_PARAMETERS)}; task arguments: {list(known)}"
            )
        return cls(**task_kwargs)

    def _build_robot(
        self, robot: Any, backend: str | None, control_dt: float, dt: float, engine: str | None
    ) -> tuple[Robot, bool]:
        if isinstance(robot, Robot):
            if backend is not None:
                raise ConfigurationError("pass either robot= (a live Robot) or backend=, not both")
            return robot, False
        if backend is not None:
            if robot is not None:
                raise ConfigurationError(
                    f"pass either robot={robot!r} or backend={backend!r}; the URL names the robot"
                )
            import jointlab

            return jointlab.connect(backend), True
        ratio = control_dt / dt if dt > 0 else 0.0
        if dt <= 0 or control_dt <= 0 or abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
            raise ConfigurationError(
                "control_dt must be a positive integer multiple of the physics dt: got "
                f"control_dt={control_dt} s and dt={dt} s"
            )
        description = load_robot(self.task.default_robot if robot is None else robot)
        from jointlab.sim import SimRobot

        sim = SimRobot(
            description,
            dt=dt,
            control_dt=control_dt,
            seed=0,
            randomization=self.randomization,
            gui=self.render_mode == "human" and not self._browser_view,
            engine=engine,
        )
        return sim, True

    # ------------------------------------------------------------------ Gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode; ``options`` may hold ``q``, ``qd`` and the task's option keys.

        A robot the environment built (from a name or a ``backend`` URL) is armed here if it
        is not (a device starts disarmed); a live robot passed in must be armed already.

        The robot's own randomness (domain randomisation) is reseeded from ``np_random``, so
        ``reset(seed=s)`` reproduces an episode exactly.
        """
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0
        ):
            raise ConfigurationError(
                f"reset: seed must be a whole number >= 0 or None, got {quote(seed)}"
            )
        if options is not None and not isinstance(options, Mapping):
            raise ConfigurationError(
                f"reset: options must be a mapping, got {type(options).__name__} {quote(options)}"
            )
        super().reset(seed=seed)
        self._check_open()
        self._check_options(options)
        self._arm()
        robot_seed = int(self.np_random.integers(2**31 - 1))  # drawn on every backend, so
        if hasattr(self.robot, "seed"):  # the task's draws below are the same on all of them
            self.robot.seed(robot_seed)
        q, qd = self.task.reset(self.np_random, options)
        q_option = option_vector(options, "q", self.description.dof)
        qd_option = option_vector(options, "qd", self.description.dof)
        q = q if q_option is None else q_option
        qd = qd if qd_option is None else qd_option
        if self.randomization is not None:
            state = self.robot.reset(q, qd, randomize=True)  # type: ignore[call-arg]
        else:
            state = self.robot.reset(q, qd)
        if state is None:
            state = self.robot.read()
        self.task.after_reset(state)
        self.state = state
        self._clipped_total = 0
        if self._observe_previous_action:
            self._previous_action = self.actions.hold(state)
        if self.render_mode == "human":
            self._draw_markers()
            self._last_frame_time = _time.perf_counter()
        info = self._info(state)
        return self._observation(state), info

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply ``action`` for one control period and observe the result."""
        if self.state is None:
            self._check_open()
            raise ConfigurationError("call reset() before step()")
        njoint, clipped = self.actions.convert(action)
        if self._task_before_step:
            self.task.before_step(self.np_random)
        robot = self.robot
        try:
            robot.apply(njoint)
            robot.step()
        except FAULTS as exc:  # the robot faulted: hold, disarm, stop with the error
            stop_after_fault(robot, exc)
            raise
        state = self.state = robot.read()
        if self._observe_previous_action:
            self._previous_action = np.clip(np.asarray(action, dtype=np.float32), -1.0, 1.0)
        info = {"state": state.frozen()}  # self._info(state), inlined (the hot path)
        observation = self._observation(state)
        reward, terminated = self.task.evaluate_into(state, njoint, info)
        self._clipped_total = total = self._clipped_total + clipped
        info["action_clipped"] = clipped
        info["action_clipped_total"] = total
        if self.render_mode == "human":
            self._draw_markers()
            self._pace()
        return observation, reward, terminated, False, info

    def render(self) -> np.ndarray | None:
        """``rgb_array``: an ``(H, W, 3)`` uint8 image; ``human``: None (the GUI shows it)."""
        self._check_open()
        if self.render_mode != "rgb_array":
            return None
        world = getattr(self.robot, "world", None)
        if world is None:
            raise ConfigurationError(
                f"render_mode='rgb_array' needs a simulated robot; {type(self.robot).__name__} "
                "has no world to render"
            )
        width, height = self.render_size
        draw_markers(world, self.task.markers())
        return world.render(width, height, camera=self._camera())

    def close(self) -> None:
        """Release the robot (if the env built it) and the task; safe to call twice."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        self.state = None
        if getattr(self, "_view", None) is not None:
            self._view.close()
        task = getattr(self, "task", None)
        if task is not None:
            task.close()
        if self._owns_robot:
            self.robot.close()

    # ------------------------------------------------------------------ helpers
    def _observation(self, state: ArrayState) -> np.ndarray:
        values = [state.position, state.velocity]
        if self._observe_torque:
            values.append(state.torque)
        if self._observe_previous_action:
            values.append(self._previous_action)
        values.extend(self.task.observe(state))
        return self.observation_layout.build(values)

    @staticmethod
    def _info(state: ArrayState) -> dict[str, Any]:
        """The ``info`` of a reset or step before the task's entries: ``{"state": ...}``.

        The robot's :class:`ArrayState` itself, read-only (:meth:`ArrayState.frozen`): a
        simulated robot's state derives its fields when they are first read, so a step pays
        for ``info["state"]`` only when someone looks at it.
        """
        return {"state": state.frozen()}

    def _check_open(self) -> None:
        if self._closed:
            raise JointLabError("the environment is closed")

    def _arm(self) -> None:
        """Arm a robot the env built (a device starts disarmed); refuse a disarmed live one."""
        if self.robot.read().armed:
            return
        if self._owns_robot:
            self.robot.arm()
            return
        raise CommandRefused(
            f"the {type(self.robot).__name__} given to the environment is disarmed: call "
            "robot.arm() before env.reset() (an environment arms only robots it built from a "
            "robot name or a backend URL)",
            reason="disarmed",
        )

    def _check_options(self, options: dict[str, Any] | None) -> None:
        if not options:
            return
        known = ("q", "qd", *self.task.option_keys)
        unknown = [k for k in options if k not in known]
        if unknown:
            hints = [h for k in unknown for h in difflib.get_close_matches(str(k), known, n=1)]
            suggestion = f"; did you mean {hints[0]!r}?" if hints else ""
            raise ConfigurationError(
                f"unknown reset option(s) {unknown}; known: {list(known)}{suggestion}"
            )

    def _camera(self) -> Any:
        if self.camera is not None:
            return self.camera
        self.camera = default_camera(self.description)
        return self.camera

    def _draw_markers(self) -> None:
        """Show the task's goals in the GUI or the browser view."""
        if self._browser_view:
            self._live_view().show_markers(self.task.markers())
            return
        world = getattr(self.robot, "world", None)
        if world is not None:
            draw_markers(world, self.task.markers())

    def _live_view(self) -> Any:
        """The browser view of ``render_mode="human"``, started at the first reset."""
        if self._view is None:
            from jointlab.view import LiveView

            self._view = LiveView(self.description, title=f"{self!r}").watch(self.robot)
            reason = "a live robot" if not self._owns_robot else "no display"
            warnings.warn(
                f"render_mode='human' with {reason}: the robot is shown in the browser at "
                f"{self._view.url} (the live view; the engine's GUI needs a display)",
                HeadlessRenderWarning,
                stacklevel=3,
            )
        return self._view

    def _pace(self) -> None:
        """Keep the GUI near real time."""
        now = _time.perf_counter()
        delay = self.control_dt - (now - self._last_frame_time)
        if delay > 0:
            _time.sleep(delay)
        self._last_frame_time = _time.perf_counter()

    def __repr__(self) -> str:
        return (
            f"JointLabEnv(task={type(self.task).__name__}, robot={self.description.name!r}, "
            f"action_mode={self.action_mode!r})"
        )
