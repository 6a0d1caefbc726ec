"""The backend contract: NJointAction, ArrayState, the flag enums and the Robot ABC."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from jointlab.contract import Robot, given_fields
from jointlab.errors import ActionError, JointLabError
from jointlab.interface import ActuatorState, ActuatorType, ArrayState, NJointAction, nan_vector
from jointlab.joint_vectors import MAX_GAIN, MAX_TARGET

NAN = math.nan
INF = math.inf
FIELDS = ["torque", "position", "position_kp", "position_kd", "velocity"]


# --------------------------------------------------------------------------- factories
def test_torque_factory() -> None:
    action = NJointAction.Torque([1.0, -2.0, 0.5])
    assert action.dof == 3
    np.testing.assert_array_equal(action.torque, [1.0, -2.0, 0.5])
    for name in FIELDS[1:]:
        assert np.all(np.isnan(getattr(action, name))), name
    assert not action.pd_mask.any()


def test_position_factory() -> None:
    action = NJointAction.Position([0.1, 0.2], kp=[10.0, 20.0], kd=[1.0, NAN], velocity=[0.5, NAN])
    np.testing.assert_array_equal(action.torque, [0.0, 0.0])
    np.testing.assert_array_equal(action.position, [0.1, 0.2])
    np.testing.assert_array_equal(action.position_kp, [10.0, 20.0])
    np.testing.assert_array_equal(action.position_kd, [1.0, NAN])
    np.testing.assert_array_equal(action.velocity, [0.5, NAN])
    np.testing.assert_array_equal(action.pd_mask, [True, True])
    default = NJointAction.Position([0.1, 0.2])
    assert np.all(np.isnan(default.position_kp)) and np.all(np.isnan(default.position_kd))


def test_torque_and_position_factory() -> None:
    action = NJointAction.TorqueAndPosition([1.0, 2.0], [NAN, 0.3], [5.0, 6.0], [0.1, 0.2])
    np.testing.assert_array_equal(action.torque, [1.0, 2.0])
    np.testing.assert_array_equal(action.position, [NAN, 0.3])
    np.testing.assert_array_equal(action.pd_mask, [False, True])
    assert action == NJointAction([1.0, 2.0], [NAN, 0.3], [5.0, 6.0], [0.1, 0.2])


def test_zero_factory() -> None:
    action = NJointAction.Zero(4)
    np.testing.assert_array_equal(action.torque, np.zeros(4))
    assert action.dof == 4 and action.is_zero
    assert not NJointAction.Torque([0.0, 1e-9]).is_zero
    assert not NJointAction.Position([0.0, 0.0]).is_zero


def test_none_helper() -> None:
    vector = NJointAction.None_(3)
    assert vector.shape == (3,) and vector.dtype == np.float64 and np.all(np.isnan(vector))
    np.testing.assert_array_equal(nan_vector(2), [NAN, NAN])


def test_inputs_become_float64_copies() -> None:
    torque = np.array([1, 2, 3])
    action = NJointAction.Torque(torque)
    assert action.torque.dtype == np.float64
    torque[0] = 99
    assert action.torque[0] == 1.0


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize("name", FIELDS[1:])
def test_wrong_length_names_the_field_and_shape(name: str) -> None:
    kwargs = {name: np.zeros(2)}
    with pytest.raises(ActionError) as info:
        NJointAction(np.zeros(3), **kwargs)
    message = str(info.value)
    assert f"NJointAction.{name}" in message and "(2,)" in message and "(3,)" in message


@pytest.mark.parametrize(
    "value", [5.0, [[1.0, 2.0]], np.zeros((2, 2))], ids=["scalar", "2d", "matrix"]
)
def test_torque_must_be_a_vector(value: object) -> None:
    with pytest.raises(ActionError, match=r"NJointAction\.torque"):
        NJointAction(value)


def test_non_numeric_is_an_action_error() -> None:
    with pytest.raises(ActionError, match=r"NJointAction\.torque"):
        NJointAction(["a", "b"])
    with pytest.raises(ActionError, match=r"NJointAction\.position_kp"):
        NJointAction.Position([0.0], kp=["stiff"])


@pytest.mark.parametrize("bad", [NAN, INF, -INF])
def test_non_finite_torque_refused(bad: float) -> None:
    with pytest.raises(ActionError, match="torque") as info:
        NJointAction.Torque([0.0, bad, 1.0])
    assert "[1]" in str(info.value)  # names the joint


@pytest.mark.parametrize("name", ["position", "position_kp", "position_kd", "velocity"])
@pytest.mark.parametrize("bad", [INF, -INF])
def test_infinite_values_refused(name: str, bad: float) -> None:
    values = {n: np.zeros(2) for n in FIELDS}
    values[name] = np.array([0.0, bad])
    with pytest.raises(ActionError, match=f"NJointAction.{name}"):
        NJointAction(**values)


@pytest.mark.parametrize("gain", ["position_kp", "position_kd"])
def test_negative_gains_refused(gain: str) -> None:
    values = {"torque": np.zeros(3), "position": np.zeros(3), gain: np.array([1.0, -0.5, 2.0])}
    with pytest.raises(ActionError, match=gain) as info:
        NJointAction(**values)
    assert "[1]" in str(info.value)


def test_nan_position_gains_and_velocity_allowed() -> None:
    action = NJointAction([0.0, 0.0], [NAN, 0.1], [NAN, NAN], [NAN, 1.0], [NAN, NAN])
    np.testing.assert_array_equal(action.pd_mask, [False, True])


@pytest.mark.parametrize(
    ("make", "field", "words"),
    [
        (lambda: NJointAction.Torque([1.0 + 2.0j, 0.0]), "torque", "complex"),
        (lambda: NJointAction.Position(np.array([0.5, 1j])), "position", "complex"),
        (lambda: NJointAction.Position(["0.1", "0.2"]), "position", "strings"),
        (lambda: NJointAction.Torque([1.0, "2"]), "torque", "strings"),
        (lambda: NJointAction.Position([0.1, None]), "position", "None"),
        (lambda: NJointAction.Torque([]), "torque", "(0,)"),
        (lambda: NJointAction.Position(np.zeros(0)), "position", "(0,)"),
        (lambda: NJointAction.Zero(0), "Zero", "dof >= 1"),
        (lambda: NJointAction.Position([0.0], kp=[1e300]), "position_kp", "overflow"),
        (lambda: NJointAction.Position([0.0], kd=[2 * MAX_GAIN]), "position_kd", "overflow"),
        (lambda: NJointAction.Position([1e300, 0.0]), "position", "[0]"),
        (lambda: NJointAction.Position([0.0], velocity=[-1e12]), "velocity", "beyond"),
        (lambda: NJointAction.Torque([10**400, 0.0]), "torque", "float range"),
    ],
    ids=[
        "complex-torque",
        "complex-position",
        "numeric-strings",
        "mixed-strings",
        "none",
        "empty-torque",
        "empty-position",
        "zero-dof",
        "huge-kp",
        "huge-kd",
        "huge-position",
        "huge-velocity",
        "integer-beyond-float",
    ],
)
def test_refused_inputs_name_the_field(make: object, field: str, words: str) -> None:
    with pytest.raises(ActionError) as info:
        make()  # type: ignore[operator]
    message = str(info.value)
    assert field in message and words in message, message


def test_bounds_are_inclusive_and_nan_passes() -> None:
    action = NJointAction.Position([MAX_TARGET, -MAX_TARGET, NAN], kp=[MAX_GAIN, 0.0, NAN])
    np.testing.assert_array_equal(action.pd_mask, [True, True, False])
    assert NJointAction.Torque([1e300, -1e300]).torque[0] == 1e300  # clamped by the backend


def test_position_fast_path_is_the_same_action() -> None:
    target = np.array([0.1, -0.2, 0.3])
    fast = NJointAction.Position(target)
    slow = NJointAction(np.zeros(3), target.tolist(), None, None, None)
    assert fast == slow and not fast.is_zero
    np.testing.assert_array_equal(fast.pd_mask, slow.pd_mask)
    target[0] = 9.0  # the action holds a copy
    assert fast.position[0] == 0.1
    partial = NJointAction.Position(np.array([0.1, NAN, 0.3]))
    np.testing.assert_array_equal(partial.pd_mask, [True, False, True])


@settings(max_examples=200)
@given(
    hnp.arrays(
        np.float64, st.integers(0, 8), elements=st.floats(allow_nan=True, allow_infinity=True)
    )
)
def test_position_fast_path_accepts_and_refuses_as_the_checked_path(target: np.ndarray) -> None:
    """``Position(q)`` of a float64 vector (one-call check) behaves as the general path."""
    try:
        slow = NJointAction(np.zeros(target.shape[0]), target.tolist(), None, None, None)
    except ActionError:
        with pytest.raises(ActionError, match=r"NJointAction\.position"):
            NJointAction.Position(target)
        return
    fast = NJointAction.Position(target)
    assert fast == slow and not fast.position.flags.writeable
    np.testing.assert_array_equal(fast.pd_mask, slow.pd_mask)
    assert fast.is_zero == slow.is_zero


def test_action_errors_are_jointlab_errors() -> None:
    assert issubclass(ActionError, JointLabError)
    assert issubclass(ActionError, ValueError)


# --------------------------------------------------------------------------- immutability
def test_arrays_are_read_only() -> None:
    action = NJointAction.TorqueAndPosition([1.0, 2.0], [0.0, 0.0], [1.0, 1.0], [0.1, 0.1])
    for name in [*FIELDS, "pd_mask"]:
        with pytest.raises(ValueError, match="read-only"):
            getattr(action, name)[0] = 5.0


def test_attributes_cannot_be_assigned() -> None:
    action = NJointAction.Zero(2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        action.torque = np.ones(2)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        action.position = np.ones(2)  # type: ignore[misc]


def test_equality_and_hash_treat_nan_as_equal() -> None:
    a = NJointAction.Position([0.1, NAN], kp=[1.0, NAN])
    b = NJointAction.Position([0.1, NAN], kp=[1.0, NAN])
    assert a == b and hash(a) == hash(b)
    assert a != NJointAction.Position([0.2, NAN], kp=[1.0, NAN])
    assert len({a, b}) == 1


# --------------------------------------------------------------------------- resolve
def test_resolve_semantics() -> None:
    action = NJointAction(
        torque=[1.0, 2.0, 3.0, 4.0],
        position=[NAN, 0.5, 0.5, 0.5],
        position_kp=[7.0, NAN, 3.0, 3.0],
        position_kd=[7.0, 0.2, NAN, 0.2],
        velocity=[9.0, 1.0, 1.0, NAN],
    )
    resolved = action.resolve(np.array([10.0, 20.0, 30.0, 40.0]), np.array([1.0, 2.0, 3.0, 4.0]))
    # Joint 0: NaN position disables the PD entirely, whatever its gains and velocity.
    assert (resolved.kp[0], resolved.kd[0], resolved.position[0], resolved.velocity[0]) == (
        0.0,
        0.0,
        0.0,
        0.0,
    )
    np.testing.assert_array_equal(resolved.pd_mask, [False, True, True, True])
    # NaN gain -> the default; NaN velocity -> 0.
    np.testing.assert_array_equal(resolved.kp, [0.0, 20.0, 3.0, 3.0])
    np.testing.assert_array_equal(resolved.kd, [0.0, 0.2, 3.0, 0.2])
    np.testing.assert_array_equal(resolved.velocity, [0.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(resolved.torque, [1.0, 2.0, 3.0, 4.0])
    q, qd = np.array([0.3, 0.1, 0.2, 0.4]), np.array([5.0, 0.5, 0.0, 1.0])
    expected = np.array(
        [
            1.0,  # PD off
            2.0 + 20.0 * (0.5 - 0.1) + 0.2 * (1.0 - 0.5),
            3.0 + 3.0 * (0.5 - 0.2) + 3.0 * (1.0 - 0.0),
            4.0 + 3.0 * (0.5 - 0.4) + 0.2 * (0.0 - 1.0),
        ]
    )
    np.testing.assert_allclose(resolved.torque_at(q, qd), expected, rtol=1e-15)


def test_resolve_of_a_torque_action_is_pure_torque() -> None:
    resolved = NJointAction.Torque([0.5, -0.5]).resolve(np.ones(2), np.ones(2))
    np.testing.assert_array_equal(resolved.torque_at(np.ones(2) * 3, np.ones(2) * 4), [0.5, -0.5])


_finite = st.floats(-1e3, 1e3, allow_nan=False)
_maybe_nan = st.one_of(_finite, st.just(NAN))
_gain = st.one_of(st.floats(0.0, 1e3), st.just(NAN))


@settings(max_examples=100)
@given(
    st.integers(1, 8).flatmap(
        lambda n: st.tuples(
            *(
                hnp.arrays(np.float64, n, elements=e)
                for e in (
                    _finite,
                    _maybe_nan,
                    _gain,
                    _gain,
                    _maybe_nan,
                    _gain,
                    _gain,
                    _finite,
                    _finite,
                )
            )
        )
    )
)
def test_resolve_matches_the_design_law(vectors: tuple[np.ndarray, ...]) -> None:
    torque, position, kp, kd, velocity, default_kp, default_kd, q, qd = vectors
    default_kp, default_kd = np.nan_to_num(default_kp), np.nan_to_num(default_kd)
    action = NJointAction(torque, position, kp, kd, velocity)
    resolved = action.resolve(default_kp, default_kd)
    for i in range(action.dof):
        expected = torque[i]
        if not math.isnan(position[i]):
            gain_p = default_kp[i] if math.isnan(kp[i]) else kp[i]
            gain_d = default_kd[i] if math.isnan(kd[i]) else kd[i]
            target_v = 0.0 if math.isnan(velocity[i]) else velocity[i]
            expected += gain_p * (position[i] - q[i]) + gain_d * (target_v - qd[i])
        assert resolved.torque_at(q, qd)[i] == pytest.approx(expected, rel=1e-12, abs=1e-9)
    for name in ("torque", "position", "kp", "kd", "velocity"):
        assert np.all(np.isfinite(getattr(resolved, name))), name
    # The action itself is untouched by resolving.
    np.testing.assert_array_equal(action.position, position)


@settings(max_examples=100)
@given(
    st.integers(1, 8).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.float64, n, elements=st.floats(allow_nan=True, allow_infinity=True)),
            hnp.arrays(np.float64, n, elements=st.floats(allow_nan=True, allow_infinity=True)),
            hnp.arrays(np.float64, n, elements=st.floats(allow_nan=True, allow_infinity=True)),
        )
    )
)
def test_construction_accepts_exactly_the_valid_vectors(
    vectors: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    torque, position, kp = vectors
    with np.errstate(invalid="ignore"):
        valid = (
            np.all(np.isfinite(torque))
            and not np.any(np.abs(position) > MAX_TARGET)
            and not np.any((kp < 0) | (kp > MAX_GAIN))
        )
    if valid:
        action = NJointAction(torque, position, kp)
        np.testing.assert_array_equal(action.torque, torque)
        np.testing.assert_array_equal(action.position, position)
        np.testing.assert_array_equal(action.position_kp, kp)
        assert all(len(row) == len(torque) for row in action.get_data())
    else:
        with pytest.raises(ActionError):
            NJointAction(torque, position, kp)


# --------------------------------------------------------------------------- Loggable
def test_action_get_name_and_get_data() -> None:
    action = NJointAction.TorqueAndPosition([1.0, 2.0, 3.0], [0.1, NAN, 0.3])
    assert action.get_name() == FIELDS
    data = action.get_data()
    assert len(data) == 5 and all(len(row) == 3 for row in data)
    assert all(isinstance(v, float) for row in data for v in row)
    assert data[0] == [1.0, 2.0, 3.0]
    assert data[1][0] == 0.1 and math.isnan(data[1][1])
    assert set(action.to_dict()) == set(FIELDS)


def _state(dof: int = 3) -> ArrayState:
    return ArrayState(
        time=1.5,
        position=np.arange(dof, dtype=float),
        velocity=np.ones(dof),
        acceleration=np.zeros(dof),
        torque=np.full(dof, 0.5),
        current=np.full(dof, 0.1),
        actuator_state=np.array(
            [ActuatorState.IDLE, ActuatorState.MOVING, ActuatorState.BRAKED], dtype=np.uint8
        )[:dof],
        motor_power=True,
        armed=False,
    )


def test_array_state_get_name_and_get_data() -> None:
    state = _state()
    names = state.get_name()
    assert names[:9] == [
        "time",
        "position",
        "velocity",
        "acceleration",
        "torque",
        "current",
        "actuator_state",
        "motor_power",
        "armed",
    ]
    data = state.get_data()
    assert len(data) == len(names)
    shapes = dict(zip(names, (len(row) for row in data), strict=True))
    for name in ("position", "velocity", "acceleration", "torque", "current", "actuator_state"):
        assert shapes[name] == 3, name
    for name in ("time", "motor_power", "armed", "brakes", "watchdog"):
        assert shapes[name] == 1, name
    assert data[0] == [1.5]
    assert data[names.index("actuator_state")] == [1.0, 2.0, 4.0]
    assert data[names.index("motor_power")] == [1.0]
    assert data[names.index("armed")] == [0.0]
    assert all(isinstance(v, float) for row in data for v in row)
    assert state.dof == 3


def test_array_state_is_frozen_and_compares_by_value() -> None:
    state = _state()
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.time = 2.0  # type: ignore[misc]
    assert state == _state()
    assert state != dataclasses.replace(state, armed=True)


# --------------------------------------------------------------------------- enums
def test_actuator_state_flags() -> None:
    assert [int(s) for s in ActuatorState] == [1, 2, 4, 8]
    assert ActuatorState.IDLE == 1 and ActuatorState.MOVING == 2
    assert ActuatorState.BRAKED == 4 and ActuatorState.STALLED == 8
    combined = ActuatorState.BRAKED | ActuatorState.STALLED
    assert int(combined) == 12 and ActuatorState.STALLED in combined


def test_actuator_type_codes() -> None:
    assert ActuatorType.LINEAR == 1 and ActuatorType.ROTARY == 2
    assert len(ActuatorType) == 2


# --------------------------------------------------------------------------- Robot ABC
#: The Robot interface's verbs: concrete in the base (it owns the checks), hooks per backend.
VERBS = {
    "read",
    "apply",
    "step",
    "reset",
    "power",
    "brakes",
    "arm",
    "disarm",
    "geometry",
    "configure_speed",
    "configure_accel",
}
HOOKS = {
    "_read",
    "_apply",
    "_step",
    "_reset",
    "_power",
    "_brakes",
    "_arm",
    "_disarm",
    "_geometry",
    "_configure_speed",
    "_configure_accel",
    "_readiness",
    "close",
}


def test_robot_cannot_be_instantiated() -> None:
    with pytest.raises(TypeError):
        Robot()  # type: ignore[abstract]


def test_robot_verbs_are_the_base_s_and_backends_implement_hooks() -> None:
    assert HOOKS <= Robot.__abstractmethods__
    assert not VERBS & Robot.__abstractmethods__  # the checks cannot be overridden by accident
    assert isinstance(Robot.dof, property) and isinstance(Robot.closed, property)
    assert hasattr(Robot, "__enter__") and hasattr(Robot, "__exit__")


def test_robot_subclass_missing_a_hook_cannot_be_instantiated() -> None:
    namespace = {name: (lambda self, *a: None) for name in Robot.__abstractmethods__}
    del namespace["close"]
    Partial = type("Partial", (Robot,), namespace)
    with pytest.raises(TypeError, match="close"):
        Partial()


def test_robot_context_manager_closes() -> None:
    closed: list[bool] = []
    namespace = {name: (lambda self, *a: None) for name in Robot.__abstractmethods__}
    namespace["close"] = lambda self: closed.append(True)
    Complete = type("Complete", (Robot,), namespace)
    with Complete() as robot:
        assert isinstance(robot, Robot)
    assert closed == [True]


def test_length_errors_name_the_field_the_caller_gave() -> None:
    assert given_fields(NJointAction.Position(np.zeros(5))) == ["position"]
    assert given_fields(NJointAction.Torque(np.ones(5))) == ["torque"]
    assert given_fields(NJointAction.Zero(5)) == ["torque"]
    both = NJointAction.TorqueAndPosition(np.ones(2), np.zeros(2), position_kp=[1.0, 2.0])
    assert given_fields(both) == ["torque", "position", "position_kp"]


@settings(max_examples=60)
@given(flags=hnp.arrays(np.uint8, st.integers(1, 8)))
def test_stalled_is_the_stalled_bit_of_the_flags_or_none(flags) -> None:
    dof = flags.shape[0]
    state = dataclasses.replace(
        _state(1),
        position=np.zeros(dof),
        velocity=np.zeros(dof),
        acceleration=np.zeros(dof),
        torque=np.zeros(dof),
        current=np.zeros(dof),
        actuator_state=flags,
    )
    expected = (flags & int(ActuatorState.STALLED)) != 0
    stalled = state.stalled()
    if expected.any():
        np.testing.assert_array_equal(stalled, expected)
    else:
        assert stalled is None
