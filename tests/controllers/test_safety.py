"""The safety layer as a pure function: clamps are reported, refusals carry reasons."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlab.controllers import (
    DynamicLimitsCheckMode,
    SafetyLayer,
    SafetyLimits,
    SafetyMemory,
    SafetyPolicy,
    enforce,
)
from jointlab.errors import CommandRefused
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots import description_from_dict, description_to_dict, load_robot

GANTRY = load_robot("gantry3")
LIMITS = SafetyLimits.from_description(GANTRY)
DT = 0.001


def state(q=None, qd=None, time=0.0):
    q = GANTRY.home.copy() if q is None else np.asarray(q, float)
    qd = np.zeros(3) if qd is None else np.asarray(qd, float)
    zeros = np.zeros(3)
    return ArrayState(time, q, qd, zeros, zeros, zeros, np.ones(3, np.uint8), True, True)


def test_an_action_inside_the_limits_passes_unchanged():
    action = NJointAction.Position(GANTRY.home)
    result = enforce(action, state(), LIMITS, dt=DT)
    assert result.applied is action and result.events == () and not result.clamped
    # a step the velocity limit allows in one tick passes when acceleration is not checked
    step = NJointAction.Position(GANTRY.home + np.array([5e-4, 0, 0]))
    result = enforce(step, state(), LIMITS, dt=DT, check_mode=DynamicLimitsCheckMode.CHECK_NONE)
    assert result.applied is step


def test_position_target_outside_soft_limits_is_clamped_and_reported():
    s = state(q=[0.79, 0.3, -0.2])
    result = enforce(NJointAction.Position([0.9, 0.3, -0.2]), s, LIMITS, dt=DT)
    (event,) = [e for e in result.events if e.quantity == "position"]
    assert event.joints == (0,) and event.requested == (0.9,) and event.limit == (0.8,)
    assert "joint 0 (x)" in event.message
    assert result.applied.position[0] <= 0.8
    assert result.desired.position[0] == 0.9  # desired kept


def test_position_jump_becomes_a_ramp_at_the_velocity_limit():
    layer = SafetyLayer(LIMITS, DT, check_mode=DynamicLimitsCheckMode.CHECK_NONE)
    s = state()
    target = NJointAction.Position(GANTRY.home + np.array([0.2, 0, 0]))
    result = layer.filter(target, s)
    step = result.applied.position[0] - GANTRY.home[0]
    assert step == pytest.approx(LIMITS.velocity[0] * DT)
    assert [e.quantity for e in result.events] == ["velocity"]
    later = layer.filter(target, state(time=DT))
    assert later.applied.position[0] - result.applied.position[0] == pytest.approx(
        LIMITS.velocity[0] * DT
    )


def test_acceleration_check_mode_governs_the_ramp():
    layer = SafetyLayer(LIMITS, DT, check_mode=DynamicLimitsCheckMode.CHECK_JOINT_ACCELERATION)
    target = NJointAction.Position(GANTRY.home + np.array([0.05, 0, 0]))
    refs = []
    for k in range(600):
        result = layer.filter(target, state(time=k * DT))
        refs.append(result.applied.position[0])
    refs = np.array([GANTRY.home[0], *refs])
    velocity = np.diff(refs) / DT
    acceleration = np.diff(velocity) / DT
    assert np.all(np.abs(velocity) <= LIMITS.velocity[0] * (1 + 1e-6))
    # every tick, arrival and the ticks after it included (it used to snap to rest on arrival)
    assert np.all(np.abs(acceleration) <= LIMITS.acceleration[0] * (1 + 1e-6))
    assert refs[-1] == GANTRY.home[0] + 0.05  # landed exactly, and stays
    assert np.all(np.diff(refs) >= 0)  # without overshoot


def governed_run(start_v, request, acceleration, velocity):
    """Targets the acceleration check makes of standing requests, one joint per entry.

    Every joint starts at 0 with its target moving at ``start_v``; arrays of shape ``(n,)``.
    """
    start_v, request, acceleration, velocity = (
        np.asarray(x, float) for x in (start_v, request, acceleration, velocity)
    )
    n = start_v.shape[0]
    limits = SafetyLimits(
        np.full(n, -1e3),
        np.full(n, 1e3),
        velocity,
        acceleration,
        np.full(n, 1e3),
        np.full(n, 1e3),
        np.zeros(n),
        np.zeros(n),
        tuple(f"j{i}" for i in range(n)),
    )
    layer = SafetyLayer(limits, DT, check_mode=DynamicLimitsCheckMode.CHECK_JOINT_ACCELERATION)
    layer.memory = SafetyMemory(np.zeros(n), start_v, -DT)
    reach = np.abs(request) + start_v**2 / acceleration
    seconds = np.abs(start_v) / acceleration + 2 * np.sqrt(reach / acceleration) + reach / velocity
    targets = [np.zeros(n)]
    action = NJointAction.Position(request)
    for k in range(int(2 * seconds.max() / DT) + 20):
        now = ArrayState(k * DT, *[np.zeros(n)] * 5, np.ones(n, np.uint8), True, True)
        targets.append(layer.filter(action, now).applied.position)
    return np.array(targets)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(-0.5, 0.5), st.floats(-0.3, 0.3), st.floats(5.0, 200.0), st.floats(0.6, 3.0)
        ),
        min_size=1,
        max_size=30,
    )
)
def test_a_standing_request_is_reached_within_the_acceleration_limit(joints):
    start_v, request, acceleration, velocity = (np.array(x) for x in zip(*joints, strict=True))
    targets = governed_run(start_v, request, acceleration, velocity)
    speeds = np.diff(np.vstack([-start_v * DT, targets]), axis=0) / DT
    tolerance = acceleration * DT * (1 + 1e-6) + 1e-9
    assert np.all(np.abs(np.diff(speeds, axis=0)) <= tolerance)
    assert np.all(np.abs(speeds) <= velocity * (1 + 1e-6) + 1e-9)
    np.testing.assert_array_equal(targets[-2:], [request, request])  # there, at rest


def test_the_issue_arrival_no_longer_drops_to_rest_in_one_tick():
    # 50 rad/s², arriving at 0.584 rad/s used to stop dead: -584 rad/s² in one tick
    targets = governed_run([0.584], [0.01], [50.0], [2.0])[:, 0]
    acceleration = np.diff(np.diff(np.concatenate([[-0.584 * DT], targets]))) / DT**2
    assert np.abs(acceleration).max() <= 50.0 * (1 + 1e-6)


def test_velocity_and_effort_are_clipped_with_events():
    action = NJointAction(np.array([500.0, 0, 0]), GANTRY.home, None, None, [0, 3.0, 0])
    result = enforce(action, state(), LIMITS, dt=DT)
    kinds = {e.quantity: e for e in result.events}
    assert kinds["velocity"].joints == (1,) and kinds["velocity"].applied == (1.0,)
    assert kinds["effort"].joints == (0,) and kinds["effort"].applied == (300.0,)
    np.testing.assert_allclose(result.applied.torque, [300.0, 0, 0])


def test_torque_pushing_beyond_a_soft_limit_is_cut():
    result = enforce(
        NJointAction.Torque([50.0, -5.0, 0]), state(q=[0.81, 0.3, -0.2]), LIMITS, dt=DT
    )
    assert result.applied.torque.tolist() == [0.0, -5.0, 0.0]
    assert result.events[0].quantity == "position"


def test_refuse_policy_raises_with_every_problem():
    action = NJointAction(np.array([500.0, 0, 0]), [0.9, 0.3, -0.2])
    with pytest.raises(CommandRefused) as info:
        enforce(action, state(q=[0.79, 0.3, -0.2]), LIMITS, dt=DT, policy=SafetyPolicy.REFUSE)
    assert info.value.reason == "out_of_limits"
    assert "position target 0.9" in str(info.value) and "feed-forward torque 500" in str(info.value)


def test_soft_effort_below_system_limit_limits_the_predicted_torque():
    description = description_to_dict(GANTRY)
    description["actuators"][0]["soft_limits"] = {"effort": 50.0}
    soft = SafetyLimits.from_description(description_from_dict(description))
    moving = state(qd=[-0.5, 0, 0])  # the D term alone asks for kd * 0.5 = 200 N
    result = enforce(
        NJointAction.Position(GANTRY.home),
        moving,
        soft,
        dt=DT,
        check_mode=DynamicLimitsCheckMode.CHECK_NONE,
    )
    applied = result.applied.resolve(soft.kp, soft.kd)
    predicted = applied.torque_at(moving.position, moving.velocity)
    assert predicted[0] == pytest.approx(50.0)
    assert result.events[-1].quantity == "effort"


finite = st.floats(-1e3, 1e3)


@given(
    position=st.lists(st.one_of(finite, st.just(float("nan"))), min_size=3, max_size=3),
    torque=st.lists(finite, min_size=3, max_size=3),
    velocity=st.lists(finite, min_size=3, max_size=3),
)
def test_applied_actions_always_respect_the_limits(position, torque, velocity):
    action = NJointAction(torque, position, None, None, velocity)
    result = enforce(action, state(), LIMITS, dt=DT)
    applied = result.applied
    mask = applied.pd_mask
    assert np.all(applied.position[mask] >= LIMITS.lower[mask])
    assert np.all(applied.position[mask] <= LIMITS.upper[mask])
    assert np.all(
        np.abs(applied.position[mask] - GANTRY.home[mask])
        <= LIMITS.velocity[mask] * DT * (1 + 1e-6) + 1e-12
    )
    assert np.all(np.abs(applied.velocity[mask]) <= LIMITS.velocity[mask])
    assert np.all(np.abs(applied.torque) <= LIMITS.effort)
    assert (applied is action) == (not result.events)


def test_tick_bounds_per_period_are_the_step_velocity_and_effort_bounds():
    limits = SafetyLimits.from_description(GANTRY)
    periods = [DT * (1 + k * 1e-15) for k in range(40)]  # measured periods differ by rounding
    for dt in periods:
        step = limits.velocity * dt * (1 + 1e-6) + 1e-12
        expected = np.concatenate([step, limits.velocity, limits.effort])
        np.testing.assert_array_equal(limits.tick_bounds(dt), expected)
        assert limits.tick_bounds(dt) is limits.tick_bounds(dt)  # kept, not rebuilt
    assert len(limits.__dict__["_tick_bounds"]) <= 16
    with pytest.raises(ValueError):
        limits.tick_bounds(DT)[0] = 1.0  # shared between ticks: read-only


# --------------------------------------------------------------------------- untouched path
# enforce() decides the common tick (an action no check changes) with one comparison; the
# result must be exactly the full checks' (_checked), on limits, rounding and NaN included.
from jointlab.controllers.safety import _checked, _untouched  # noqa: E402

UNBOUNDED = SafetyLimits(
    lower=np.array([-np.inf, -1.0, -np.inf]),
    upper=np.array([np.inf, np.inf, 2.0]),
    velocity=LIMITS.velocity,
    acceleration=LIMITS.acceleration,
    effort=LIMITS.effort,
    system_effort=LIMITS.system_effort,
    kp=LIMITS.kp,
    kd=LIMITS.kd,
    names=LIMITS.names,
)


def _near(values, rng_choice, scale):
    """``values`` moved by one of: nothing, an ulp either way, a tiny or a small step."""
    offsets = {0: 0.0, 1: 1e-9, 2: -1e-9, 3: 1e-13, 4: -1e-13, 5: scale, 6: -scale}
    return np.array(
        [
            np.nextafter(v, np.inf)
            if c == 7
            else np.nextafter(v, -np.inf)
            if c == 8
            else v + offsets[c]
            for v, c in zip(values, rng_choice, strict=True)
        ]
    )


@settings(max_examples=400, deadline=None)
@given(
    limits=st.sampled_from([LIMITS, UNBOUNDED]),
    anchor=st.lists(st.sampled_from(["lower", "upper", *["home"] * 6]), min_size=3, max_size=3),
    moves=st.lists(st.sampled_from([*[0] * 6, 1, 2, 3, 4, 5, 6, 7, 8]), min_size=3, max_size=3),
    step=st.sampled_from([0.0, 1e-4, 1e-4, 1e-3, 0.05]),
    pd=st.sampled_from([[True] * 3] * 3 + [[True, False, True], [False] * 3]),
    velocity=st.sampled_from(["nan", "zero", "fast", "some", "some"]),
    torque=st.sampled_from([0.0, 0.5, 0.5, 1.2]),
    memory_kind=st.sampled_from(["none", "previous", "previous", "nan", "late"]),
    check_mode=st.sampled_from(
        [DynamicLimitsCheckMode.CHECK_NONE, DynamicLimitsCheckMode.TYPE_UNSPECIFIED]
    ),
    policy=st.sampled_from(list(SafetyPolicy)),
)
def test_an_untouched_action_gives_exactly_the_full_checks_result(
    limits, anchor, moves, step, pd, velocity, torque, memory_kind, check_mode, policy
):
    finite = lambda a, b: np.where(np.isfinite(a), a, b)  # noqa: E731
    base = {
        "lower": finite(limits.lower, -3.0),
        "upper": finite(limits.upper, 3.0),
        "home": GANTRY.home,
    }
    target = _near(np.array([base[a][j] for j, a in enumerate(anchor)]), moves, step)
    position = np.where(pd, target, np.nan)
    velocities = {
        "nan": np.full(3, np.nan),
        "zero": np.zeros(3),
        "fast": 1.5 * limits.velocity,
        "some": 0.3 * limits.velocity,
    }[velocity]
    action = NJointAction(
        torque * limits.effort * np.array([1, -1, 1]), position, velocity=velocities
    )
    q = target - np.array([step, -step, 0.0])
    s = state(q=q, time=0.01)
    memory = {
        "none": None,
        "previous": SafetyMemory(q, np.zeros(3), 0.009, q),
        "nan": SafetyMemory(np.array([q[0], np.nan, q[2]]), np.zeros(3), 0.009, None),
        "late": SafetyMemory(q - step, np.full(3, 0.1), 0.0097, q),
    }[memory_kind]

    def outcome(function):
        try:
            return function()
        except CommandRefused as error:
            return str(error)

    fast = outcome(
        lambda: enforce(
            action, s, limits, dt=DT, memory=memory, policy=policy, check_mode=check_mode
        )
    )
    full = outcome(lambda: _checked(action, s, limits, DT, memory, policy, check_mode))
    if isinstance(full, str):
        assert fast == full
        return
    assert fast.events == full.events
    assert (fast.applied is action) == (full.applied is action)
    for name in ("torque", "position", "position_kp", "position_kd", "velocity"):
        np.testing.assert_array_equal(getattr(fast.applied, name), getattr(full.applied, name))
    np.testing.assert_array_equal(fast.memory.position, full.memory.position)
    np.testing.assert_array_equal(fast.memory.velocity, full.memory.velocity)
    np.testing.assert_array_equal(fast.memory.request, full.memory.request)
    assert fast.memory.time == full.memory.time


def test_a_planned_motion_inside_the_limits_takes_the_untouched_path():
    # the point of the path: a controller's usual tick is decided by one comparison
    layer = SafetyLayer(LIMITS, DT, check_mode=DynamicLimitsCheckMode.CHECK_NONE)
    for k in range(200):
        target = GANTRY.home + np.array([1e-4 * k, 0.0, 0.0])
        action = NJointAction(np.zeros(3), target, velocity=np.array([0.1, 0.0, 0.0]))
        s = state(q=target, time=k * DT)
        assert _untouched(action, s, LIMITS, DT, layer.memory) is not None
        result = layer.filter(action, s)
        assert result.applied is action and not result.events


@settings(max_examples=300, deadline=None)
@given(
    lower=st.floats(-4.0, 4.0),
    width=st.floats(1e-3, 8.0),
    side=st.sampled_from(["lower", "upper"]),
    ulps=st.integers(-3, 3),
)
def test_a_target_ulps_from_a_soft_limit_gets_the_full_checks_result(lower, width, side, ulps):
    # the untouched path's position test must not let rounding pass a target just outside
    upper = lower + width
    limits = SafetyLimits(
        lower=np.full(3, lower),
        upper=np.full(3, upper),
        velocity=np.full(3, 1e3),
        acceleration=np.full(3, 1e4),
        effort=np.full(3, 10.0),
        system_effort=np.full(3, 10.0),
        kp=LIMITS.kp,
        kd=LIMITS.kd,
        names=LIMITS.names,
    )
    target = lower if side == "lower" else upper
    for _ in range(abs(ulps)):
        target = np.nextafter(target, np.inf if ulps > 0 else -np.inf)
    action = NJointAction(np.zeros(3), np.full(3, target), velocity=np.zeros(3))
    s = state(q=np.full(3, target), time=0.0)
    mode = DynamicLimitsCheckMode.CHECK_NONE
    fast = enforce(action, s, limits, dt=DT, check_mode=mode)
    full = _checked(action, s, limits, DT, None, SafetyPolicy.CLAMP, mode)
    np.testing.assert_array_equal(fast.applied.position, full.applied.position)
    assert (fast.applied is action) == (full.applied is action)
    assert lower <= fast.applied.position.min() and fast.applied.position.max() <= upper
