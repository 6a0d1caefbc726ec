"""``SimRobot``: the simulation backend of the :class:`~jointlab.contract.Robot` interface.

A ``SimRobot`` runs on the engine of its world: PyBullet (the default, described below) or
MuJoCo (``engine="mujoco"``, :mod:`jointlab.sim.mujoco`, where the same law runs as MuJoCo's
own actuators). Everything in this module (power, arming, brakes, resets, randomisation,
sensors, state flags) is engine-neutral; the world supplies the engine's body and loop,
which this module drives only through the protocols of :mod:`jointlab.sim.engine`.

Time semantics (docs/architecture.md, the Robot contract):

* ``apply(a)`` sets the action used from the next physics step on, until the next ``apply``.
  Everything the torque law needs (filled gains, PD mask, ``torque + kp*position +
  kd*velocity``) is derived here, once per action.
* ``step()`` advances one control period, ``control_dt / dt`` physics steps. Each physics
  step computes the torque from the state at its start with the latest action's targets,
  runs it through the delay line and the actuator model (``jointlab.sim.actuators``), adds
  Coulomb friction, sends it in one ``setJointMotorControlArray(TORQUE_CONTROL)`` call and
  calls ``stepSimulation``; then one ``getJointStates`` reads the new state.
* ``read()`` after ``step()`` returns the state at the end of the period; its ``torque`` is
  the actuator torque (after the clamps) applied during the period's last physics step.
* ``time`` is simulated seconds since creation or the last ``reset``.

PyBullet's default velocity motors are switched off once at load and the torque loop uses
only ``TORQUE_CONTROL``. Viscous damping is PyBullet's native joint damping (from the URDF
``<dynamics>``, applied inside ``stepSimulation`` at no Python cost). Position limits are the
URDF limits, which PyBullet enforces as hard stops in torque mode. Brakes are position motors
switched on and off outside the torque loop. Single-leader couplings are ``JOINT_GEAR``
constraints; couplings with several leaders are a stiff PD on the constraint.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.contract import Readiness, Robot
from jointlab.errors import ConfigurationError, DescriptionError
from jointlab.holding import hold_action
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.description import ArrayGeometry, RobotDescription
from jointlab.robots.dynamics import DynamicsModel, rigid_body_model
from jointlab.robots.gains import UnstableGainsWarning, check_gains, effective_inertia
from jointlab.robots.stops import onto_the_stops
from jointlab.robots.yaml_io import load_robot
from jointlab.sim.engine import DEFAULT_ENGINE, World, check_engine
from jointlab.sim.randomization import EpisodeParameters, Randomization
from jointlab.sim.scene import Scene
from jointlab.sim.sensors import SensorModel
from jointlab.sim.state import StateReporter

__all__ = ["SimRobot"]


def _steps_per_period(dt: float, control_dt: float) -> int:
    ratio = control_dt / dt
    steps = round(ratio)
    if steps < 1 or abs(ratio - steps) > 1e-9 * max(1.0, ratio):
        raise ConfigurationError(
            f"control_dt must be a whole multiple of the physics dt: got control_dt = "
            f"{control_dt!r} s and dt = {dt!r} s (ratio {ratio:.6g})"
        )
    return steps


class SimRobot(Robot):
    """A robot simulated at torque level, in PyBullet or MuJoCo.

    Args:
        description: A :class:`RobotDescription`, a built-in name or a robot file path.
        world: The world to load into (``World(...)`` of either engine); by default the robot
            creates (and owns) one.
        dt: Physics step in seconds (default: the world's, or 0.001).
        control_dt: Control period in seconds, a whole multiple of ``dt`` (default ``dt``).
        seed: Seed of the randomisation and sensor-noise generators.
        randomization: Ranges used by ``reset(randomize=True)``.
        sensors: Encoder quantisation and noise applied to ``read()``.
        gui: Open the engine's GUI (only when the robot creates its world).
        moving_threshold: Speed above which a joint reports MOVING, rad/s or m/s.
        stall_time: Seconds a saturated joint must fail to move towards its target before it
            reports STALLED; ``None`` disables stall detection.
        engine: ``"pybullet"`` (default) or ``"mujoco"`` when the robot creates its world;
            with ``world`` given, the world's engine (a different ``engine`` is an error).
        gain_check: What to do when the description's default gains fail the explicit-PD
            bounds at ``dt`` (:func:`jointlab.robots.gains.check_gains`): ``"error"`` raises
            :class:`~jointlab.errors.DescriptionError` naming the joint, the gain and its
            bound; ``"warn"`` emits an :class:`~jointlab.robots.gains.UnstableGainsWarning`
            and runs anyway.
    """

    def __init__(
        self,
        description: RobotDescription | str | Path,
        *,
        world: Scene | None = None,
        dt: float | None = None,
        control_dt: float | None = None,
        seed: int = 0,
        randomization: Randomization | None = None,
        sensors: SensorModel | None = None,
        gui: bool = False,
        moving_threshold: float = 1e-3,
        stall_time: float | None = 0.5,
        engine: str | None = None,
        gain_check: str = "error",
    ) -> None:
        self._closed = True  # until fully built, so close() is harmless
        self._description = load_robot(description)
        engine = None if engine is None else check_engine(engine)
        if world is not None:
            if engine is not None and engine != world.engine:
                raise ConfigurationError(
                    f"engine={engine!r} differs from the world's engine {world.engine!r}"
                )
            if dt is not None and float(dt) != world.dt:
                raise ConfigurationError(f"dt = {dt} s differs from the world's dt = {world.dt} s")
            if gui and not world.gui:
                raise ConfigurationError("gui=True needs world=None or a World(gui=True)")
        dt = float(world.dt if world is not None else (0.001 if dt is None else dt))
        control_dt = dt if control_dt is None else float(control_dt)
        if not np.isfinite(dt) or dt <= 0:
            raise ConfigurationError(f"dt must be a positive number of seconds, got {dt!r}")
        self._k = _steps_per_period(dt, control_dt)
        if randomization is not None and not isinstance(randomization, Randomization):
            raise ConfigurationError(
                f"randomization must be a Randomization, got {randomization!r}"
            )
        if sensors is not None and not isinstance(sensors, SensorModel):
            raise ConfigurationError(f"sensors must be a SensorModel, got {sensors!r}")
        if not moving_threshold >= 0:
            raise ConfigurationError(f"moving_threshold must be >= 0, got {moving_threshold!r}")
        if stall_time is not None and not stall_time > 0:
            raise ConfigurationError(f"stall_time must be > 0 s or None, got {stall_time!r}")
        if gain_check not in ("error", "warn"):
            raise ConfigurationError(f"gain_check must be 'error' or 'warn', got {gain_check!r}")
        self._owns_world = world is None
        if world is None:
            world = World(dt=dt, gui=gui, engine=engine or DEFAULT_ENGINE)
        self._world = world
        self._dt, self._control_dt = dt, control_dt
        self._randomization = randomization
        self._reporter = StateReporter(
            self._description.dof, dt, moving_threshold, stall_time, sensors
        )
        try:
            self._attached = world.attach_robot(self._description, dt, self._world_closing)
        except BaseException:
            if self._owns_world:
                self._world.close()
            raise
        self._body, self._loop = self._attached.body, self._attached.loop
        self._closed = False
        self.seed(seed)
        dof = self._description.dof
        self._config_speed = np.array(self._description.config_speed)
        self._config_accel = np.array(self._description.acceleration_limit)
        self._powered, self._armed, self._brakes_requested = True, True, False
        self._has_brakes = bool(self._description.has_brakes.any())
        self._zero_action = NJointAction.Zero(dof)
        self._action = self._zero_action
        self._state: ArrayState | None = None
        self._state_steps = -1  # the world's steps when _state was built
        self._braked = np.zeros(dof, dtype=bool)
        self._active: np.ndarray | None = None  # joints that may be driven; see _configure_drive
        self._brake_any = False
        self._episode = EpisodeParameters.nominal(self._description)
        self._episode_changed = False
        self._loop.set_episode(self._episode)
        try:
            self._check_gains(gain_check)
        except BaseException:
            self.close()
            raise
        self.reset()

    def _check_gains(self, mode: str) -> None:
        """Refuse (or warn about) default gains an explicit PD cannot integrate at ``dt``."""
        description = self._description
        # The description's own rigid-body model (armature on the diagonal, a floating base
        # free): engine-neutral, and never heavier than PyBullet's realisation of the armature.
        home = description.apply_coupling(description.home)
        inertia = effective_inertia(description, DynamicsModel(description).joint_inertia(home))
        problems = check_gains(description, self._dt, inertia)
        if not problems:
            return
        source = description.source or f"robot {description.name!r}"
        message = (
            f"{source}: "
            + "; ".join(f"actuator {p.name!r}: {p.message}" for p in problems)
            + (
                "; give smaller gains in the robot file, or run with a smaller dt"
                " (sim://...?dt=...), or pass gain_check='warn' to run anyway"
            )
        )
        if mode == "warn":
            warnings.warn(message, UnstableGainsWarning, stacklevel=3)
            return
        raise DescriptionError(message)

    # ================================================================ properties
    @property
    def description(self) -> RobotDescription:
        """The robot's description."""
        return self._description

    @property
    def torque_capable(self) -> np.ndarray:
        """Joints that take a feed-forward torque on the real robot, shape ``(dof,)``.

        A robot file's ``bus`` section may say that a joint's servo has position control
        only; controllers then leave its feed-forward out here too, so that a program does
        the same in simulation as on the arm. (The simulator itself would apply any torque.)
        """
        bus = self._description.bus
        if bus is None:
            return np.ones(self._description.dof, dtype=bool)
        return np.array([s.mode.value == "current" for s in bus.servos])

    def dynamics_model(self, gravity: Any = None) -> Any:
        """The rigid-body model controllers use: the engine's evaluator where it agrees.

        :func:`~jointlab.robots.dynamics.rigid_body_model` with the world's
        ``dynamics_evaluator()`` (PyBullet's Featherstone on the PyBullet engine); the numpy
        :class:`~jointlab.robots.dynamics.DynamicsModel` where the engine offers none.

        Args:
            gravity: Gravity in the world frame, m/s², shape ``(3,)``; None: the world's.
        """
        gravity = self._world.gravity if gravity is None else gravity
        return rigid_body_model(self._description, gravity, self._world.dynamics_evaluator())

    @property
    def steps_per_period(self) -> int:
        """Physics steps in one control period (``control_dt / dt``)."""
        return self._k

    @property
    def world(self) -> Scene:
        """The world the robot lives in (a PyBullet ``World`` or a ``MujocoWorld``)."""
        return self._world

    @property
    def engine(self) -> str:
        """The physics engine, ``"pybullet"`` or ``"mujoco"``."""
        return self._world.engine

    @property
    def body_id(self) -> int:
        """Body id of the robot in its world (PyBullet body id, or a MuJoCo world handle)."""
        return self._body.body_id

    @property
    def dt(self) -> float:
        """Physics step in seconds."""
        return self._dt

    @property
    def control_dt(self) -> float:
        """Control period in seconds (``step()`` advances this much)."""
        return self._control_dt

    @property
    def time(self) -> float:
        """Simulated seconds since creation or the last reset."""
        return (self._world.steps - self._t0) * self._dt

    @property
    def applied_torque(self) -> np.ndarray:
        """Actuator torque of the last physics step after the clamps, ``(dof,)`` N·m or N."""
        return self._loop.tau

    @property
    def episode(self) -> EpisodeParameters:
        """Parameters of the current episode (nominal unless reset with ``randomize``)."""
        return self._episode

    @property
    def randomization(self) -> Randomization | None:
        """Ranges drawn from by ``reset(randomize=True)``; may be replaced between episodes."""
        return self._randomization

    @randomization.setter
    def randomization(self, value: Randomization | None) -> None:
        if value is not None and not isinstance(value, Randomization):
            raise ConfigurationError(f"randomization must be a Randomization, got {value!r}")
        self._randomization = value

    @property
    def np_random(self) -> np.random.Generator:
        """Generator of the randomisation draws (seeded by ``seed``)."""
        return self._generators()[0]

    def seed(self, seed: int) -> None:
        """Reseed the randomisation and sensor-noise generators (independent streams).

        The generators are made when first used (an environment reseeds its robot at every
        reset, and a robot without randomisation or sensor noise never draws).
        """
        self._seed = int(seed)
        self._rngs: tuple[np.random.Generator, np.random.Generator] | None = None

    def _generators(self) -> tuple[np.random.Generator, np.random.Generator]:
        """The randomisation and sensor-noise generators of the last :meth:`seed`."""
        if self._rngs is None:
            randomization, noise = np.random.SeedSequence(self._seed).spawn(2)
            self._rngs = (np.random.default_rng(randomization), np.random.default_rng(noise))
        return self._rngs

    # ================================================================ commands
    def _readiness(self) -> Readiness:
        return Readiness(self._powered, self._armed, self._brakes_requested and self._has_brakes)

    def _motion_allowed(self) -> bool:
        return self._powered and self._armed and not (self._brakes_requested and self._has_brakes)

    def _apply(self, action: NJointAction) -> None:
        """Use ``action`` from the next physics step on (checked by ``Robot.apply``).

        Applying the same action object again costs nothing; a new one costs the derivation
        of the law's arrays (:meth:`jointlab.sim.law.DriveLoop.set_action`).
        """
        if action is self._action:
            return
        self._action = action
        self._loop.set_action(action, self._active)
        self._state = None

    def _configure_drive(self, reconfigure: bool = False) -> None:
        """Re-derive the torque loop's arrays from the current action.

        ``reconfigure`` (after a power, arming or brake change) also recomputes which joints
        may be driven and flushes the delay line.
        """
        if reconfigure or self._active is None:
            dof = self._description.dof
            self._active = np.full(dof, self._powered and self._armed) & ~self._braked
        self._loop.set_action(self._action, self._active)
        if reconfigure and self._loop.delay is not None:
            self._loop.delay.clear()
        self._state = None

    def _power(self, on: bool) -> None:
        """Off means zero torque, engaged brakes where fitted, and disarmed, as on a device."""
        self._powered = on
        if not on:
            self._armed = False
            self._action = self._zero_action
        self._update_brakes()
        self._configure_drive(reconfigure=True)

    def _brakes(self, on: bool) -> None:
        """Engaging them parks the array: the action becomes zero, as on a device."""
        self._brakes_requested = on
        if on:
            self._action = self._zero_action
        self._update_brakes()
        self._configure_drive(reconfigure=True)

    def _arm(self) -> None:
        """Armed, holding the present pose from the next physics step (no step between)."""
        if self._armed:
            return
        self._armed = True
        self._configure_drive(reconfigure=True)
        self._apply(hold_action(self._description, self._read().position))

    def _disarm(self) -> None:
        self._armed = False
        self._action = self._zero_action
        self._configure_drive(reconfigure=True)

    def _configure_speed(self, joint: int, speed: float) -> None:
        self._config_speed[joint] = speed

    def _configure_accel(self, joint: int, accel: float) -> None:
        self._config_accel[joint] = accel

    def _geometry(self) -> ArrayGeometry:
        return self._description.geometry(config_speed=self._config_speed)

    # ================================================================ world access
    def apply_external_force(
        self,
        link: str,
        force: Sequence[float],
        position: Sequence[float] | None = None,
        duration: float | None = None,
    ) -> None:
        """Push ``link`` with ``force`` (N, world frame) for the next physics steps.

        Args:
            link: Element name, ``<leaf>_tool`` or ``"base"``.
            force: Force in newtons, world frame, shape ``(3,)``.
            position: Point of application, world frame (default: the link's centre of mass,
                followed as it moves).
            duration: Seconds to keep pushing (default: one physics step).
        """
        self._check_open("apply_external_force")
        index = self._body.link_index(link)
        force_v = np.asarray(force, dtype=np.float64).reshape(-1)
        if force_v.shape != (3,) or not np.all(np.isfinite(force_v)):
            raise ConfigurationError(f"force must be 3 finite numbers in N, got {force!r}")
        point = None
        if position is not None:
            point_v = np.asarray(position, dtype=np.float64).reshape(-1)
            if point_v.shape != (3,) or not np.all(np.isfinite(point_v)):
                raise ConfigurationError(f"position must be 3 finite numbers, got {position!r}")
            point = tuple(point_v.tolist())
        if duration is not None and not (np.isfinite(duration) and duration >= 0):
            raise ConfigurationError(f"duration must be >= 0 seconds, got {duration!r}")
        steps = 1 if duration is None else max(1, round(float(duration) / self._dt))
        self._loop.forces.append([index, tuple(force_v.tolist()), point, steps])

    def link_pose(self, name: str) -> np.ndarray:
        """World pose (4x4) of an element's moving frame, ``<leaf>_tool`` or ``"base"``."""
        self._check_open("link_pose")
        return self._body.link_pose(name)

    def frame_locator(self, name: str) -> Callable[[ArrayState], np.ndarray | None] | None:
        """A function giving tool frame ``name``'s world position (m, ``(3,)``) at a state.

        For tasks that observe a tool at every step: the engine's own kinematics replaces the
        numpy forward kinematics of ``state.position`` where that is exact and cheaper. The
        function returns the position when ``state`` is this robot's latest ``read()`` (the
        engine holds that configuration), and None for any other state (compute it from
        ``state.position`` then). ``frame_locator`` itself returns None when the engine's
        position would not be the one of the reported joints (a sensor model: ``read()``
        reports quantised, noisy positions), when the engine's kinematics is not cheaper
        (PyBullet), or when ``name`` is not one of ``description.tool_names``.
        """
        self._check_open("frame_locator")
        body = self._body
        if (
            name not in self._description.tool_names
            or not body.cheap_kinematics
            or self._reporter.sensors is not None
        ):
            return None
        frame_position = body.frame_position

        def locate(state: ArrayState) -> np.ndarray | None:
            return frame_position(name) if state is self._state else None

        return locate

    # ================================================================ stepping
    def _step(self) -> None:
        world = self._world
        if world.robot_count > 1:
            for _ in range(self._k):
                world.step()
        else:
            self._loop.run(self._k)
        reporter = self._reporter  # _end_period, inlined: this runs every control period
        if reporter.sensors is None:
            steps = world.steps
            if steps >= reporter.next_check:  # else end_period has nothing to do
                reporter.end_period(self._loop, steps, None)
            self._state = None
        else:
            self._end_period()

    def _end_period(self) -> None:
        reporter = self._reporter
        noise = None if reporter.sensors is None else self._generators()[1]
        reporter.end_period(self._loop, self._world.steps, noise)
        self._state = None

    # ================================================================ state
    def _read(self) -> ArrayState:
        state = self._state
        steps = self._world.steps
        if state is None or self._state_steps != steps:  # a World.step() ran the law since
            self._state_steps = steps
            state = self._state = self._reporter.build(
                self._loop,
                (steps - self._t0) * self._dt,
                self._powered,
                self._armed,
                self._braked,
                self._brake_any,
            )
        return state

    def _reset(
        self, q: np.ndarray | None, qd: np.ndarray | None, *, randomize: bool = False
    ) -> ArrayState:
        """Restore ``q``/``qd`` (default: home at rest) without reloading; time restarts at 0.

        Dependent joints follow their couplings. The action becomes zero; power, arming and
        brakes keep their settings (brakes lock at the new position). ``randomize=True``
        draws new episode parameters from ``randomization``; otherwise the nominal ones are
        restored.
        """
        description = self._description
        # q and qd were checked by Robot.reset (dof finite numbers, new float64 arrays)
        q = np.array(description.home) if q is None else q
        q = onto_the_stops(q, description.lower, description.upper)  # resting on a stop
        qd = np.zeros(description.dof) if qd is None else qd
        outside = (q < description.lower - 1e-9) | (q > description.upper + 1e-9)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise ConfigurationError(
                f"reset: q[{i}] = {q[i]} of joint {description.joint_names[i]!r} lies outside "
                f"[{description.lower[i]}, {description.upper[i]}]"
            )
        if description.dependent.any():
            matrix, _ = description.coupling_matrix
            q = description.apply_coupling(q)
            qd = np.where(description.dependent, qd @ matrix.T, qd)
        if randomize and self._randomization is not None:
            self._episode = self._randomization.sample(description, self._generators()[0])
            self._episode_changed = True
            self._loop.set_episode(self._episode)
        elif self._episode_changed:
            self._episode = EpisodeParameters.nominal(description)
            self._episode_changed = False
            self._loop.set_episode(self._episode)
        self._body.reset(q, qd)
        self._loop.sync()
        self._t0 = self._world.steps
        self._reporter.reset(self._t0)
        self._action = self._zero_action
        self._update_brakes()
        self._configure_drive(reconfigure=True)
        self._end_period()
        return self.read()

    def _update_brakes(self) -> None:
        engaged = self._brakes_requested or not self._powered
        mask = self._description.has_brakes & engaged
        self._braked = mask
        self._brake_any = bool(mask.any())
        self._body.set_brakes(mask, self._loop.q)
        self._state = None

    # ================================================================ lifetime
    def _world_closing(self) -> None:
        self._closed = True

    def close(self) -> None:
        """Remove the robot from its world (and close the world if the robot made it)."""
        if self._closed:
            return
        self._closed = True
        self._world.detach_robot(self._attached)
        if self._owns_world:
            self._world.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"t={self.time:.3f}s"
        engine = "" if self._world.engine == DEFAULT_ENGINE else f", engine={self.engine!r}"
        return (
            f"SimRobot({self._description.name!r}, dof={self._description.dof}, "
            f"dt={self._dt}, control_dt={self._control_dt}{engine}, {state})"
        )
