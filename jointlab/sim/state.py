"""What ``SimRobot.read()`` reports: actuator flags, stall detection, sensors, ``ArrayState``.

``read()`` costs about a microsecond: it returns a :class:`SimState` that holds the loop's
arrays of that instant and derives each field (acceleration, current, flags, read-only
views of position, velocity and torque) when it is first read.

Flags per joint (Player's actarray codes): BRAKED on a braked joint; otherwise MOVING when
``|qd| > moving_threshold`` and IDLE when not; STALLED is added when the actuator torque is
saturated (the actuator model changed the command) and the joint has not moved in the
torque's direction faster than ``moving_threshold`` for ``stall_time`` seconds. The stall
detector samples the joints once per ``STALL_CHECK_PERIOD`` of simulated time (or once per
control period when that is longer).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jointlab.interface import ARRAY_FIELDS, ActuatorState, ArrayState
from jointlab.sim.law import DriveLoop
from jointlab.sim.sensors import SensorModel

__all__ = ["SimState", "StateReporter", "end_periods", "stall_columns"]

#: The stall detector looks at the joints once per this many seconds of simulated time.
STALL_CHECK_PERIOD = 0.01
_BRAKED = np.uint8(ActuatorState.BRAKED)
_STALLED = np.uint8(ActuatorState.STALLED)


class StateReporter:
    """Builds ``ArrayState`` values from a :class:`DriveLoop` (one per ``SimRobot``)."""

    def __init__(
        self,
        dof: int,
        dt: float,
        moving_threshold: float,
        stall_time: float | None,
        sensors: SensorModel | None,
    ) -> None:
        self.dt = dt
        self.moving_threshold = float(moving_threshold)
        self.stall_time = stall_time
        self.sensors = None if sensors is None else sensors.bind(dof)
        # Arrays rather than Python scalars: small-array ufuncs with scalars are slower.
        self._inv_dt = np.full(dof, 1.0 / dt)
        self._threshold = np.full(dof, self.moving_threshold)
        self._idle = np.full(dof, ActuatorState.IDLE, dtype=np.uint8)
        self._check_every = max(1, round(STALL_CHECK_PERIOD / dt))
        self.measured: tuple[np.ndarray, np.ndarray] | None = None
        self.reset(0)

    def reset(self, steps: int) -> None:
        """Forget stall timers (the world is at physics step ``steps``)."""
        dof = self._idle.shape[0]
        self._timer = np.zeros(dof)
        self.stalled = np.zeros(dof, dtype=bool)
        self._stall_any = False
        self._timing = False  # some timer runs
        self._checked_at(steps)

    def _checked_at(self, steps: int) -> None:
        """The stall detector looked at physics step ``steps``; sets :attr:`next_check`."""
        self._checked = steps
        #: The physics step from which :meth:`end_period` has stall checking to do (inf:
        #: never); a caller without sensors may skip the call before it.
        self.next_check = steps + self._check_every if self.stall_time is not None else math.inf

    def end_period(self, loop: DriveLoop, steps: int, rng: np.random.Generator | None) -> None:
        """Update stall timers and draw sensor readings at the end of a control period.

        ``rng`` draws the sensor noise (None is allowed when the reporter has no sensors).
        """
        if self.stall_time is not None and steps - self._checked >= self._check_every:
            tau = loop.tau
            saturated = tau != loop.cmd
            # `True in array.tolist()`: a tenth of ndarray.any()'s cost on a few joints
            if self._timing or True in saturated.tolist():  # else every timer stays at 0
                stuck = saturated & (loop.qd * np.sign(tau) <= self.moving_threshold)
                if True in stuck.tolist():
                    self._stall_update(steps, stuck)
                elif self._timing:  # every timer stops
                    self.reset(steps)
            self._checked_at(steps)
        if self.sensors is not None:
            self.measured = self.sensors.measure(loop.q, loop.qd, rng)

    def _stall_update(self, steps: int, stuck: np.ndarray) -> None:
        """Advance the timers of the ``stuck`` joints (bool ``(dof,)``), stop the others."""
        timer = self._timer + (steps - self._checked) * self.dt
        timer *= stuck  # 0 where not stuck (timers are finite and >= 0)
        self._timer = timer
        stalled = self.stalled = timer >= self.stall_time
        stalled.setflags(write=False)  # states capture it; never written
        self._stall_any = True in stalled.tolist()
        self._timing = True

    def build(
        self,
        loop: DriveLoop,
        time: float,
        powered: bool,
        armed: bool,
        braked: np.ndarray,
        brakes_engaged: bool,
    ) -> ArrayState:
        """The state after the loop's last physics step (a :class:`SimState`)."""
        state = _new_state(SimState)
        q, qd, measured = loop.q, loop.qd, self.measured
        inputs = (
            self,
            loop,
            q,
            qd,
            loop.qd_prev,
            loop.tau,
            measured,
            braked if brakes_engaged else None,
            self.stalled if self._stall_any else None,
        )
        if measured is None and q.base is None:
            # A single robot's step (fresh arrays; a batched step leaves rows of its read-only
            # blocks, read lazily below): almost every reader wants the joint state, so the
            # loop's own arrays, made read-only (the loop replaces them every physics step and
            # never writes into them), are stored at once instead of derived on first access.
            # setflags(False), not setflags(write=False): a keyword costs a dict per call
            q.setflags(False)
            qd.setflags(False)
            state.__dict__.update(
                time=time,
                motor_power=powered,
                armed=armed,
                brakes=brakes_engaged,
                _inputs=inputs,
                position=q,
                velocity=qd,
            )
        else:
            state.__dict__.update(
                time=time, motor_power=powered, armed=armed, brakes=brakes_engaged, _inputs=inputs
            )
        return state

    def flags(
        self, qd: np.ndarray, braked: np.ndarray | None, stalled: np.ndarray | None
    ) -> np.ndarray:
        """Actuator flags for joint velocities ``qd`` (see the module docstring)."""
        # IDLE (1) or MOVING (2) is 1 + (|qd| > threshold), as uint8 (bool + uint8).
        flags = np.add(np.greater(np.abs(qd), self._threshold), self._idle)
        if braked is not None:
            flags[braked] = _BRAKED
        if stalled is not None:
            flags[stalled] |= _STALLED
        return flags


