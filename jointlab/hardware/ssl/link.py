"""``SSLRobotLink``: drive the ``ssl_robot`` description with RoboCup SSL ControlMessages.

A base station sends a holonomic robot a 10-byte :class:`~jointlab.hardware.ssl.ControlMessage`
(body velocity, dribbler speed, kick strength and trigger). The link turns the latest one
into an :class:`~jointlab.interface.NJointAction` every control period, on any
:class:`~jointlab.contract.Robot` driving a description with the :data:`SSL_JOINTS`:
``sim://ssl_robot`` or ``emulated://ssl_robot`` alike.

Why position targets: the PD law (``jointlab.interface``) uses the target velocity only in
its D term, and only where the position target is not NaN; a pure velocity command with a
NaN position would not move the robot at all. So the link **integrates a position target
from the commanded velocity** every period (``p += v·dt``) and sends both: the P term pulls
the joint along the integrated path, the D term matches its speed. The target is kept within
``max_lag`` of the measured position (anti-windup: a blocked robot does not wind up a huge
error) and within the joint limits.

* ``base_x``, ``base_y``, ``base_w``: the body velocity rotated into the world by the
  measured yaw (:func:`~jointlab.hardware.ssl.holonomic_joint_velocities`).
* ``dribbler``: a velocity loop (its P gain is 0 in the action, so only the D term acts):
  ``dribbler_speed / 127`` of ``dribbler_max_speed``.
* every joint gets the description's joint friction at its target velocity as feed-forward
  torque (``damping·v + static_friction·sign(v)``): a D term alone would settle where its
  torque balances that friction, short of the commanded speed (by ``d/(kd + d)``).
* ``kicker``: extends at ``kick_strength / 255`` of ``kicker_speed`` while the trigger fires
  (IMMEDIATE, or ON_BREAK_BEAM with ``break_beam``), and retracts at ``kicker_speed`` when
  it does not.
"""

from __future__ import annotations

import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError, PackingError
from jointlab.hardware.ssl.codec import (
    SSL_JOINTS,
    ControlMessage,
    Team,
    TriggerMode,
    holonomic_joint_velocities,
)
from jointlab.interface import ArrayState, NJointAction

__all__ = ["SSLRobotLink"]

_BASE = slice(0, 3)
_DRIBBLER, _KICKER = 3, 4


