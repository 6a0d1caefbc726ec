"""The runtime under the :class:`~jointlab.controllers.commander.Commander`.

:class:`CommandDispatcher` owns the running commands and the per-tick pipeline::

    commands write references → + model feed-forward → NJointAction → safety layer

The feed-forward, on joints under PD, is the gravity torque ``g(q)`` plus ``M(q)·q̈_ref +
damping·q̇_ref`` (inertia and viscous friction of the description), so the PD only corrects
errors. The model is an argument; by default the robot's own (``robot.dynamics_model()``: on
PyBullet, Bullet's rigid-body algorithms where they agree with the numpy model, about a tenth
of its time per ``g`` or ``M``; elsewhere the numpy model). With Bullet's,
``g(q) + M(q)·q̈_ref`` is one inverse dynamics at the tick's ``q`` (at ``q̇ = 0``: no
Coriolis term), as cheap as ``g(q)`` alone; with the numpy model, ``M(q)`` is refreshed
every ``inertia_period`` seconds and ``g(q)`` computed every tick.

It keeps which command drives which joint (a newer command on a joint preempts the older
one there), publishes feedback events to subscribers and a queue, and checks whether a new
command may start (armed, powered, brakes, joint names, limits). It is a controller
(``reset``/``compute``) and never drives the robot: the control loop does
(:mod:`jointlab.controllers.loop`: ``run``, ``tick``, ``drive_until_done``).
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from dataclasses import replace
from typing import Any

import numpy as np

from jointlab.contract import Robot
from jointlab.controllers.commands import ActiveCommand, Outputs, Tolerances
from jointlab.controllers.events import (
    CommandEvent,
    CommandEventKind,
    CommandHandle,
    CommandStatus,
)
from jointlab.controllers.motion import MotionLimits
from jointlab.controllers.safety import (
    DynamicLimitsCheckMode,
    SafetyLayer,
    SafetyLimits,
    SafetyPolicy,
)
from jointlab.errors import CommandRefused, ConfigurationError
from jointlab.interface import ArrayState, NJointAction
from jointlab.joint_vectors import check_gains, check_torque, constants

__all__ = ["CommandDispatcher"]


class CommandDispatcher:
    """Runs commands on a robot: ownership, events, checks and the control tick.

    Args:
        robot: Any :class:`~jointlab.contract.Robot`.
        gravity_compensation: Add the gravity torque to joints under PD.
        model_feedforward: Add ``M(q)·q̈_ref + damping·q̇_ref`` to joints under PD.
        inertia_period: Seconds between refreshes of ``M(q)`` (it changes slowly with ``q``);
            0 refreshes it every tick. Used with the numpy model only: Bullet's gives
            ``g(q) + M(q)·q̈_ref`` at every tick's ``q`` in one inverse dynamics.
        kp: PD gains for every action (N·m/rad), ``(dof,)``; ``None``: the description's.
        kd: D gains (N·m·s/rad), likewise.
        tolerances: When a target counts as reached / a joint as still.
        safety_policy: Clamp-and-report or refuse at run time.
        check_mode: Whether the safety layer enforces acceleration on position targets.
            Default ``CHECK_NONE``: the Commander's own motions are jerk-limited by
            construction and ``stop("immediate")`` must stay immediate.
        start_tolerance: Largest gap between the current position and a trajectory's
            waypoint at 0 s (rad or m).
        max_events: Length of the :attr:`events` queue (oldest dropped first).
        dynamics: The rigid-body model of the feed-forward (methods of
            :class:`~jointlab.robots.dynamics.DynamicsModel`); None: ``robot.dynamics_model()``.
    """

    def __init__(
        self,
        robot: Robot,
        *,
        gravity_compensation: bool = True,
        model_feedforward: bool = True,
        inertia_period: float = 0.02,
        kp: Any = None,
        kd: Any = None,
        tolerances: Tolerances | None = None,
        safety_policy: SafetyPolicy = SafetyPolicy.CLAMP,
        check_mode: DynamicLimitsCheckMode = DynamicLimitsCheckMode.CHECK_NONE,
        start_tolerance: float = 1e-2,
        max_events: int = 10_000,
        dynamics: Any = None,
    ) -> None:
        self.robot = robot
        self.description = robot.description
        desc = self.description
        self.dof = desc.dof
        tolerances = tolerances or Tolerances()
        self.start_tolerance = float(start_tolerance)
        self._gravity = bool(gravity_compensation)
        # Position-only actuators (servos without current control) take no feed-forward
        # torque; compute() turns theirs into a target offset.
        self._torque_capable = np.asarray(robot.torque_capable, dtype=bool)
        self._lower, self._upper = desc.lower, desc.upper
        self._model_ff = bool(model_feedforward)
        self._inertia_period = float(inertia_period)
        self._mass = np.zeros((desc.dof, desc.dof))
        self._damping = desc.damping
        # [diag(damping) | M(q)] @ [ref_v, ref_a]: the model feed-forward as one product
        self._inertia_map = np.hstack([np.diag(self._damping), self._mass])
        if dynamics is None and (gravity_compensation or model_feedforward):
            dynamics = robot.dynamics_model()
        self.dynamics = dynamics
        self.kp = self._gains(kp, "kp")
        self.kd = self._gains(kd, "kd")
        # The P gain the robot uses (the description's where none or NaN is given).
        gain = desc.default_kp if self.kp is None else self.kp
        self._kp_in_use = np.where(np.isnan(gain), desc.default_kp, gain)
        self.tolerances = replace(tolerances, position=self._reach_tolerance(tolerances.position))
        # Joints whose feed-forward becomes a target offset; None when there are none.
        offset = ~self._torque_capable & (self._kp_in_use > 0)
        self._offset_joints = offset if offset.any() else None
        self._all_torque_capable = bool(self._torque_capable.all())
        self.safety = SafetyLayer(
            SafetyLimits.from_description(desc),
            robot.control_dt,
            policy=safety_policy,
            check_mode=check_mode,
        )
        self._soft = MotionLimits.from_description(desc)
        #: Recent events of every command, oldest first (see also :meth:`subscribe`).
        self.events: deque[CommandEvent] = deque(maxlen=max_events)
        self._subscribers: list[Callable[[CommandEvent], None]] = []
        self._ids = itertools.count(1)
        self._used_ids: set[Hashable] = set()  # every id seen, so automatic ones never collide
        self._active: list[ActiveCommand] = []
        self._owner: list[ActiveCommand | None] = [None] * self.dof
        state = robot.read()
        self._out = Outputs(state.position)
        self._last_time = state.time
        self._zero = NJointAction.Zero(self.dof)
        self._nan = np.full(self.dof, np.nan)
        self._free = np.flatnonzero(~desc.dependent)
        # dependent joints follow their leaders: never send them a PD target of their own
        self._independent = None if not desc.dependent.any() else ~desc.dependent
        self._every_joint = np.ones(self.dof, dtype=bool)  # the PD mask of an all-PD tick
        self._every_joint.setflags(write=False)
        self._no_feedforward = np.zeros(self.dof)
        self._no_feedforward.setflags(write=False)
        #: The action the commands asked for on the last tick (before the safety layer).
        self.last_desired: NJointAction | None = None
        #: The action sent to the robot on the last tick.
        self.last_applied: NJointAction | None = None
        #: What the commands asked for on the last tick, before any model feed-forward or
        #: target offset: their torque, position and velocity references (NaN off PD).
        self.last_commanded: NJointAction | None = None
        #: The model feed-forward of the last tick (gravity, inertia), N·m, shape ``(dof,)``;
        #: on position-only servos it reaches the robot as a target offset, not a torque.
        self.last_feedforward: np.ndarray = np.zeros(self.dof)

    def _gains(self, value: Any, name: str) -> np.ndarray:
        """Gains of every action, shape ``(dof,)``, read-only; NaN: the robot's default."""
        if value is None:
            return constants(self.dof)[1]
        try:
            gains = np.broadcast_to(np.asarray(value, dtype=np.float64), (self.dof,)).copy()
            check_gains(f"position_{name}", gains)
        except (ValueError, TypeError) as error:
            raise ConfigurationError(
                f"{name} must be a number or {self.dof} numbers >= 0 (NaN: the default), got "
                f"{value!r}: {error}"
            ) from error
        gains.setflags(write=False)
        return gains

    # ================================================================== events
    def subscribe(self, callback: Callable[[CommandEvent], None]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event; returns a function that unsubscribes."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def get_events(self) -> list[CommandEvent]:
        """Remove and return the queued events, oldest first."""
        out = list(self.events)
        self.events.clear()
        return out

    def _emit(
        self,
        handle: CommandHandle | None,
        kind: CommandEventKind,
        time: float,
        joints: Iterable[int],
        message: str = "",
        data: dict[str, Any] | None = None,
        status: CommandStatus | None = None,
        command_id: Hashable | None = None,
    ) -> CommandEvent:
        event = CommandEvent(
            kind,
            handle.command_id if handle else command_id,
            time,
            tuple(int(j) for j in joints),
            message,
            data or {},
        )
        if handle is not None:
            handle._record(event, status)
        self.events.append(event)
        for callback in list(self._subscribers):
            callback(event)
        return event

    # ================================================================== checks
    def _command_id(self, given: Hashable | None) -> Hashable:
        """``given``, or the next counter value no command of this Commander has used yet.

        Automatic ids skip every id a caller has supplied, so they never collide with one (a
        caller reusing an id of its own is its own choice).
        """
        if given is not None:
            self._used_ids.add(given)
            return given
        cid = next(self._ids)
        while cid in self._used_ids:
            cid = next(self._ids)
        self._used_ids.add(cid)
        return cid

    def _refuse(
        self,
        verb: str,
        reason: str,
        message: str,
        command_id: Hashable | None,
        joints: Iterable[int] = (),
        *,
        field: str | None = None,
    ) -> CommandRefused:
        """A refusal: its ``refused`` event (``reason``, and ``field`` when given) and error."""
        cid = self._command_id(command_id)
        handle = CommandHandle(cid, verb, tuple(joints), open_ended=False)
        data = {"reason": reason} if field is None else {"reason": reason, "field": field}
        self._emit(
            handle,
            CommandEventKind.REFUSED,
            self.robot.time,
            handle.joints,
            f"{verb} refused: {message}",
            data,
            CommandStatus.REFUSED,
        )
        error = CommandRefused(f"{verb} refused ({reason}): {message}", reason=reason)
        error.command_id = cid  # type: ignore[attr-defined]
        return error

    def _joint(self, joint: Any, verb: str, command_id: Hashable | None) -> int:
        desc = self.description
        if isinstance(joint, (int, np.integer)) and not isinstance(joint, bool):
            if 0 <= int(joint) < self.dof:
                index = int(joint)
            else:
                raise self._refuse(
                    verb,
                    "unknown_joint",
                    f"joint index {joint} is not in 0..{self.dof - 1} ({list(desc.joint_names)})",
                    command_id,
                )
        elif isinstance(joint, str) and joint in desc.joint_names:
            index = desc.joint_names.index(joint)
        else:
            raise self._refuse(
                verb,
                "unknown_joint",
                f"robot {desc.name!r} has no joint {joint!r}; joints: {list(desc.joint_names)}",
                command_id,
            )
        if desc.dependent[index]:
            raise self._refuse(
                verb,
                "dependent_joint",
                f"joint {index} ({desc.joint_names[index]})"
                " is coupled to other joints and cannot be commanded",
                command_id,
                (index,),
            )
        return index

    def _check_ready(self, verb: str, joints: np.ndarray, cid: Hashable | None) -> ArrayState:
        state = self.robot.read()
        if not state.motor_power:  # checked first: power off also disarms
            raise self._refuse(
                verb, "unpowered", "motor power is off; call power(True) and arm()", cid, joints
            )
        if not state.armed:
            raise self._refuse(
                verb, "disarmed", "the robot is disarmed; call arm() first", cid, joints
            )
        if state.brakes:
            # Brakes on parks the whole array (Player REQ BRAKES; a device NACKs motion with
            # BRAKED), so every motion command is refused, not only those of braked joints.
            braked = np.flatnonzero(self.description.has_brakes)
            names = [self.description.joint_names[j] for j in braked]
            raise self._refuse(
                verb,
                "braked",
                f"the brakes are engaged on joints "
                f"{braked.tolist()} {names}; call brakes(False) first",
                cid,
                joints,
            )
        return state

    def _check_range(
        self,
        verb: str,
        what: str,
        values: np.ndarray,
        low: np.ndarray,
        high: np.ndarray,
        joints: np.ndarray,
        cid: Hashable | None,
    ) -> None:
        bad = ~((values >= low) & (values <= high))
        if bad.any():
            names = self.description.joint_names
            parts = [
                f"{what} {values[k]:.6g} of joint {int(joints[k])} ({names[joints[k]]}) is "
                f"outside [{low[k]:.6g}, {high[k]:.6g}]"
                for k in np.flatnonzero(bad)
            ]
            raise self._refuse(verb, "out_of_limits", "; ".join(parts), cid, joints, field=what)

    # ================================================================== bookkeeping
    def _start(
        self,
        verb: str,
        joints: np.ndarray,
        command: Callable[[CommandHandle], Any],
        cid: Hashable | None,
        open_ended: bool,
        state: ArrayState,
        notes: Iterable[str] = (),
        timeout: float | None = None,
    ) -> CommandHandle:
        handle = CommandHandle(
            self._command_id(cid), verb, tuple(int(j) for j in joints), open_ended
        )
        taken = set(handle.joints)
        for other in list(self._active):
            lost = other.release(taken)
            if not lost:
                continue
            status = CommandStatus.PREEMPTED if other.empty else None
            self._emit(
                other.handle,
                CommandEventKind.PREEMPTED,
                state.time,
                lost,
                f"preempted by {verb} command {handle.command_id!r}",
                {"by": handle.command_id} if isinstance(handle.command_id, (int, str)) else {},
                status,
            )
            if other.empty:
                self._active.remove(other)
        active = command(handle)
        active.timeout = timeout
        self._active.append(active)
        for j in handle.joints:
            self._owner[j] = active
        self._emit(handle, CommandEventKind.ACCEPTED, state.time, handle.joints)
        for note in notes:
            self._emit(
                handle,
                CommandEventKind.CLAMPED,
                state.time,
                handle.joints,
                note,
                {"quantity": "position"},
            )
        return handle

    def _limits(self, joints: np.ndarray) -> MotionLimits:
        return MotionLimits.from_robot(self.robot).select(joints)

    def _preempt_all(self, time: float, reason: str) -> None:
        for command in self._active:
            self._emit(
                command.handle,
                CommandEventKind.PREEMPTED,
                time,
                command.joints[command.owned],
                reason,
                {"reason": reason},
                CommandStatus.PREEMPTED,
            )
        self._active.clear()
        self._owner = [None] * self.dof

    # ================================================================== the tick
    @property
    def idle(self) -> bool:
        """True when no command with a natural end is still running."""
        return not any(not c.handle.open_ended for c in self._active)

    @property
    def active(self) -> tuple[CommandHandle, ...]:
        """Handles of the running commands."""
        return tuple(c.handle for c in self._active)

    def reset(self, state: ArrayState) -> None:
        """Start of a run: undriven joints hold where they are; a robot reset ends commands."""
        if state.time < self._last_time:
            self._preempt_all(state.time, "robot reset")
        undriven = np.array([owner is None for owner in self._owner])
        self._out.hold(undriven, state.position[undriven])
        self.safety.reset()
        self._last_time = state.time

    def compute(self, state: ArrayState) -> NJointAction:
        """One control tick: run the commands, add gravity, apply the safety layer."""
        self._last_time = state.time
        if not state.armed or not state.motor_power or state.brakes:
            if self._active:
                reason = (
                    "unpowered"
                    if not state.motor_power
                    else "disarmed"
                    if not state.armed
                    else "braked"
                )
                self._preempt_all(state.time, reason)
            self._out.hold(slice(None), state.position)
            self.safety.reset()
            self.last_desired = self.last_applied = self.last_commanded = self._zero
            self.last_feedforward = self._no_feedforward
            return self._zero
        out = self._out
        time = state.time
        if self._active:
            self._run_commands(state, out)
        pd = out.pd if self._independent is None else out.pd & self._independent
        # Every joint under PD (the common tick): no masking, and the action's PD mask is the
        # shared all-True one.
        every = np.count_nonzero(pd) == self.dof
        torque = out.tau
        position = None
        extra = self._no_feedforward
        if self._dynamics is not None:
            extra = self._feedforward(state, out)
            if every and self._all_torque_capable:
                torque = torque + extra
            else:
                capable = pd if self._all_torque_capable else pd & self._torque_capable
                torque = torque + np.where(capable, extra, 0.0)
            if self._offset_joints is not None:
                position = self._offset_targets(pd, extra, out)
        # The references come from checked commands and planned motions, the gains were
        # checked once: only the torque (gravity of a diverged state) needs a check per tick.
        check_torque(torque)
        if every:  # position and velocity references as they are
            targets, mask = out.refs[:2].copy(), self._every_joint
        else:  # NaN without PD
            targets, mask = np.where(pd, out.refs[:2], np.nan), pd.copy()
        action = NJointAction.from_validated(
            torque, targets[0] if position is None else position, self.kp, self.kd, targets[1], mask
        )
        self.last_commanded = NJointAction.from_validated(
            out.tau.copy(), targets[0], self.kp, self.kd, targets[1], mask
        )
        self.last_feedforward = extra
        result = self.safety.filter(action, state)
        for event in result.events:
            owner = self._owner[event.joints[0]] if event.joints else None
            self._emit(
                owner.handle if owner else None,
                CommandEventKind.CLAMPED,
                time,
                event.joints,
                event.message,
                {
                    "quantity": event.quantity,
                    "requested": list(event.requested),
                    "applied": list(event.applied),
                    "limit": list(event.limit),
                },
            )
        self.last_desired = action
        self.last_applied = result.applied
        return result.applied

    def _run_commands(self, state: ArrayState, out: Outputs) -> None:
        """Let every active command write its references; publish their events."""
        time = state.time
        tol = self.tolerances
        for command in list(self._active):
            reports = command.tick(time, state, out, tol)
            for kind, status, message, data in reports:
                # a report about some of the command's joints names them as data["joints"]
                joints = data.pop("joints") if "joints" in data else command.joints[command.owned]
                self._emit(command.handle, kind, time, joints, message, data, status)
                if status is not None:
                    self._active.remove(command)
                    for j in command.joints:
                        if self._owner[j] is command:
                            self._owner[j] = None

    def _feedforward(self, state: ArrayState, out: Outputs) -> np.ndarray:
        """Model torques of this tick: ``g(q)``, plus ``M(q)·q̈_ref + damping·q̇_ref``."""
        dynamics = self._dynamics
        if not self._model_ff:  # then gravity compensation is on (or there is no model)
            return dynamics.gravity_torque(state.position)
        if self._at_rest:  # g(q) + M(q)·q̈_ref at this q, the armature's share in the map
            return dynamics.rigid_torque_at_rest(state.position, out.ref_a) + self._inertia_map.dot(
                out.ref_va
            )
        if 0.0 <= state.time - self._inertia_from < self._inertia_period:
            gravity = dynamics.gravity_torque(state.position) if self._gravity else 0.0
        else:  # every inertia_period, the first tick (no M yet), time gone back (a reset)
            gravity, mass = dynamics.gravity_and_mass_matrix(state.position)
            self._use_mass(mass)
            self._inertia_from = state.time
        if not self._gravity:
            gravity = 0.0
        return gravity + self._inertia_map.dot(out.ref_va)

    def _use_mass(self, mass: np.ndarray) -> None:
        """Make ``mass`` (``M(q)``, ``(dof, dof)``) the one the model feed-forward uses."""
        self._mass = mass
        self._inertia_map[:, self.dof :] = mass

    @property
    def dynamics(self) -> Any:
        """The rigid-body model of the feed-forward (the ``dynamics`` argument), or None.

        Assignable (another model of the same robot): the feed-forward follows it from the
        next tick.
        """
        return self._dynamics

    @dynamics.setter
    def dynamics(self, model: Any) -> None:
        self._dynamics = model
        # Bullet's model: g(q) + M_rigid(q)·q̈ per tick from its inverse dynamics, the
        # viscous and armature terms as [diag(damping) | diag(armature)] @ [ref_v, ref_a];
        # another model: M(q) from the next tick on, then every inertia_period.
        self._at_rest = self._gravity and self._model_ff and hasattr(model, "rigid_torque_at_rest")
        self._inertia_map[:, self.dof :] = np.diag(model.armature) if self._at_rest else self._mass
        self._inertia_from = math.inf  # time of the current M(q); inf: compute at the next tick

    def _reach_tolerance(self, position: float) -> float:
        """``Tolerances.position`` for this robot and gains, rad or m.

        At least two sensor steps: a servo reports whole encoder ticks and its position loop
        settles anywhere within ±1 tick of the goal. At least the friction deadband plus one
        step: a joint under PD stops wherever its static friction holds the P term, within
        ``static_friction / kp`` of the goal (koch's shoulder servos: 3.9 mrad at their
        gains, more than two 1.5 mrad ticks), and is read to within a tick of that.
        """
        step = float(np.max(self.robot.position_resolution, initial=0.0))
        kp = self._kp_in_use
        friction = np.asarray(self.description.static_friction, dtype=np.float64)
        held = kp > 0
        deadband = float(np.max(friction[held] / kp[held], initial=0.0))
        return max(position, 2.0 * step, deadband + step)

    def _offset_targets(self, pd: np.ndarray, extra: np.ndarray, out: Outputs) -> np.ndarray:
        """PD targets with the feed-forward of position-only servos as an offset.

        A position-only servo takes no torque: its feed-forward goes in as a target offset
        instead, ``kp·(p + f/kp − q) = kp·(p − q) + f``, within the joint's range.
        """
        offset = pd & self._offset_joints
        shifted = out.ref_p + extra / np.where(offset, self._kp_in_use, 1.0)
        target = np.where(offset, np.clip(shifted, self._lower, self._upper), out.ref_p)
        return np.where(pd, target, np.nan)
