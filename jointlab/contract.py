"""The :class:`Robot` base every backend implements, and the checks it owns.

``from jointlab.contract import Robot`` (or ``from jointlab import Robot``); this module
holds it so that the value classes (:mod:`jointlab.interface`, below it) and the contract
stay one concept each.
Backends implement the hooks (``_read``, ``_apply``, ``_step``, ``_reset``, ``_power``,
``_brakes``, ``_arm``, ``_disarm``, ``_configure_speed``, ``_configure_accel``,
``_geometry``, ``_readiness``, ``close``); the public verbs check what every backend must
check the same way, then call them. Time semantics: :mod:`jointlab.interface`.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from jointlab.errors import (
    ActionError,
    CommandRefused,
    ConfigurationError,
    ConfigurationRefused,
    DescriptionError,
    DeviceFault,
    RobotClosed,
    quote,
)
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.dynamics import GRAVITY, DynamicsModel

if TYPE_CHECKING:
    from jointlab.robots.description import ArrayGeometry, RobotDescription

__all__ = ["REFUSAL_ORDER", "Readiness", "Robot", "RobotListener", "given_fields"]

#: Motion refusals, checked in this order on every backend (docs/hardware.md): the first
#: that applies is the ``reason`` of the :class:`~jointlab.errors.CommandRefused`.
REFUSAL_ORDER = ("closed", "unpowered", "disarmed", "braked")

_REFUSAL_TEXT = {
    "unpowered": "motor power is off; call power(True) and arm() first",
    "disarmed": "it is disarmed: only a zero action is accepted; call arm() first",
    "braked": "its brakes are engaged: release them with brakes(False) first",
    "no_brakes": "it has no brakes (no actuator of its file sets has_brakes: true); hold "
    "a pose with a Position action (Commander: hold()), or disarm() to let the arm go limp",
}


def _flag(verb: str, on: Any) -> bool:
    """``on`` as a bool: True/False (or 1/0); anything else is a ConfigurationError."""
    if isinstance(on, (bool, np.bool_)) or (isinstance(on, (int, np.integer)) and on in (0, 1)):
        return bool(on)
    raise ConfigurationError(f"{verb}: expected True or False, got {type(on).__name__} {quote(on)}")


@dataclass(frozen=True)
class Readiness:
    """Whether a robot accepts motion, as its backend knows it (the refusal checks' input)."""

    #: Motor power is on.
    powered: bool
    #: The robot accepts motion commands.
    armed: bool
    #: Brakes are engaged on at least one joint (a robot without brakes is never braked).
    braked: bool


def given_fields(action: NJointAction) -> list[str]:
    """The fields of ``action`` that carry values, for error messages.

    Fields left NaN are not named, nor a zero torque beside a given position target:
    ``NJointAction.Position(q)`` names ``position``, ``NJointAction.Torque(t)`` ``torque``.
    """
    names = [
        name
        for name in ("position", "position_kp", "position_kd", "velocity")
        if not np.isnan(getattr(action, name)).all()
    ]
    if action.torque.any() or not names:
        names.insert(0, "torque")
    return names


class RobotListener(Protocol):
    """Watches a robot without changing it (a live view, a monitor): see ``Robot.listen``.

    Called on the thread that drives the robot, so it must return quickly (copy, do not
    draw); an exception it raises propagates to that caller.
    """

    def on_step(self, robot: Robot) -> None:
        """After every ``step()``: ``robot.read()`` is the new state."""

    def on_refusal(self, robot: Robot, verb: str, reason: str) -> None:
        """When a verb is refused (``reason`` from :data:`REFUSAL_ORDER`, not ``closed``)."""

    # Optional: ``on_fault(robot, error)``, when ``step()`` raises a ``DeviceFault`` (a
    # device stopped itself); the live view marks it on its timeline.


class Robot(abc.ABC):
    """A live actuator array: the only thing controllers and environments talk to.

    Implemented by :class:`jointlab.sim.SimRobot` (PyBullet or MuJoCo),
    :class:`jointlab.hardware.SerialRobot` (JointLab's protocol: a device, the reference
    firmware or the emulator over a serial port) and
    :class:`jointlab.hardware.servo.ServoBusRobot` (a Dynamixel or Feetech servo bus, real or
    emulated).
    Usable as a context manager; ``close()`` is safe to call twice.

    **The contract is enforced here, once, for every backend.** The public verbs are
    concrete: each checks what every backend must check the same way and then calls the
    backend's hook (``_apply``, ``_step``, ``_read``, ``_reset``, ``_power``, ``_brakes``,
    ``_arm``, ``_disarm``, ``_configure_speed``, ``_configure_accel``, ``_geometry``), so
    the checks cannot drift between backends:

    * after ``close()`` every verb raises :class:`~jointlab.errors.RobotClosed`
      (reason ``"closed"``);
    * ``apply`` checks the action's type and length (an :class:`~jointlab.errors.ActionError`
      naming the field the caller gave) and refuses a non-zero action with
      :class:`~jointlab.errors.CommandRefused`, reasons checked in :data:`REFUSAL_ORDER`
      (``closed`` > ``unpowered`` > ``disarmed`` > ``braked``), from :meth:`_readiness`;
    * ``arm()`` and ``brakes(False)`` are refused ``unpowered`` while power is off;
    * ``configure_speed``/``configure_accel`` refuse an unknown joint, a value that is not
      finite or one outside ``(0, limit]`` with :class:`~jointlab.errors.ConfigurationRefused`
      (reasons ``unknown_joint``, ``invalid_value``, ``out_of_limits``).

    State changes (``arm``, ``disarm``, ``power``, ``brakes``, ``configure_*``) are in effect
    when the call returns, and the very next ``read()`` shows them, on every backend.
    """

    #: True when ``step()`` is paced by wall-clock time (hardware), False in simulation.
    realtime: bool = False
    #: Set by backends: True once ``close()`` ran (or before construction finished).
    _closed: bool = True
    #: Listeners told of every step and refusal (:meth:`listen`); a tuple, replaced whole.
    _listeners: tuple[RobotListener, ...] = ()
    #: The action length ``apply`` accepted once (``dof``), so that later calls compare one
    #: integer instead of asking the description; -1 until the first accepted action.
    _accepted_dof: int = -1

    # ================================================================ backend hooks
    @abc.abstractmethod
    def _readiness(self) -> Readiness:
        """Power, arming and brakes as the backend knows them now."""

    @abc.abstractmethod
    def _read(self) -> ArrayState:
        """The latest state (see the module docstring for time semantics)."""

    @abc.abstractmethod
    def _apply(self, action: NJointAction) -> None:
        """Use a checked action from the next physics step or firmware tick on."""

    @abc.abstractmethod
    def _step(self) -> None:
        """Advance one control period."""

    @abc.abstractmethod
    def _reset(self, q: np.ndarray | None, qd: np.ndarray | None, **options: Any) -> ArrayState:
        """Return to ``q``/``qd`` and restart time; the state afterwards."""

    @abc.abstractmethod
    def _power(self, on: bool) -> None:
        """Switch motor power; off also disarms and engages the brakes where fitted."""

    @abc.abstractmethod
    def _brakes(self, on: bool) -> None:
        """Engage (the action becomes zero) or release the brakes."""

    @abc.abstractmethod
    def _arm(self) -> None:
        """Accept motion commands (power is on)."""

    @abc.abstractmethod
    def _disarm(self) -> None:
        """Refuse motion commands; the action becomes zero."""

    @abc.abstractmethod
    def _configure_speed(self, joint: int, speed: float) -> None:
        """Store a checked configured speed of joint index ``joint``."""

    @abc.abstractmethod
    def _configure_accel(self, joint: int, accel: float) -> None:
        """Store a checked configured acceleration of joint index ``joint``."""

    @abc.abstractmethod
    def _geometry(self) -> ArrayGeometry:
        """Player GET_GEOM."""

    def _motion_allowed(self) -> bool:
        """True when no motion refusal applies (a backend may answer from its own flags)."""
        ready = self._readiness()
        return ready.powered and ready.armed and not ready.braked

    def _where(self) -> str:
        """Where the robot is, for messages (``" on '/dev/ttyACM0'"``); empty in sim."""
        return ""

    # ================================================================ properties
    @property
    @abc.abstractmethod
    def description(self) -> RobotDescription:
        """The robot's description."""

    @property
    def dof(self) -> int:
        """Number of joints (length of every joint-space array)."""
        return self.description.dof

    @property
    def torque_capable(self) -> np.ndarray:
        """Mask, shape ``(dof,)``: joints that take a feed-forward torque.

        All joints, unless the device has actuators with position control only (a servo
        without current control): those refuse any torque part of an action, so
        controllers leave their feed-forward (e.g. gravity compensation) out.
        """
        return np.ones(self.dof, dtype=bool)

    @property
    def position_resolution(self) -> np.ndarray:
        """Smallest position step the robot reports per joint, shape ``(dof,)``, rad or m.

        The description's (one encoder tick on a servo arm, 0 where exact, as in a
        simulator of a robot without a bus): the Commander counts a target as reached within
        two of these at least.
        """
        return self.description.position_resolution

    def dynamics_model(self, gravity: Any = None) -> Any:
        """The rigid-body model of this robot that controllers use (gravity, ``M(q)``...).

        The backend offers its fastest exact evaluator: a simulated robot its engine's
        where it agrees with the description's numpy model (PyBullet's Featherstone, about
        a tenth of the time); other backends the numpy
        :class:`~jointlab.robots.dynamics.DynamicsModel`. Pass another model explicitly
        where it matters (``Commander(robot, dynamics=...)``).

        Args:
            gravity: Gravity in the world frame, m/s², shape ``(3,)``; None: Earth's, -z.
        """
        return DynamicsModel(self.description, GRAVITY if gravity is None else gravity)

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._closed

    @property
    @abc.abstractmethod
    def time(self) -> float:
        """Seconds since creation or the last reset."""

    @property
    @abc.abstractmethod
    def control_dt(self) -> float:
        """Control period in seconds: the time one ``step()`` advances."""

    # Backends keep ``_action``, ``_config_speed`` and ``_config_accel`` up to date.
    _action: NJointAction
    _config_speed: np.ndarray
    _config_accel: np.ndarray

    @property
    def last_action(self) -> NJointAction:
        """The action most recently accepted by ``apply`` (Zero after reset, arm or disarm)."""
        return self._action

    @property
    def config_speed(self) -> np.ndarray:
        """Configured speeds, shape ``(dof,)``, rad/s or m/s (REQ SPEED); a copy."""
        return self._config_speed.copy()

    @property
    def config_accel(self) -> np.ndarray:
        """Configured accelerations, shape ``(dof,)``, rad/s² or m/s² (REQ ACCEL); a copy."""
        return self._config_accel.copy()

    # ================================================================ the checks
    def _refusal(self, verb: str, reason: str) -> CommandRefused:
        robot = f"robot {self.description.name!r}{self._where()}"
        if reason == "closed":
            return RobotClosed(f"{verb}: {robot} is closed")
        for listener in self._listeners:
            listener.on_refusal(self, verb, reason)
        return CommandRefused(f"{verb} refused: {robot}: {_REFUSAL_TEXT[reason]}", reason=reason)

    def _check_open(self, verb: str) -> None:
        """Raise :class:`~jointlab.errors.RobotClosed` after ``close()``."""
        if self._closed:
            raise self._refusal(verb, "closed")

    def _check_motion(self, verb: str) -> None:
        """Refuse motion for the first reason of :data:`REFUSAL_ORDER` that applies."""
        ready = self._readiness()
        if not ready.powered:
            raise self._refusal(verb, "unpowered")
        if not ready.armed:
            raise self._refusal(verb, "disarmed")
        if ready.braked:
            raise self._refusal(verb, "braked")

    def _check_action(self, action: Any) -> None:
        if not isinstance(action, NJointAction):
            raise ActionError(f"apply() takes an NJointAction, got {type(action).__name__}")
        dof = self.description.dof
        if action.dof != dof:
            names = given_fields(action)
            fields = " and ".join(f"NJointAction.{name}" for name in names)
            verb = "has" if len(names) == 1 else "have"
            raise ActionError(
                f"{fields} {verb} length {action.dof}, expected {dof} (one per joint of "
                f"robot {self.description.name!r})"
            )
        self._accepted_dof = dof

    def _setting(
        self, verb: str, what: str, joint: Any, value: Any, limit: np.ndarray
    ) -> tuple[int, float]:
        description = self.description
        try:
            index = description.joint_index(joint)
        except DescriptionError as exc:
            raise ConfigurationRefused(f"{verb}: {exc}", reason="unknown_joint") from exc
        name = description.joint_names[index]
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            number = math.nan
        if isinstance(value, (bool, complex)) or not math.isfinite(number):
            raise ConfigurationRefused(
                f"{verb}: {what} {quote(value)} of joint {index} ({name}) is not a finite number",
                reason="invalid_value",
            )
        if not 0 < number <= limit[index]:
            raise ConfigurationRefused(
                f"{verb}: {what} {number!r} of joint {index} ({name}) must be > 0 and <= its "
                f"limit {limit[index]}",
                reason="out_of_limits",
            )
        return index, number

    def _joint_vector(self, verb: str, name: str, value: Any) -> np.ndarray:
        """``value`` as ``dof`` finite real numbers, or a ConfigurationError naming it."""
        dof = self.description.dof
        problem = f"{verb}: {name} must be {dof} finite numbers (real, one per joint), got"
        if isinstance(value, (str, bytes)):
            raise ConfigurationError(f"{problem} {type(value).__name__} {quote(value)}")
        try:
            array = np.asarray(value)
        except (TypeError, ValueError, OverflowError):
            raise ConfigurationError(f"{problem} {quote(value)}") from None
        if array.dtype.kind not in "biuf":
            raise ConfigurationError(f"{problem} {array.dtype.name} values {quote(value)}")
        array = array.astype(np.float64).reshape(-1)
        if array.shape != (dof,) or not np.isfinite(array).all():
            raise ConfigurationError(f"{problem} {quote(value)}")
        return array

    # ================================================================ the verbs
    def read(self) -> ArrayState:
        """Return the latest state (the end of the last control period)."""
        if self._closed:
            raise self._refusal("read", "closed")
        return self._read()

    def apply(self, action: NJointAction) -> None:
        """Use ``action`` from the next physics step or firmware tick on.

        Raises:
            RobotClosed: the robot is closed.
            ActionError: not an ``NJointAction``, or its length is not ``dof``.
            CommandRefused: the action is not ``Zero`` and the robot is unpowered, disarmed
                or braked (``reason``, in that order of precedence).
        """
        if self._closed:
            raise self._refusal("apply", "closed")
        if action.__class__ is not NJointAction or action.torque.shape[0] != self._accepted_dof:
            self._check_action(action)
        if not action.is_zero and not self._motion_allowed():
            self._check_motion("apply")
        self._apply(action)

    def step(self) -> None:
        """Advance one control period (see the module docstring for time semantics)."""
        if self._closed:
            raise self._refusal("step", "closed")
        try:
            self._step()
        except DeviceFault as exc:
            for listener in self._listeners:
                on_fault = getattr(listener, "on_fault", None)
                if on_fault is not None:
                    on_fault(self, exc)
            raise
        self._stepped()

    def _stepped(self) -> None:
        """Tell the listeners of a step: the end of every path that advances a period.

        ``step()`` calls it; so does a backend's batched step
        (:class:`jointlab.sim.batch.BatchStepper`), so a robot stepped in a batch is seen
        like one stepped alone.
        """
        for listener in self._listeners:
            listener.on_step(self)

    def listen(self, listener: RobotListener) -> Callable[[], None]:
        """Tell ``listener`` of every later step and refusal; returns the undo function.

        A listener only watches: it cannot refuse or change a command, so every motion
        still goes through the verbs' checks. With no listener, ``step()`` costs one
        empty-tuple loop more.
        """
        self._listeners = (*self._listeners, listener)

        def stop_listening() -> None:
            self._listeners = tuple(x for x in self._listeners if x is not listener)

        return stop_listening

    def reset(
        self, q: np.ndarray | None = None, qd: np.ndarray | None = None, **options: Any
    ) -> ArrayState:
        """Return to ``q``/``qd`` (default: home at rest) and restart ``time`` at 0."""
        self._check_open("reset")
        q = None if q is None else self._joint_vector("reset", "q", q)
        qd = None if qd is None else self._joint_vector("reset", "qd", qd)
        return self._reset(q, qd, **options)

    def power(self, on: bool) -> None:
        """Switch motor power (Player REQ POWER); off disarms and engages brakes where fitted.

        Powering on does not re-arm: call ``arm()`` afterwards.
        """
        self._check_open("power")
        self._power(_flag("power", on))

    def brakes(self, on: bool) -> None:
        """Engage (the action becomes zero) or release the brakes (Player REQ BRAKES).

        A robot without brakes (no actuator with ``has_brakes``) refuses to engage them, on
        every backend, rather than letting go of its pose with a zero action: nothing would
        hold the arm. Releasing brakes it does not have changes nothing.

        Raises:
            CommandRefused: engaging them on a robot without brakes (reason ``"no_brakes"``);
                releasing them while power is off (reason ``"unpowered"``).
        """
        self._check_open("brakes")
        on = _flag("brakes", on)
        if on and not self.description.has_brakes.any():
            raise self._refusal("brakes(True)", "no_brakes")
        if not on and not self._readiness().powered:
            raise self._refusal("brakes(False)", "unpowered")
        self._brakes(on)

    def arm(self) -> None:
        """Allow motion commands, holding the present pose: arming never moves a joint.

        Before torque is enabled, every backend puts in force the hold of
        :func:`jointlab.holding.hold_action`: the present position as PD target (default
        gains) with the gravity torque there as feed-forward, until the next ``apply``. Arming
        an armed robot changes nothing.

        Raises:
            CommandRefused: power is off (reason ``"unpowered"``).
        """
        self._check_open("arm")
        if not self._readiness().powered:
            raise self._refusal("arm", "unpowered")
        self._arm()

    def disarm(self) -> None:
        """Refuse motion commands (only ``Zero`` actions are accepted) and apply zero torque."""
        self._check_open("disarm")
        self._disarm()

    def geometry(self) -> ArrayGeometry:
        """Player GET_GEOM: per-actuator geometry (with configured speeds) plus the base pose."""
        self._check_open("geometry")
        return self._geometry()

    def configure_speed(self, joint: int | str, speed: float) -> None:
        """Set the configured speed of ``joint`` (index or name; Player REQ SPEED), rad/s or m/s.

        ``geometry()`` reports it as ``config_speed``; jerk-limited moves respect it.

        Raises:
            ConfigurationRefused: unknown joint, not finite, or not in ``(0, velocity limit]``.
        """
        self._check_open("configure_speed")
        index, value = self._setting(
            "configure_speed", "speed", joint, speed, self.description.velocity_limit
        )
        self._configure_speed(index, value)

    def configure_accel(self, joint: int | str, accel: float) -> None:
        """Set the configured acceleration of ``joint`` (Player REQ ACCEL), rad/s² or m/s².

        Raises:
            ConfigurationRefused: unknown joint, not finite, or not in ``(0, acceleration
                limit]``.
        """
        self._check_open("configure_accel")
        index, value = self._setting(
            "configure_accel", "acceleration", joint, accel, self.description.acceleration_limit
        )
        self._configure_accel(index, value)

    @abc.abstractmethod
    def close(self) -> None:
        """Release the backend; safe to call twice."""

    def __enter__(self) -> Robot:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