_new_state = object.__new__


def stall_columns(reporters: Sequence[StateReporter]) -> tuple[np.ndarray, np.ndarray]:
    """The reporters' moving thresholds and stall times as ``(N, 1)`` columns (inf: none)."""
    thresholds = np.array([[r.moving_threshold] for r in reporters])
    limits = np.array([[np.inf if r.stall_time is None else r.stall_time] for r in reporters])
    return thresholds, limits


def end_periods(
    reporters: Sequence[StateReporter],
    steps: Sequence[int],
    tau: np.ndarray,
    cmd: np.ndarray,
    qd: np.ndarray,
    columns: tuple[np.ndarray, np.ndarray],
) -> None:
    """:meth:`StateReporter.end_period` of N reporters without sensor models at once.

    ``tau``, ``cmd`` and ``qd`` stack the reporters' loops' torques, commands and velocities
    (``(N, dof)`` each, the loops' own rows); ``steps`` is each reporter's world's physics
    step; ``columns`` are :func:`stall_columns` of the reporters. The stall test runs once
    on the stack instead of once per reporter; each timer then changes exactly as
    :meth:`StateReporter.end_period` would change it.
    """
    due = [
        r.stall_time is not None and s - r._checked >= r._check_every
        for r, s in zip(reporters, steps, strict=True)
    ]
    if True not in due:
        return
    thresholds, limits = columns
    stuck = (tau != cmd) & (qd * np.sign(tau) <= thresholds)
    rows = stuck.any(axis=1).tolist()
    if True in rows:  # StateReporter._stall_update of every row, in (N, dof) arrays
        timers = np.array([r._timer for r in reporters])
        timers += [[(s - r._checked) * r.dt] for r, s in zip(reporters, steps, strict=True)]
        timers *= stuck  # 0 where not stuck (timers are finite and >= 0)
        stalled = timers >= limits
        stalled.setflags(write=False)  # states capture its rows; never written
        stalled_any = stalled.any(axis=1).tolist()
    for i, (reporter, count, check) in enumerate(zip(reporters, steps, due, strict=True)):
        if not check:
            continue
        if rows[i]:
            reporter._timer, reporter.stalled = timers[i], stalled[i]
            reporter._stall_any, reporter._timing = stalled_any[i], True
        elif reporter._timing:  # every timer stops
            reporter.reset(count)
        reporter._checked_at(count)


