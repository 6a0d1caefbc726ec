"""``Commander(robot)``: the Player actarray / BB actuator command set on any Robot.

Motion commands return a :class:`~jointlab.controllers.events.CommandHandle` at once and run
over the following control ticks: call ``commander.update()`` once per tick (or let
:func:`jointlab.controllers.run` drive the Commander, which is a controller), or block with
``commander.wait(handle, timeout)``. Joints are addressed by index or name.

Each tick the active commands write per-joint references; the Commander adds gravity
compensation (from the description's inertials) to every joint under PD, builds one
``NJointAction`` and passes it through the safety layer. Position moves, homing and
decelerating stops are jerk-limited ruckig profiles that respect the description's limits
and the configured speed and acceleration (REQ SPEED / REQ ACCEL). A joint no command drives
holds its last reference.

Refusals raise :class:`~jointlab.errors.CommandRefused` with ``reason`` one of
``disarmed``, ``unpowered``, ``braked``, ``unknown_joint``, ``dependent_joint``,
``out_of_limits``, ``bad_trajectory`` (and publish a ``refused`` event). Command arguments
beyond a soft limit (position, velocity, effort, current, configured speed/acceleration) are
refused; the safety layer clamps, and reports, what happens at run time.

As in Player, joint ``-1`` means every (independent) joint, for every verb that takes one.
As in BB.Actuator, motion commands take a ``duration`` (seconds here: the time a move takes
at least, or how long a velocity or effort lasts) and a ``timeout`` (seconds of robot time
after which a command that has not finished ends ``stalled`` with reason ``"timeout"``,
holding where it is), and ``begin_motion`` reports ``initial_position``,
``target_position``, ``peak_velocity``, ``acceleration`` (peak) and ``duration``. Command
ids are yours or a counter that skips every id you have used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np

from jointlab.controllers.arguments import checked
from jointlab.controllers.commands import (
    EffortCommand,
    HoldCommand,
    MotionCommand,
    plan_velocity_run,
)
from jointlab.controllers.dispatch import CommandDispatcher
from jointlab.controllers.events import CommandEventKind, CommandHandle, CommandStatus
from jointlab.controllers.loop import drive_until_done, tick
from jointlab.controllers.motion import plan_move, plan_stop
from jointlab.controllers.streaming import StreamCommand, StreamTargets, stream_mode
from jointlab.controllers.trajectory import Repeat, Trajectory
from jointlab.errors import CommandRefused, ConfigurationError
from jointlab.interface import NJointAction
from jointlab.robots.description import ArrayGeometry

__all__ = ["Commander"]

Joint = int | str


class Commander(CommandDispatcher):
    """Command a robot joint by joint or as a whole (see the module docstring).

    The constructor arguments are :class:`~jointlab.controllers.dispatch.CommandDispatcher`'s
    (robot, gravity and model feed-forward, gains, tolerances, safety policy and check mode,
    start tolerance, event queue length).
    """

    # ================================================================== driving
    def update(self) -> NJointAction:
        """Read the robot, compute this tick's action and apply it (does not step).

        The control loop's :func:`~jointlab.controllers.loop.tick` on this Commander.
        """
        return tick(self.robot, self)

    def wait(self, handle: CommandHandle | None = None, timeout: float | None = None) -> bool:
        """Drive ticks and ``robot.step()`` until ``handle`` (or every command) is done.

        The control loop's :func:`~jointlab.controllers.loop.drive_until_done` on this
        Commander: ``timeout`` is robot time in seconds (required for open-ended commands).

        Returns:
            True when the command finished, False on timeout.
        """
        return drive_until_done(self.robot, self, handle, timeout)

    # ================================================================== position
    @checked
    def set_position(
        self,
        joint: Joint,
        position: float,
        velocity: float | None = None,
        *,
        duration: float | None = None,
        timeout: float | None = None,
        command_id: Hashable | None = None,
    ) -> CommandHandle:
        """Move one joint (or every joint, ``-1``) to ``position`` (rad or m) (Player CMD POS).

        Args:
            joint: Index or name; ``-1`` for every independent joint.
            position: Target inside the soft limits.
            velocity: Optional speed for this move (rad/s or m/s), at most the soft limit;
                the configured speed applies otherwise.
            duration: Optional duration hint, seconds: the move takes at least this long
                (slower than the jerk-limited fastest when longer; the fastest when shorter).
            timeout: Seconds of robot time the command may take before it ends ``stalled``
                (reason ``"timeout"``); ``None``: no limit.
            command_id: Correlation id for the events (default: a counter).
        """
        joints = self._joints(joint, "set_position", command_id)
        return self._move(
            "set_position",
            joints,
            np.full(len(joints), float(position)),
            velocity,
            command_id,
            duration,
            timeout,
        )

    @checked
    def set_positions(
        self,
        positions: Any,
        velocity: Any = None,
        *,
        duration: float | None = None,
        timeout: float | None = None,
        command_id: Hashable | None = None,
    ) -> CommandHandle:
        """Move every joint to ``positions`` (shape ``(dof,)``), arriving together (MULTI_POS).

        NaN entries leave a joint alone. Entries of dependent (coupled) joints must be NaN or
        match the coupling of the commanded leaders. ``duration`` and ``timeout`` as in
        :meth:`set_position`.
        """
        verb = "set_positions"
        values = np.asarray(positions, dtype=np.float64).reshape(-1)
        if values.shape[0] != self.dof:
            raise self._refuse(
                verb,
                "out_of_limits",
                f"got {values.shape[0]} positions, expected {self.dof}",
                command_id,
            )
        desc = self.description
        if desc.dependent.any():
            given = desc.dependent & ~np.isnan(values)
            expected = desc.apply_coupling(np.where(np.isnan(values), self._out.ref_p, values))
            off = given & ~np.isclose(values, expected, atol=self.start_tolerance)
            if off.any():
                raise self._refuse(
                    verb,
                    "dependent_joint",
                    f"dependent joints "
                    f"{np.flatnonzero(off).tolist()} follow their leaders "
                    f"({expected[off].tolist()}), not {values[off].tolist()}",
                    command_id,
                )
        joints = np.flatnonzero(~np.isnan(values) & ~desc.dependent)
        velocity = (
            None
            if velocity is None
            else np.broadcast_to(np.asarray(velocity, float), (self.dof,))[joints]
        )
        return self._move(verb, joints, values[joints], velocity, command_id, duration, timeout)

    @checked
    def home(
        self, joint: Joint = -1, *, timeout: float | None = None, command_id: Hashable | None = None
    ) -> CommandHandle:
        """Move ``joint`` (or every joint for ``-1``) to its home position (Player CMD HOME)."""
        joints = self._joints(joint, "home", command_id)
        return self._move(
            "home", joints, self.description.home[joints], None, command_id, None, timeout
        )

    def _joints(self, joint: Joint, verb: str, cid: Hashable | None) -> np.ndarray:
        """Indices of ``joint``: every independent joint for ``-1`` (Player), else one."""
        if isinstance(joint, (int, np.integer)) and not isinstance(joint, bool) and joint == -1:
            return self._free
        return np.array([self._joint(joint, verb, cid)])

    def _seconds(
        self,
        verb: str,
        what: str,
        value: float | None,
        cid: Hashable | None,
        joints: np.ndarray,
        strict: bool = False,
    ) -> float | None:
        """A ``duration``/``timeout`` argument: None, or finite seconds >= 0 (> 0 if strict)."""
        if value is None:
            return None
        seconds = float(value)
        if not (math.isfinite(seconds) and (seconds > 0 if strict else seconds >= 0)):
            raise self._refuse(
                verb,
                "out_of_limits",
                f"{what} must be {'>' if strict else '>='} 0 s, got {value}",
                cid,
                joints,
            )
        return seconds

    def _move(
        self,
        verb: str,
        joints: np.ndarray,
        targets: np.ndarray,
        velocity: Any,
        cid: Hashable | None,
        duration: float | None = None,
        timeout: float | None = None,
    ) -> CommandHandle:
        duration = self._seconds(verb, "duration", duration, cid, joints)
        timeout = self._seconds(verb, "timeout", timeout, cid, joints, strict=True)
        state = self._check_ready(verb, joints, cid)
        soft = self._soft.select(joints)
        self._check_range(verb, "position", targets, soft.lower, soft.upper, joints, cid)
        limits = self._limits(joints)
        if velocity is not None:
            speed = np.abs(np.broadcast_to(np.asarray(velocity, float), joints.shape))
            self._check_range(
                verb, "velocity", speed, np.zeros(len(joints)) + 1e-12, soft.velocity, joints, cid
            )
            limits = limits.with_velocity(speed)
        start = self._out.start_state(joints, state)
        motion = plan_move(
            limits,
            start[0],
            targets,
            start_velocity=start[1],
            start_acceleration=start[2],
            minimum_duration=duration,
        )
        return self._start(
            verb,
            joints,
            lambda h: MotionCommand(h, joints, state.time, motion, start[0]),
            cid,
            False,
            state,
            timeout=timeout,
        )

    # ================================================================== velocity
    @checked
    def set_velocity(
        self,
        joint: Joint,
        velocity: float,
        duration: float | None = None,
        *,
        timeout: float | None = None,
        command_id: Hashable | None = None,
    ) -> CommandHandle:
        """Run one joint (or every joint, ``-1``) at ``velocity`` (rad/s or m/s) (CMD SPEED).

        The joint ramps to the velocity (jerk-limited), runs for ``duration`` seconds from the
        command (or until stopped), then decelerates to rest and holds; it also stops, on its
        soft limit, if it would otherwise cross it (reported as a ``clamped`` event).
        ``timeout`` as in :meth:`set_position`.
        """
        joints = self._joints(joint, "set_velocity", command_id)
        return self._velocity(
            "set_velocity",
            joints,
            np.full(len(joints), float(velocity)),
            duration,
            command_id,
            timeout,
        )

    @checked
    def set_velocities(
        self,
        velocities: Any,
        duration: float | None = None,
        *,
        timeout: float | None = None,
        command_id: Hashable | None = None,
    ) -> CommandHandle:
        """Run every independent joint at ``velocities`` (shape ``(dof,)``; MULTI_SPEED)."""
        values = np.asarray(velocities, dtype=np.float64).reshape(-1)
        if values.shape[0] != self.dof:
            raise self._refuse(
                "set_velocities",
                "out_of_limits",
                f"got {values.shape[0]} velocities, expected {self.dof}",
                command_id,
            )
        joints = np.flatnonzero(~np.isnan(values) & ~self.description.dependent)
        return self._velocity(
            "set_velocities", joints, values[joints], duration, command_id, timeout
        )

    def _velocity(
        self,
        verb: str,
        joints: np.ndarray,
        velocity: np.ndarray,
        duration: float | None,
        cid: Hashable | None,
        timeout: float | None = None,
    ) -> CommandHandle:
        duration = self._seconds(verb, "duration", duration, cid, joints)
        timeout = self._seconds(verb, "timeout", timeout, cid, joints, strict=True)
        state = self._check_ready(verb, joints, cid)
        soft = self._soft.select(joints)
        self._check_range(verb, "velocity", velocity, -soft.velocity, soft.velocity, joints, cid)
        limits = self._limits(joints)
        start = self._out.start_state(joints, state)
        motion, notes = plan_velocity_run(limits, start, velocity, duration)
        return self._start(
            verb,
            joints,
            lambda h: MotionCommand(h, joints, state.time, motion, start[0]),
            cid,
            False,
            state,
            notes,
            timeout=timeout,
        )

    # ================================================================== effort / current
    @checked
    def set_effort(
        self,
        joint: Joint,
        effort: float,
        duration: float | None = None,
        *,
        timeout: float | None = None,
        command_id: Hashable | None = None,
    ) -> CommandHandle:
        """Apply ``effort`` (N·m or N) to one joint (or all, ``-1``), PD off (BB set_effort).

        It lasts ``duration`` seconds or until replaced; then the joint holds where it is
        (``end_motion``). ``timeout`` as in :meth:`set_position`.
        """
        joints = self._joints(joint, "set_effort", command_id)
        return self._effort(
            "set_effort", joints, np.full(len(joints), float(effort)), duration, command_id, timeout
        )

    @checked
    def set_current(
        self,
        joint: Joint,
        current: float,
        duration: float | None = None,
        *,
        timeout: float | None = None,
        command_id: Hashable | None = None,
    ) -> CommandHandle:
        """Drive one joint (or all, ``-1``) with motor ``current`` (A) (Player CMD CURRENT).

        The joint torque is ``current · torque_constant · gear_ratio`` (the motor model).
        """
        joints = self._joints(joint, "set_current", command_id)
        return self._current(
            "set_current",
            joints,
            np.full(len(joints), float(current)),
            duration,
            command_id,
            timeout,
        )

    @checked
    def set_currents(
        self,
        currents: Any,
        duration: float | None = None,
        *,
        timeout: float | None = None,
        command_id: Hashable | None = None,
    ) -> CommandHandle:
        """Motor currents (A) for every independent joint, shape ``(dof,)`` (MULTI_CURRENT)."""
        values = np.asarray(currents, dtype=np.float64).reshape(-1)
        if values.shape[0] != self.dof:
            raise self._refuse(
                "set_currents",
                "out_of_limits",
                f"got {values.shape[0]} currents, expected {self.dof}",
                command_id,
            )
        joints = np.flatnonzero(~np.isnan(values) & ~self.description.dependent)
        return self._current("set_currents", joints, values[joints], duration, command_id, timeout)

    def _current(
        self,
        verb: str,
        joints: np.ndarray,
        amps: np.ndarray,
        duration: float | None,
        cid: Hashable | None,
        timeout: float | None = None,
    ) -> CommandHandle:
        motors = [self.description.joints[j].motor for j in joints]
        limit = np.array([m.max_current for m in motors])
        self._check_range(verb, "current", amps, -limit, limit, joints, cid)
        gain = np.array([m.torque_constant * m.gear_ratio for m in motors])
        return self._effort(verb, joints, amps * gain, duration, cid, timeout)

    def _effort(
        self,
        verb: str,
        joints: np.ndarray,
        effort: np.ndarray,
        duration: float | None,
        cid: Hashable | None,
        timeout: float | None = None,
    ) -> CommandHandle:
        duration = self._seconds(verb, "duration", duration, cid, joints)
        timeout = self._seconds(verb, "timeout", timeout, cid, joints, strict=True)
        state = self._check_ready(verb, joints, cid)
        limit = self.description.soft_effort_limit[joints]
        self._check_range(verb, "effort", effort, -limit, limit, joints, cid)
        return self._start(
            verb,
            joints,
            lambda h: EffortCommand(h, joints, state.time, effort, duration),
            cid,
            duration is None and timeout is None,
            state,
            timeout=timeout,
        )

    # ================================================================== hold / stop
    @checked
    def hold(self, joints: Any = None, *, command_id: Hashable | None = None) -> CommandHandle:
        """Actively hold the current positions of ``joints`` (default all) until replaced."""
        joints = self._joint_set(joints, "hold", command_id)
        state = self._check_ready("hold", joints, command_id)
        position = state.position[joints]
        return self._start(
            "hold",
            joints,
            lambda h: HoldCommand(h, joints, state.time, position, False),
            command_id,
            True,
            state,
        )

    @checked
    def stop(self, mode: str = "immediate", *, command_id: Hashable | None = None) -> CommandHandle:
        """Stop every joint: ``"immediate"`` (hold where it is now) or ``"decelerate"``.

        ``"decelerate"`` brakes each joint from its current reference as fast as the
        acceleration and jerk limits allow (ruckig), then holds. Accepted even when disarmed.
        """
        if mode not in ("immediate", "decelerate"):
            raise ConfigurationError(f"stop mode must be 'immediate' or 'decelerate', got {mode!r}")
        joints = self._free
        state = self.robot.read()
        if mode == "immediate":
            position = state.position[joints]
            return self._start(
                "stop",
                joints,
                lambda h: HoldCommand(h, joints, state.time, position, True),
                command_id,
                False,
                state,
            )
        start = self._out.start_state(joints, state)
        motion = plan_stop(self._limits(joints), *start)
        return self._start(
            "stop",
            joints,
            lambda h: MotionCommand(h, joints, state.time, motion, start[0]),
            command_id,
            False,
            state,
        )

    def _joint_set(self, joints: Any, verb: str, cid: Hashable | None) -> np.ndarray:
        if joints is None or (isinstance(joints, (int, np.integer)) and joints == -1):
            return self._free
        if isinstance(joints, (int, np.integer, str)):
            return np.array([self._joint(joints, verb, cid)])
        return np.array([self._joint(j, verb, cid) for j in joints], dtype=int)

    # ================================================================== trajectories
    @checked
    def follow_trajectory(
        self,
        waypoints: Iterable[Any],
        joints: Any = None,
        repeat: Repeat = 1,
        *,
        command_id: Hashable | None = None,
    ) -> CommandHandle:
        """Follow waypoints (BB follow_trajectory); see :mod:`jointlab.controllers.trajectory`.

        Args:
            waypoints: Waypoints (times in seconds; see ``from_milliseconds``).
            joints: A joint (scalar waypoint positions) or a list of joints (arrays); default
                every independent joint.
            repeat: Number of passes or ``"forever"``.
            command_id: Correlation id for the events.
        """
        verb = "follow_trajectory"
        joint_list = self._joint_set(joints, verb, command_id)
        state = self._check_ready(verb, joint_list, command_id)
        start = self._out.start_state(joint_list, state)
        try:
            trajectory = Trajectory.build(
                waypoints,
                self._soft.select(joint_list),
                timing_limits=self._limits(joint_list),
                start=start,
                repeat=repeat,
                start_tolerance=self.start_tolerance,
            )
        except CommandRefused as error:
            raise self._refuse(verb, error.reason, str(error), command_id, joint_list) from error
        return self._start(
            verb,
            joint_list,
            lambda h: MotionCommand(h, joint_list, state.time, trajectory, start[0]),
            command_id,
            math.isinf(trajectory.duration),
            state,
        )

    # ================================================================== streamed targets
    @checked
    def stream(
        self,
        positions: Any = None,
        velocities: Any = None,
        efforts: Any = None,
        joints: Any = None,
        *,
        stale_after: float | None = 0.5,
        command_id: Hashable | None = None,
    ) -> CommandHandle:
        """Follow streamed targets, replaced by every call (see :mod:`.streaming`).

        The first of ``positions``, ``velocities``, ``efforts`` given (not all NaN) sets
        the mode; the others are feed-forward. A call on the same joints in the same mode
        as the running stream replaces its targets without new events; any other starts a
        new stream (``accepted``), taking its joints over.

        Args:
            positions: Targets, rad or m, shape ``(n,)``; NaN leaves a joint out.
            velocities: Velocity targets or feed-forward, rad/s or m/s, ``(n,)``; NaN: 0 as
                feed-forward, left out as targets.
            efforts: Effort targets or feed-forward, N·m or N, ``(n,)``; finite.
            joints: Indices or names of the ``n`` joints (default every independent joint).
            stale_after: Seconds of robot time a velocity or effort stream runs without a
                new call before it ends ``stalled`` (``no_update``) and holds; None: never.
            command_id: Correlation id for the events of a new stream.

        Refused (``CommandRefused``, a ``refused`` event with ``field`` in its data):
        ``bad_command`` (a length other than ``n``, no target, inf, NaN effort),
        ``unsupported_by_device`` (an effort to a position-only joint), ``out_of_limits``
        (beyond a soft limit), and ``disarmed``, ``unpowered``, ``braked``,
        ``unknown_joint``, ``dependent_joint``.
        """
        verb = "stream"
        joint_list = self._joint_set(joints, verb, command_id)
        n = joint_list.shape[0]
        fields = {}
        for name, values in (
            ("position", positions),
            ("velocity", velocities),
            ("effort", efforts),
        ):
            if values is None:
                continue
            array = np.asarray(values, dtype=np.float64).reshape(-1)
            if array.shape[0] != n:
                raise self._refuse(
                    verb,
                    "bad_command",
                    f"{name} has {array.shape[0]} values for {n} joints",
                    command_id,
                    joint_list,
                    field=name,
                )
            if np.isinf(array).any() or (name == "effort" and np.isnan(array).any()):
                bad = int(np.flatnonzero(~np.isfinite(array))[0])
                raise self._refuse(
                    verb,
                    "bad_command",
                    f"{name}[{bad}] is {array[bad]} (joint "
                    f"{self.description.joint_names[joint_list[bad]]}): "
                    f"{'finite' if name == 'effort' else 'a number or NaN'} "
                    "expected",
                    command_id,
                    joint_list,
                    field=f"{name}[{bad}]",
                )
            fields[name] = array
        mode = stream_mode(fields.get("position"), fields.get("velocity"), fields.get("effort"))
        if mode is None:
            raise self._refuse(
                verb,
                "bad_command",
                "no position, velocity or effort target",
                command_id,
                joint_list,
                field="position",
            )
        given = ~np.isnan(fields[mode]) if mode != "effort" else np.ones(n, dtype=bool)
        if mode == "effort" and not self._torque_capable[joint_list].all():
            names = [
                self.description.joint_names[j] for j in joint_list if not self._torque_capable[j]
            ]
            raise self._refuse(
                verb,
                "unsupported_by_device",
                f"joints {names} are position-only servos: they take no effort",
                command_id,
                joint_list,
                field="effort",
            )
        picked = joint_list[given]
        nan = np.full(picked.shape[0], np.nan)
        zero = np.zeros(picked.shape[0])
        position = fields["position"][given] if mode == "position" else nan
        velocity = (
            np.nan_to_num(fields["velocity"][given], nan=0.0) if "velocity" in fields else zero
        )
        effort = fields["effort"][given] if "effort" in fields else zero
        state = self._check_ready(verb, picked, command_id)
        soft = self._soft.select(picked)
        if mode == "position":
            self._check_range(
                verb, "position", position, soft.lower, soft.upper, picked, command_id
            )
        self._check_range(
            verb, "velocity", velocity, -soft.velocity, soft.velocity, picked, command_id
        )
        limit = self.description.soft_effort_limit[picked]
        self._check_range(verb, "effort", effort, -limit, limit, picked, command_id)
        targets = StreamTargets(mode, picked, position, velocity, effort)
        running = self._owner[int(picked[0])] if picked.shape[0] else None
        if (
            isinstance(running, StreamCommand)
            and running.mode == mode
            and running.owned.all()
            and np.array_equal(running.joints, picked)
        ):
            running.update(targets, state.time)
            return running.handle
        seconds = (
            None
            if stale_after is None
            else self._seconds(verb, "stale_after", stale_after, command_id, picked, strict=True)
        )
        return self._start(
            verb,
            picked,
            lambda h: StreamCommand(
                h, state.time, targets, self._soft.lower, self._soft.upper, seconds
            ),
            command_id,
            True,
            state,
        )

    # ================================================================== requests
    def _request(
        self,
        verb: str,
        action: Callable[[], Any],
        joints: Iterable[int] = (),
        cid: Hashable | None = None,
    ) -> CommandHandle:
        handle = CommandHandle(self._command_id(cid), verb, tuple(joints), False)
        action()
        self._emit(
            handle,
            CommandEventKind.ACCEPTED,
            self.robot.time,
            handle.joints,
            status=CommandStatus.SUCCEEDED,
        )
        return handle

    @checked
    def configure_speed(
        self, joint: Joint, speed: float, *, command_id: Hashable | None = None
    ) -> CommandHandle:
        """Set the configured speed of ``joint`` (``-1``: all) for later moves (REQ SPEED)."""
        return self._configure(
            "configure_speed",
            "speed",
            joint,
            speed,
            self._soft.velocity,
            self.robot.configure_speed,
            command_id,
        )

    @checked
    def configure_accel(
        self, joint: Joint, accel: float, *, command_id: Hashable | None = None
    ) -> CommandHandle:
        """Set the configured acceleration of ``joint`` (``-1``: all) (Player REQ ACCEL)."""
        return self._configure(
            "configure_accel",
            "acceleration",
            joint,
            accel,
            self._soft.acceleration,
            self.robot.configure_accel,
            command_id,
        )

    def _configure(
        self,
        verb: str,
        what: str,
        joint: Joint,
        value: float,
        limit: np.ndarray,
        apply: Callable[[int, float], None],
        cid: Hashable | None,
    ) -> CommandHandle:
        joints = self._joints(joint, verb, cid)
        self._check_range(
            verb,
            what,
            np.full(len(joints), float(value)),
            np.full(len(joints), 1e-12),
            limit[joints],
            joints,
            cid,
        )

        def configure() -> None:
            for j in joints.tolist():
                apply(j, value)

        return self._request(verb, configure, tuple(joints.tolist()), cid)

    @checked
    def power(self, on: bool, *, command_id: Hashable | None = None) -> CommandHandle:
        """Switch motor power (Player REQ POWER)."""
        return self._request("power", lambda: self.robot.power(on), (), command_id)

    @checked
    def brakes(self, on: bool, *, command_id: Hashable | None = None) -> CommandHandle:
        """Engage or release the brakes (Player REQ BRAKES)."""
        return self._request("brakes", lambda: self.robot.brakes(on), (), command_id)

    def geometry(self) -> ArrayGeometry:
        """The robot's geometry (Player REQ GET_GEOM)."""
        return self.robot.geometry()
