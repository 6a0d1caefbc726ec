"""The safety layer: a pure function from (desired action, state) to an applied action.

:func:`enforce` clamps (policy ``CLAMP``) or refuses (policy ``REFUSE``) so that no command
leaves the soft limits, and reports every change as a :class:`SafetyEvent` — never silently.
Desired and applied actions are both returned so logs can show what the layer changed.
Checks, per joint, in order:

1. **position**: a PD target outside the soft position limits is moved onto the limit;
   a torque-only joint beyond a soft position limit gets no torque pushing it further out.
2. **velocity**: a PD velocity target above the soft velocity limit is clipped, and the PD
   position target may not move faster than the velocity limit from one tick to the next
   (a jump becomes a ramp at the limit speed; the first tick starts from the measured
   position).
3. **acceleration** (only with ``DynamicLimitsCheckMode.CHECK_JOINT_ACCELERATION``, as in
   Intrinsic's ``DynamicLimitsCheckMode``): the position target's implied velocity may not
   change by more than ``a·dt`` from one tick to the next — arrival and the tick after it
   included. A moving request that keeps to this passes unchanged. A request that does not,
   and a request standing still (a step, a hold), is **governed**: the target approaches it
   with the largest speed from which discrete ticks decelerating by ``a·dt`` can still stop
   exactly there (:func:`stopping_speed`), changes speed by at most ``a·dt`` per tick, and
   lands on the request only on a tick whose speed the next tick can drop to rest.
4. **effort**: the feed-forward torque is clipped to the soft effort limit. Where the soft
   limit is below the system limit (which the backend enforces itself) the torque predicted
   at the measured state, PD included, is clipped too, by adjusting the feed-forward term.

An action none of these checks would change — a controller's usual tick, every joint under
PD — is recognised by one vectorised comparison of target, step, velocity target and torque
against their bounds, and passes as it is (the result the checks give it, tested).
Anything else, a NaN or a value within rounding of a limit included, takes the checks one
by one.

State between ticks (the previous target) is passed in and returned explicitly as a
:class:`SafetyMemory`, so :func:`enforce` stays a pure function; :class:`SafetyLayer` keeps it
for you.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

import numpy as np

from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.description import RobotDescription

_Value = TypeVar("_Value")

__all__ = [
    "DynamicLimitsCheckMode",
    "SafetyEvent",
    "SafetyLayer",
    "SafetyLimits",
    "SafetyMemory",
    "SafetyPolicy",
    "SafetyResult",
    "enforce",
    "stopping_speed",
]

_REL = 1e-6  # relative tolerance of the rate checks (planned motions sit exactly on limits)
_ABS = 1e-12
# The checks of every tick test their masks with np.count_nonzero: a C call, about a third
# of the cost of ndarray.any() (which goes through a Python wrapper) on a few joints.


class DynamicLimitsCheckMode(enum.IntEnum):
    """Which dynamic limits a position command must respect (Intrinsic numbering).

    Position and velocity limits are always enforced.
    """

    TYPE_UNSPECIFIED = 0
    CHECK_JOINT_ACCELERATION = 1
    CHECK_NONE = 2


class SafetyPolicy(str, enum.Enum):
    """What the layer does with a command outside the limits."""

    #: Change the command to the nearest safe one and report it.
    CLAMP = "clamp"
    #: Raise :class:`~jointlab.errors.CommandRefused` (reason ``"out_of_limits"``).
    REFUSE = "refuse"


@dataclass(frozen=True, eq=False)
class SafetyLimits:
    """Soft limits and gains the layer checks against; arrays have shape ``(dof,)``."""

    #: Soft lower position limits, rad or m.
    lower: np.ndarray
    #: Soft upper position limits, rad or m.
    upper: np.ndarray
    #: Soft velocity limits, rad/s or m/s.
    velocity: np.ndarray
    #: Soft acceleration limits, rad/s² or m/s².
    acceleration: np.ndarray
    #: Soft effort limits, N·m or N.
    effort: np.ndarray
    #: System effort limits (the backend clamps to these), N·m or N.
    system_effort: np.ndarray
    #: Default PD gains used where an action's gain is NaN (N·m/rad, N·m·s/rad).
    kp: np.ndarray
    kd: np.ndarray
    #: Joint names, for messages.
    names: tuple[str, ...]

    @classmethod
    def from_description(cls, description: RobotDescription) -> SafetyLimits:
        """The description's soft limits and default gains."""
        return cls(
            lower=description.soft_lower,
            upper=description.soft_upper,
            velocity=description.soft_velocity_limit,
            acceleration=description.soft_acceleration_limit,
            effort=description.soft_effort_limit,
            system_effort=description.effort_limit,
            kp=description.default_kp,
            kd=description.default_kd,
            names=description.joint_names,
        )

    @property
    def dof(self) -> int:
        """Number of joints."""
        return len(self.names)

    @cached_property
    def has_soft_effort(self) -> bool:
        """True when some soft effort limit is below the system limit."""
        return bool(np.any(self.effort < self.system_effort))

    def tick_bounds(self, dt: float) -> np.ndarray:
        """The bounds one tick of ``dt`` seconds is checked against, shape ``(3 · dof,)``.

        Three rows, flattened: the largest step of a position target (``velocity·dt·(1 +
        1e-6) + 1e-12``, rad or m, rate tolerance included), the velocity limit (rad/s or
        m/s) and the effort limit (N·m or N). Kept per ``dt`` (see :meth:`_bounds`).
        """
        return self._bounds(dt)[0]

    def untouched_bounds(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """Offsets and bounds of :func:`enforce`'s check that an action passes untouched.

        ``|[target, step, velocity, torque] − offsets| <= bounds`` (each ``(4 · dof,)``,
        flattened) means no check would change the action: the target inside the position
        gate (:attr:`_position_gate`), then :meth:`tick_bounds` of ``dt``. Kept per ``dt``.
        """
        return self._bounds(dt)[1]

    def _bounds(self, dt: float) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """:meth:`tick_bounds` and :meth:`untouched_bounds` of ``dt``, read-only.

        Kept for the last few values of ``dt`` (measured periods differ from the nominal one
        by rounding of the robot's clock, a handful of distinct values at a time).
        """
        cache = self.__dict__.setdefault("_tick_bounds", {})
        try:
            return cache[dt]
        except KeyError:
            if len(cache) >= 16:
                cache.clear()
            step = self.velocity * dt * (1 + _REL) + _ABS
            tick = np.concatenate([step, self.velocity, self.effort])
            offsets, half = self._position_gate
            untouched = np.concatenate([half, tick])
            tick.setflags(write=False)
            untouched.setflags(write=False)
            bounds = cache[dt] = (tick, (offsets, untouched))
            return bounds

    @cached_property
    def _position_gate(self) -> tuple[np.ndarray, np.ndarray]:
        """Offsets ``(4 · dof,)`` and half-widths ``(dof,)`` of the untouched check's target.

        The offsets are each joint's centre, then zeros (step, velocity and torque are
        compared as they are). ``|target − centre| <= half`` implies ``lower <= target <=
        upper`` despite rounding: the half-width is shrunk by 1e-12 of the limits' size (a
        target that close to a limit takes the full checks). A joint with an infinite limit
        is gated by the finite one's distance from zero, or not at all.
        """
        lower, upper = self.lower, self.upper
        finite = np.isfinite(lower) & np.isfinite(upper)
        with np.errstate(invalid="ignore"):
            centre = np.where(finite, 0.5 * (lower + upper), 0.0)
            half = np.where(
                finite,
                0.5 * (upper - lower),
                np.minimum(np.maximum(-lower, 0.0), np.maximum(upper, 0.0)),
            )
            slack = 1e-12 * (
                np.abs(np.where(finite, lower, 0.0)) + np.abs(np.where(finite, upper, 0.0)) + half
            )
        half = half - np.where(np.isfinite(half), slack, 0.0) - 1e-300
        offsets = np.concatenate([centre, np.zeros(3 * self.dof)])
        offsets.setflags(write=False)
        return offsets, half


@dataclass(frozen=True)
class SafetyEvent:
    """One clamp (or refusal) of one quantity on one or more joints."""

    #: ``"position"``, ``"velocity"``, ``"acceleration"`` or ``"effort"``.
    quantity: str
    #: Joint indices concerned.
    joints: tuple[int, ...]
    #: Requested values (rad, rad/s, rad/s², N·m or the linear units), one per joint.
    requested: tuple[float, ...]
    #: Values after the clamp, one per joint.
    applied: tuple[float, ...]
    #: The limit that was hit, one per joint.
    limit: tuple[float, ...]
    #: Human-readable description naming joints, values and limits.
    message: str
    #: Always ``"clamped"`` (the recorder's event kind).
    kind: str = "clamped"


@dataclass(frozen=True, eq=False)
class SafetyMemory:
    """What :func:`enforce` remembers between ticks."""

    #: Last applied PD position target, rad or m, NaN where the PD was off. Shape ``(dof,)``.
    position: np.ndarray
    #: Velocity implied by the last two targets, rad/s or m/s. Shape ``(dof,)``.
    velocity: np.ndarray
    #: ``state.time`` of the last tick, seconds.
    time: float
    #: Last requested position target (before any clamp), NaN where the PD was off; ``None``
    #: when unknown. Shape ``(dof,)``.
    request: np.ndarray | None = None


def stopping_speed(distance: np.ndarray, acceleration: np.ndarray, dt: float) -> np.ndarray:
    """Largest speed from which ticks of ``dt`` slowing by ``a·dt`` each stop at ``distance``.

    From speed ``v = (n + f)·a·dt`` (``0 <= f < 1``) the ticks move ``v, v − a·dt, ...,
    f·a·dt`` and then stand still: ``dt·((n+1)·v − a·dt·n(n+1)/2)`` in all. Solved for ``v``
    at ``distance`` (m or rad, >= 0): ``n = floor(sqrt(1/4 + 2·distance/(a·dt²)) − 1/2)`` and
    ``v = distance/((n+1)·dt) + a·dt·n/2``. The last moving tick lands exactly on the spot
    at a speed of at most ``a·dt``, so the tick after it may stop.
    """
    step = acceleration * dt
    ticks = np.floor(np.sqrt(0.25 + 2.0 * distance / (step * dt)) - 0.5)
    return distance / ((ticks + 1.0) * dt) + step * ticks / 2.0


def _govern(
    request: np.ndarray, prev_p: np.ndarray, prev_v: np.ndarray, limits: SafetyLimits, dt: float
) -> np.ndarray:
    """The acceleration-limited target that approaches (and stops at) ``request``."""
    distance = request - prev_p
    max_dv = limits.acceleration * dt
    wanted = np.sign(distance) * np.minimum(
        limits.velocity, stopping_speed(np.abs(distance), limits.acceleration, dt)
    )
    speed = np.clip(
        np.clip(wanted, prev_v - max_dv, prev_v + max_dv), -limits.velocity, limits.velocity
    )
    step = speed * dt
    arrival = np.abs(distance) / dt  # the speed of a tick that lands on the request
    lands = (
        (np.abs(distance) <= np.abs(step) * (1 + _REL) + _ABS)
        & (arrival <= max_dv * (1 + _REL) + _ABS)
        & (np.abs(distance / dt - prev_v) <= max_dv * (1 + _REL) + _ABS)
    )
    return np.where(lands, request, prev_p + step)


@dataclass(frozen=True, eq=False)
class SafetyResult:
    """Output of :func:`enforce`."""

    #: The action as requested.
    desired: NJointAction
    #: The action to apply (``desired`` itself when nothing changed).
    applied: NJointAction
    #: Every change made, in check order.
    events: tuple[SafetyEvent, ...]
    #: Memory to pass to the next call.
    memory: SafetyMemory

    @property
    def clamped(self) -> bool:
        """True when the applied action differs from the desired one."""
        return bool(self.events)


def _event(
    quantity: str,
    mask: np.ndarray,
    requested: np.ndarray,
    applied: np.ndarray,
    limit: np.ndarray,
    limits: SafetyLimits,
    what: str,
) -> SafetyEvent:
    joints = tuple(int(j) for j in np.flatnonzero(mask))
    parts = [
        f"{what} {requested[j]:.6g} of joint {j} ({limits.names[j]}) exceeds its limit "
        f"{limit[j]:.6g}; applied {applied[j]:.6g}"
        for j in joints
    ]
    return SafetyEvent(
        quantity=quantity,
        joints=joints,
        requested=tuple(float(requested[j]) for j in joints),
        applied=tuple(float(applied[j]) for j in joints),
        limit=tuple(float(limit[j]) for j in joints),
        message="; ".join(parts),
    )


def enforce(
    action: NJointAction,
    state: ArrayState,
    limits: SafetyLimits,
    *,
    dt: float,
    memory: SafetyMemory | None = None,
    policy: SafetyPolicy = SafetyPolicy.CLAMP,
    check_mode: DynamicLimitsCheckMode = DynamicLimitsCheckMode.CHECK_JOINT_ACCELERATION,
) -> SafetyResult:
    """Check ``action`` against ``limits`` at ``state``; clamp or refuse (see module doc).

    Args:
        action: The desired action (length ``dof``).
        state: The measured state the action will be applied from.
        limits: Soft limits and default gains.
        dt: Nominal control period in seconds (used when ``state.time`` did not advance).
        memory: The previous call's :attr:`SafetyResult.memory`; ``None`` on the first tick.
        policy: Clamp and report, or refuse.
        check_mode: Whether to enforce the acceleration limit on position targets.

    Returns:
        Desired and applied actions, the events and the memory for the next tick.

    Raises:
        CommandRefused: with ``policy=REFUSE``, when any check fails (reason
            ``"out_of_limits"``), listing every violation.
    """
    if (
        check_mode is not DynamicLimitsCheckMode.CHECK_JOINT_ACCELERATION
        and not limits.has_soft_effort
    ):
        untouched = _untouched(action, state, limits, dt, memory)
        if untouched is not None:
            return untouched
    return _checked(action, state, limits, dt, memory, policy, check_mode)


def _untouched(
    action: NJointAction,
    state: ArrayState,
    limits: SafetyLimits,
    dt: float,
    memory: SafetyMemory | None,
) -> SafetyResult | None:
    """:func:`enforce`'s result for an action no check changes, or None (then check it).

    The common tick of a controller, decided by one vectorised comparison: every joint
    under PD, the previous target known everywhere, and the target, its step, the velocity
    target and the torque within their bounds (a NaN anywhere, e.g. a velocity target left
    out, takes the full checks). The result is the one :func:`_checked` returns then.
    """
    mask = action.pd_mask
    dof = mask.shape[0]
    if np.count_nonzero(mask) != dof:
        return None
    if memory is None:
        prev_p, step_dt = state.position, dt
    else:
        prev_p = memory.position  # a NaN (the PD was off there) fails the comparison below
        elapsed = state.time - memory.time
        step_dt = elapsed if elapsed > 0.5 * dt else dt
    target = action.position
    step = target - prev_p
    offsets, bounds = limits.untouched_bounds(step_dt)
    values = np.concatenate((target, step, action.velocity, action.torque))
    np.subtract(values, offsets, out=values)
    if np.count_nonzero(np.abs(values, out=values) <= bounds) != 4 * dof:
        return None
    velocity = np.divide(step, step_dt, out=step)  # the step is in ``values`` now
    return _built(
        SafetyResult,
        desired=action,
        applied=action,
        events=(),
        memory=_built(
            SafetyMemory, position=target, velocity=velocity, time=state.time, request=target
        ),
    )


def _built(cls: type[_Value], **fields: Any) -> _Value:
    """A frozen dataclass from fields of the right types, without its ``__init__``.

    For the per-tick path: a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__`` (about 1 µs for four fields); the instance is the same.
    """
    value = object.__new__(cls)
    value.__dict__.update(fields)
    return value


def _checked(
    action: NJointAction,
    state: ArrayState,
    limits: SafetyLimits,
    dt: float,
    memory: SafetyMemory | None,
    policy: SafetyPolicy,
    check_mode: DynamicLimitsCheckMode,
) -> SafetyResult:
    """:func:`enforce`'s checks, one by one (see the module docstring)."""
    q = state.position
    mask = action.pd_mask
    target = action.position
    if memory is None:
        prev_p, prev_v, step_dt = q, state.velocity, dt
    else:
        prev_p = np.where(np.isnan(memory.position), q, memory.position)
        prev_v = memory.velocity
        elapsed = state.time - memory.time
        step_dt = elapsed if elapsed > 0.5 * dt else dt
    events: list[SafetyEvent] = []
    position = target
    rounded = False  # changed below the reporting threshold only
    # 1. position targets inside the soft limits (maximum/minimum keep NaN)
    bounded = np.minimum(np.maximum(target, limits.lower), limits.upper)
    # identical bytes: nothing moved (the common case, decided without arithmetic)
    moved = None if bounded.tobytes() == target.tobytes() else np.abs(bounded - target)
    if moved is not None and (moved > 0).any():  # NaN where the PD is off
        # below 1 nm (or nrad) the difference is rounding in a planned motion, not a clamp
        outside = moved > 1e-9
        if outside.any():
            events.append(
                _event(
                    "position",
                    outside,
                    target,
                    bounded,
                    np.where(target > limits.upper, limits.upper, limits.lower),
                    limits,
                    "position target",
                )
            )
        else:
            rounded = True
        position = bounded
    # 2./3. the target's speed and (optionally) acceleration; NaN targets compare False
    step = position - prev_p
    implied = step / step_dt
    velocity = action.velocity
    torque = action.torque
    # One vectorised test of the target's step, the velocity target and the torque against
    # their bounds (NaN compares False); each check below reads its third of the result.
    dof = q.shape[0]
    beyond = np.abs(np.concatenate((step, velocity, torque))) > limits.tick_bounds(step_dt)
    fast = beyond[:dof]
    if check_mode is DynamicLimitsCheckMode.CHECK_JOINT_ACCELERATION:
        max_dv = limits.acceleration * step_dt
        jerky = np.abs(implied - prev_v) > max_dv * (1 + _REL) + _ABS
        previous = None if memory is None else memory.request
        standing = (
            np.ones(q.shape, dtype=bool) if previous is None else ~(np.abs(position - previous) > 0)
        )  # NaN (PD was off) counts as new
        governed = mask & (jerky | standing)
        if governed.any():
            new = np.where(governed, _govern(position, prev_p, prev_v, limits, step_dt), position)
            changed = governed & (np.abs(new - position) > 1e-12)
            if changed.any():
                events.append(
                    _event(
                        "acceleration",
                        changed,
                        (implied - prev_v) / step_dt,
                        (new - prev_p - prev_v * step_dt) / step_dt**2,
                        limits.acceleration,
                        limits,
                        "acceleration of the position target",
                    )
                )
            position = new
            step = position - prev_p
            implied = step / step_dt
            fast &= ~governed
    if np.count_nonzero(fast):
        max_step = limits.velocity * step_dt
        new = np.where(fast, prev_p + np.clip(step, -max_step, max_step), position)
        events.append(
            _event(
                "velocity",
                fast,
                implied,
                (new - prev_p) / step_dt,
                limits.velocity,
                limits,
                "speed of the position target",
            )
        )
        position = new
        implied = (position - prev_p) / step_dt
    too_fast = beyond[dof : 2 * dof]
    if np.count_nonzero(too_fast) and np.count_nonzero(too_fast := mask & too_fast):
        clipped_v = np.clip(velocity, -limits.velocity, limits.velocity)
        events.append(
            _event(
                "velocity",
                too_fast,
                velocity,
                clipped_v,
                limits.velocity,
                limits,
                "velocity target",
            )
        )
        velocity = clipped_v
    # 1b. torque-only joints beyond a soft position limit: no torque pushing further out
    every_pd = np.count_nonzero(mask) == mask.shape[0]
    if not every_pd:
        pushing = ~mask & (
            ((q > limits.upper) & (torque > 0)) | ((q < limits.lower) & (torque < 0))
        )
        if pushing.any():
            new = np.where(pushing, 0.0, torque)
            events.append(
                _event(
                    "position",
                    pushing,
                    torque,
                    new,
                    np.where(q > limits.upper, limits.upper, limits.lower),
                    limits,
                    "torque pushing beyond its soft position limit,",
                )
            )
            torque = new
    # 4. effort
    strong = beyond[2 * dof :] if torque is action.torque else np.abs(torque) > limits.effort
    if np.count_nonzero(strong):
        clipped_t = np.clip(torque, -limits.effort, limits.effort)
        events.append(
            _event(
                "effort", strong, torque, clipped_t, limits.effort, limits, "feed-forward torque"
            )
        )
        torque = clipped_t
    if limits.has_soft_effort:
        soft = limits.effort < limits.system_effort
        kp = np.where(np.isnan(action.position_kp), limits.kp, action.position_kp)
        kd = np.where(np.isnan(action.position_kd), limits.kd, action.position_kd)
        pd = np.where(
            mask,
            kp * (np.nan_to_num(position) - q) + kd * (np.nan_to_num(velocity) - state.velocity),
            0.0,
        )
        total = torque + pd
        clipped_total = np.clip(total, -limits.effort, limits.effort)
        over = soft & (clipped_total != total)
        if over.any():
            events.append(
                _event(
                    "effort", over, total, clipped_total, limits.effort, limits, "predicted torque"
                )
            )
            torque = np.where(over, clipped_total - pd, torque)
    new_memory = SafetyMemory(
        position=position if every_pd else np.where(mask, position, np.nan),
        velocity=implied if every_pd else np.where(mask, implied, state.velocity),
        time=state.time,
        request=bounded,
    )
    if not events and not rounded:
        return SafetyResult(action, action, (), new_memory)
    if policy is SafetyPolicy.REFUSE:
        from jointlab.errors import CommandRefused

        raise CommandRefused(
            "command outside the soft limits: " + "; ".join(e.message for e in events),
            reason="out_of_limits",
        )
    applied = NJointAction(torque, position, action.position_kp, action.position_kd, velocity)
    return SafetyResult(action, applied, tuple(events), new_memory)


class SafetyLayer:
    """:func:`enforce` with its memory kept between ticks.

    Args:
        limits: Soft limits (or pass a description to :meth:`for_description`).
        dt: Nominal control period in seconds.
        policy: Clamp and report, or refuse.
        check_mode: Whether to enforce the acceleration limit on position targets.
    """

    def __init__(
        self,
        limits: SafetyLimits,
        dt: float,
        *,
        policy: SafetyPolicy = SafetyPolicy.CLAMP,
        check_mode: DynamicLimitsCheckMode = DynamicLimitsCheckMode.CHECK_JOINT_ACCELERATION,
    ) -> None:
        self.limits = limits
        self.dt = float(dt)
        self.policy = SafetyPolicy(policy)
        self.check_mode = DynamicLimitsCheckMode(check_mode)
        self.memory: SafetyMemory | None = None

    @classmethod
    def for_description(
        cls, description: RobotDescription, dt: float, **kwargs: Any
    ) -> SafetyLayer:
        """A layer with the description's soft limits."""
        return cls(SafetyLimits.from_description(description), dt, **kwargs)

    def reset(self) -> None:
        """Forget the previous target (the next tick starts from the measured position)."""
        self.memory = None

    def filter(self, action: NJointAction, state: ArrayState) -> SafetyResult:
        """Enforce the limits on ``action`` at ``state`` and remember the result."""
        result = enforce(
            action,
            state,
            self.limits,
            dt=self.dt,
            memory=self.memory,
            policy=self.policy,
            check_mode=self.check_mode,
        )
        self.memory = result.memory
        return result