class SSLRobotLink:
    """ControlMessages in, NJointActions out (see the module docstring).

    Args:
        robot: A robot whose description has the joints :data:`SSL_JOINTS`.
        dribbler_max_speed: Dribbler speed at ``dribbler_speed = 127``, rad/s (default: the
            joint's velocity limit).
        kicker_speed: Kicker speed at ``kick_strength = 255``, m/s (default: its limit).
        max_lag: Largest distance between target and measured position for base x, y (m)
            and yaw (rad), shape ``(3,)``.
        team: Only accept messages for this team (None: any).
        robot_id: Only accept messages for this robot id (None: any).

    Raises:
        ConfigurationError: the description lacks an SSL joint, or a setting is not positive.
    """

    def __init__(
        self,
        robot: Robot,
        *,
        dribbler_max_speed: float | None = None,
        kicker_speed: float | None = None,
        max_lag: tuple[float, float, float] = (0.1, 0.1, 0.5),
        team: Team | None = None,
        robot_id: int | None = None,
    ) -> None:
        description = robot.description
        missing = [name for name in SSL_JOINTS if name not in description.joint_names]
        if missing:
            raise ConfigurationError(
                f"SSLRobotLink needs the joints {list(SSL_JOINTS)}; robot "
                f"{description.name!r} lacks {missing} (use the built-in 'ssl_robot')"
            )
        self.robot = robot
        self._index = np.array([description.joint_names.index(name) for name in SSL_JOINTS])
        limits = description.velocity_limit[self._index]
        self.dribbler_max_speed = float(
            limits[_DRIBBLER] if dribbler_max_speed is None else dribbler_max_speed
        )
        self.kicker_speed = float(limits[_KICKER] if kicker_speed is None else kicker_speed)
        self.max_lag = np.asarray(max_lag, dtype=np.float64)
        if (
            not self.dribbler_max_speed > 0
            or not self.kicker_speed > 0
            or self.max_lag.shape != (3,)
            or not np.all(self.max_lag > 0)
        ):
            raise ConfigurationError(
                "SSLRobotLink: dribbler_max_speed and kicker_speed must be > 0 and max_lag "
                f"three positive numbers, got {dribbler_max_speed!r}, {kicker_speed!r}, "
                f"{max_lag!r}"
            )
        self.team, self.robot_id = team, robot_id
        self._kp = np.full(description.dof, np.nan)  # the description's gains...
        self._kp[self._index[_DRIBBLER]] = 0.0  # ...but a pure velocity loop on the dribbler
        self._damping = description.damping[self._index]
        self._friction = description.static_friction[self._index]
        self._lower = description.lower[self._index]
        self._upper = description.upper[self._index]
        self._dof = description.dof
        self._message = ControlMessage.from_velocity(Team.BLUE, 0, 0.0, 0.0, 0.0)
        self.break_beam = False
        self._target = robot.read().position[self._index].copy()
        self._last_time: float | None = None
        #: Messages ignored because they were for another team or robot id.
        self.ignored = 0

    @property
    def message(self) -> ControlMessage:
        """The command in force."""
        return self._message

    def command(self, message: ControlMessage | bytes, *, break_beam: bool | None = None) -> bool:
        """Use ``message`` (or its 10 packed bytes) from the next ``step()`` on.

        Returns:
            False when the message was for another team or robot id (and ignored).

        Raises:
            PackingError: ``message`` is bytes that do not unpack.
        """
        if isinstance(message, (bytes, bytearray, memoryview)):
            message = ControlMessage.unpack(bytes(message))
        elif not isinstance(message, ControlMessage):
            raise PackingError(f"command() takes a ControlMessage or bytes, got {message!r}")
        if (self.team is not None and message.team != self.team) or (
            self.robot_id is not None and message.robot_id != self.robot_id
        ):
            self.ignored += 1
            return False
        self._message = message
        if break_beam is not None:
            self.break_beam = bool(break_beam)
        return True

    def drive(
        self,
        body_x: float,
        body_y: float,
        body_w: float,
        *,
        dribbler_speed: int = 0,
        kick_strength: int = 0,
        trigger_mode: TriggerMode = TriggerMode.STAND_DOWN,
    ) -> None:
        """Command a body velocity (m/s, m/s, rad/s) as a base station would (wire-quantised)."""
        team = Team.BLUE if self.team is None else self.team
        self.command(
            ControlMessage.from_velocity(
                team,
                self.robot_id or 0,
                body_x,
                body_y,
                body_w,
                dribbler_speed=dribbler_speed,
                kick_strength=kick_strength,
                trigger_mode=trigger_mode,
            )
        )

    def velocity_target(self, yaw: float) -> np.ndarray:
        """Joint velocity targets of the command in force at base yaw ``yaw`` (rad), ``(5,)``."""
        return holonomic_joint_velocities(
            self._message,
            yaw,
            dribbler_max_speed=self.dribbler_max_speed,
            kicker_speed=self.kicker_speed,
            break_beam=self.break_beam,
        )

    def action(self, state: ArrayState, dt: float) -> NJointAction:
        """The action for the next ``dt`` seconds from ``state`` (advances the targets).

        When ``state`` is more than ``dt`` later than the previous call's (a real-time loop
        that missed periods), the targets advance by the time that really passed.
        """
        if self._last_time is not None and state.time - self._last_time > dt:
            dt = state.time - self._last_time
        self._last_time = state.time
        q = state.position[self._index]
        velocity = self.velocity_target(float(q[2]))
        if velocity[_KICKER] == 0.0 and self._target[_KICKER] > self._lower[_KICKER]:
            velocity[_KICKER] = -self.kicker_speed  # retract
        target = self._target + velocity * dt
        target[_BASE] = np.clip(target[_BASE], q[_BASE] - self.max_lag, q[_BASE] + self.max_lag)
        target[_DRIBBLER] = q[_DRIBBLER]  # velocity loop: the P term stays zero
        target = np.clip(target, self._lower, self._upper)
        at_stop = (target <= self._lower) & (velocity < 0) | (target >= self._upper) & (
            velocity > 0
        )
        velocity[at_stop & (np.arange(5) == _KICKER)] = 0.0
        self._target = target
        position = np.full(self._dof, np.nan)
        target_velocity = np.zeros(self._dof)
        torque = np.zeros(self._dof)
        position[self._index] = target
        target_velocity[self._index] = velocity
        torque[self._index] = self._damping * velocity + self._friction * np.sign(velocity)
        return NJointAction.TorqueAndPosition(torque, position, self._kp, velocity=target_velocity)

    def step(self) -> ArrayState:
        """Apply the action of this period, advance the robot one period, return its state."""
        robot = self.robot
        robot.apply(self.action(robot.read(), robot.control_dt))
        robot.step()
        return robot.read()

    def reset(self) -> None:
        """Stop (zero velocity, no kick) and restart the targets at the measured position."""
        self._message = ControlMessage.from_velocity(self._message.team, 0, 0.0, 0.0, 0.0)
        self._target = self.robot.read().position[self._index].copy()
        self._last_time = None