def _position(inputs: tuple) -> np.ndarray:
    measured = inputs[6]
    return (inputs[2] if measured is None else measured[0]).view()


def _velocity(inputs: tuple) -> np.ndarray:
    measured = inputs[6]
    return (inputs[3] if measured is None else measured[1]).view()


def _acceleration(inputs: tuple) -> np.ndarray:
    reporter, _, _, qd, qd_prev = inputs[:5]
    return (qd - qd_prev) * reporter._inv_dt


def _torque(inputs: tuple) -> np.ndarray:
    return inputs[5].view()


def _current(inputs: tuple) -> np.ndarray:
    return inputs[1].current(inputs[5])


def _flags(inputs: tuple) -> np.ndarray:
    return inputs[0].flags(inputs[3], inputs[7], inputs[8])


class _Derived:
    """A :class:`SimState` field derived from the captured inputs on first access, then kept.

    A non-data descriptor: once the value is in the instance's ``__dict__`` (or was given
    to the constructor) Python finds it there without calling :meth:`__get__`.
    """

    __slots__ = ("derive", "name")

    def __init__(self, derive: Callable[[tuple], np.ndarray]) -> None:
        self.derive = derive
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, state: SimState | None, owner: type | None = None) -> Any:
        if state is None:
            return self
        fields = state.__dict__
        if "_inputs" not in fields:
            raise AttributeError(f"{type(state).__name__!r} object has no attribute {self.name!r}")
        value = fields[self.name] = self.derive(fields["_inputs"])
        value.setflags(write=False)  # views of the loop's arrays, or new arrays
        return value


class SimState(ArrayState):
    """An :class:`ArrayState` whose arrays are derived on first access, then kept.

    ``read()`` captures the loop's arrays of that instant (the loop replaces them every
    physics step and never writes into them), so a field read later holds the same values
    it would have held if built at once. Every array is read-only: without a sensor model,
    position and velocity are the loop's own arrays, made read-only and stored when the
    state is built (every reader wants them); torque is a read-only view of the loop's.
    Everything else (equality, ``get_data``, pickling, ``dataclasses.replace``) behaves as
    for a plain ``ArrayState``.
    """

    position = _Derived(_position)
    velocity = _Derived(_velocity)
    acceleration = _Derived(_acceleration)
    torque = _Derived(_torque)
    current = _Derived(_current)
    actuator_state = _Derived(_flags)

    def arrays(self) -> np.ndarray:
        """:meth:`ArrayState.arrays` in one concatenation of the captured inputs.

        The five fields become row views of the block (equal to what they held if read
        before), so reading them afterwards costs a dictionary lookup: an environment step
        builds its ``info`` and observation from one block instead of five derived arrays.
        """
        fields = self.__dict__
        block = fields.get("_arrays")
        if block is not None:
            return block
        if "_inputs" not in fields:  # built by dataclasses.replace: the fields are plain
            return super().arrays()
        reporter, loop, q, qd, qd_prev, tau, measured = fields["_inputs"][:7]
        position, velocity = (q, qd) if measured is None else measured
        flat = np.concatenate(
            (position, velocity, (qd - qd_prev) * reporter._inv_dt, tau, loop.current(tau))
        )
        flat.setflags(write=False)
        block = fields["_arrays"] = flat.reshape(5, -1)
        fields.update(zip(ARRAY_FIELDS, block, strict=True))  # read before: equal rows
        return block

    def stalled(self) -> np.ndarray | None:
        """:meth:`ArrayState.stalled` from the stall detector's mask, without the flags."""
        inputs = self.__dict__.get("_inputs")
        if inputs is None:  # built by dataclasses.replace: the fields are plain
            return super().stalled()
        return inputs[8]  # the detector's (read-only) mask when a joint is stalled, else None

    def frozen(self) -> ArrayState:
        """``self``: every field it derives is read-only (:meth:`ArrayState.frozen`)."""
        return self if "_inputs" in self.__dict__ else super().frozen()

    def __reduce__(self) -> tuple:
        """Pickle and copy as the plain ``ArrayState`` it stands for (without the loop)."""
        return ArrayState, tuple(getattr(self, f.name) for f in dataclasses.fields(ArrayState))
