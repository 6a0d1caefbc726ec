"""Action modes: spaces derived from the description, normalisation, clipping, NaN errors."""

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from jointlab.envs import ACTION_MODES, NJOINT_FIELDS, ActionAdapter, normalize, unnormalize
from jointlab.envs.actions import action_bounds
from jointlab.errors import ActionError, ConfigurationError
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots import builtin_robots, load_robot

ARM6 = load_robot("arm6")
FLAT_MODES = [m for m in ACTION_MODES if m != "njoint"]
FIELD_COUNT = {
    "torque": 1,
    "position": 1,
    "position_velocity": 2,
    "torque_and_position": 2,
    "position_and_gains": 3,
}


def _state(description, q):
    dof = description.dof
    z = np.zeros(dof)
    return ArrayState(0.0, np.asarray(q, float), z, z, z, z, np.ones(dof, np.uint8), True, True)


@pytest.mark.parametrize("mode", FLAT_MODES)
@pytest.mark.parametrize("robot", builtin_robots())
def test_flat_spaces_are_normalised_boxes_of_the_right_size(mode, robot):
    description = load_robot(robot)
    adapter = ActionAdapter(description, mode)
    space = adapter.space
    assert isinstance(space, spaces.Box)
    assert space.dtype == np.float32
    assert space.shape == (FIELD_COUNT[mode] * description.dof,)
    assert np.all(space.low == -1) and np.all(space.high == 1)


def test_bounds_come_from_the_description():
    bounds = action_bounds(ARM6)
    np.testing.assert_array_equal(bounds["torque"][1], ARM6.soft_effort_limit)
    np.testing.assert_array_equal(bounds["torque"][0], -ARM6.soft_effort_limit)
    np.testing.assert_array_equal(bounds["position"][0], ARM6.soft_lower)
    np.testing.assert_array_equal(bounds["position"][1], ARM6.soft_upper)
    np.testing.assert_array_equal(bounds["velocity"][1], ARM6.soft_velocity_limit)
    np.testing.assert_array_equal(bounds["position_kp"][1], 2 * ARM6.default_kp)
    np.testing.assert_array_equal(bounds["position_kd"][1], 2 * ARM6.default_kd)


def test_njoint_space_is_a_dict_of_physical_boxes():
    adapter = ActionAdapter(ARM6, "njoint")
    assert isinstance(adapter.space, spaces.Dict)
    assert set(adapter.space.spaces) == set(NJOINT_FIELDS)
    np.testing.assert_allclose(adapter.space["torque"].high, ARM6.soft_effort_limit, rtol=1e-6)


@given(
    low=arrays(np.float64, 4, elements=st.floats(-100, 100)),
    width=arrays(np.float64, 4, elements=st.floats(1e-3, 100)),
    x=arrays(np.float64, 4, elements=st.floats(-1, 1)),
)
def test_unnormalize_then_normalize_is_identity(low, width, x):
    high = low + width
    value = unnormalize(x, low, high)
    assert np.all(value >= low - 1e-9 * width) and np.all(value <= high + 1e-9 * width)
    np.testing.assert_allclose(normalize(value, low, high), x, atol=1e-9)


def test_normalize_maps_bounds_to_minus_one_and_one():
    low, high = np.array([-2.0, 0.0]), np.array([2.0, 10.0])
    np.testing.assert_array_equal(normalize(low, low, high), [-1, -1])
    np.testing.assert_array_equal(normalize(high, low, high), [1, 1])
    np.testing.assert_array_equal(normalize(np.array([1.0, 1.0]), np.ones(2), np.ones(2)), [0, 0])


@pytest.mark.parametrize("mode", FLAT_MODES)
def test_to_njoint_maps_to_the_fields(mode):
    adapter = ActionAdapter(ARM6, mode)
    rng = np.random.default_rng(1)
    action = rng.uniform(-1, 1, adapter.space.shape).astype(np.float32)
    converted = adapter.to_njoint(action)
    assert converted.clipped == 0
    fields = adapter.unnormalize(action)
    for name, value in fields.items():
        np.testing.assert_allclose(getattr(converted.action, name), value)
    if "torque" not in fields:
        np.testing.assert_array_equal(converted.action.torque, np.zeros(ARM6.dof))
    for name in set(NJOINT_FIELDS) - set(fields) - {"torque"}:
        assert np.all(np.isnan(getattr(converted.action, name)))
    np.testing.assert_allclose(adapter.normalize(converted.action), action, atol=1e-6)


@pytest.mark.parametrize("mode", FLAT_MODES)
@given(values=arrays(np.float32, 18, elements=st.floats(-1.5, 1.5, width=32)))
def test_convert_equals_the_validating_constructors(mode, values):
    """The trusted path builds the action NJointAction's own checks would have built."""
    adapter = ActionAdapter(ARM6, mode)
    action = values[: adapter.space.shape[0]]
    result, clipped = adapter.convert(action)
    limited = np.clip(action.astype(np.float64), -1.0, 1.0)
    assert clipped == int(np.count_nonzero(limited != action))
    physical = adapter.low + (limited + 1.0) * 0.5 * (adapter.high - adapter.low)
    fields = {
        name: physical[i * ARM6.dof : (i + 1) * ARM6.dof] for i, name in enumerate(adapter.fields)
    }
    if mode == "position":
        expected = NJointAction.Position(fields["position"])
        assert result._plain and expected._plain
        np.testing.assert_array_equal(result.pd_mask, expected.pd_mask)
    else:
        expected = NJointAction(**{"torque": np.zeros(ARM6.dof), **fields})
    assert result.is_zero == expected.is_zero
    for name in NJOINT_FIELDS:
        np.testing.assert_array_equal(getattr(result, name), getattr(expected, name))
        assert not getattr(result, name).flags.writeable
    converted = adapter.to_njoint(action)
    assert converted.clipped == clipped
    np.testing.assert_array_equal(converted.action.position, result.position)


def test_position_and_gains_zero_action_means_default_gains():
    adapter = ActionAdapter(ARM6, "position_and_gains")
    action = np.zeros(adapter.space.shape)
    converted = adapter.to_njoint(action).action
    np.testing.assert_allclose(converted.position_kp, ARM6.default_kp)
    np.testing.assert_allclose(converted.position_kd, ARM6.default_kd)


def test_out_of_space_actions_are_clipped_and_counted():
    adapter = ActionAdapter(ARM6, "torque")
    action = np.array([2.0, -3.0, 0.5, 1.0, -1.0, 1.5])
    converted = adapter.to_njoint(action)
    assert converted.clipped == 3
    np.testing.assert_allclose(converted.action.torque[:2], [60.0, -90.0])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_actions_raise_naming_field_joint_and_shape(bad):
    adapter = ActionAdapter(ARM6, "torque_and_position")
    action = np.zeros(12)
    action[8] = bad
    with pytest.raises(ActionError) as info:
        adapter.to_njoint(action)
    message = str(info.value)
    assert "'position'" in message and "'elbow'" in message and "(12,)" in message


@given(
    index=st.integers(0, 5),
    bad=st.sampled_from([np.nan, np.inf, -np.inf]),
    dtype=st.sampled_from([np.float32, np.float64]),
    rest=arrays(np.float64, 6, elements=st.floats(-1, 1)),
)
def test_the_in_range_shortcut_refuses_nan_and_inf_wherever_they_sit(index, bad, dtype, rest):
    adapter = ActionAdapter(ARM6, "position")
    action = rest.astype(dtype)
    action[index] = bad
    with pytest.raises(ActionError, match=rf"index {index} .*field 'position', joint "):
        adapter.convert(action)
    action[index] = 0.5
    result, clipped = adapter.convert(action)  # in range: converted as it is
    assert clipped == 0
    expected = unnormalize(action, *adapter.bounds["position"])
    np.testing.assert_array_equal(result.position, expected)
    assert result == NJointAction.Position(expected)


def test_wrong_shape_raises():
    adapter = ActionAdapter(ARM6, "position")
    with pytest.raises(ActionError, match=r"shape \(5,\), expected \(6,\)"):
        adapter.to_njoint(np.zeros(5))


def test_njoint_keeps_nan_meaning_and_clips_the_rest():
    adapter = ActionAdapter(ARM6, "njoint")
    position = np.full(6, np.nan)
    position[0] = 10.0  # beyond the soft limit 2.8
    converted = adapter.to_njoint({"torque": np.zeros(6), "position": position})
    assert converted.clipped == 1
    assert converted.action.position[0] == pytest.approx(2.8)
    assert np.all(np.isnan(converted.action.position[1:]))
    assert np.all(np.isnan(converted.action.position_kp))


def test_njoint_nan_torque_and_bad_keys_raise():
    adapter = ActionAdapter(ARM6, "njoint")
    torque = np.zeros(6)
    torque[2] = np.nan
    with pytest.raises(ActionError, match=r"torque.*'elbow'"):
        adapter.to_njoint({"torque": torque})
    with pytest.raises(ActionError, match="unknown keys"):
        adapter.to_njoint({"torq": np.zeros(6)})
    with pytest.raises(ActionError, match="must be a dict"):
        adapter.to_njoint(np.zeros(6))


@pytest.mark.parametrize("mode", ACTION_MODES)
def test_hold_action_is_in_the_space_and_holds_the_pose(mode):
    adapter = ActionAdapter(ARM6, mode)
    q = ARM6.home + 0.1
    hold = adapter.hold(_state(ARM6, q))
    if mode != "njoint":
        assert adapter.space.contains(hold)
    action = adapter.to_njoint(hold).action
    if "position" in adapter.fields:
        np.testing.assert_allclose(action.position, q, atol=1e-5)
    else:
        np.testing.assert_array_equal(action.torque, np.zeros(6))


def test_unknown_mode_suggests_a_name():
    with pytest.raises(ConfigurationError, match="did you mean 'position'"):
        ActionAdapter(ARM6, "postion")


def test_normalize_needs_the_mode_fields():
    adapter = ActionAdapter(ARM6, "position_velocity")
    with pytest.raises(ActionError, match="'velocity'"):
        adapter.normalize({"position": ARM6.home})
    with pytest.raises(ActionError, match="flat action modes"):
        ActionAdapter(ARM6, "njoint").normalize(NJointAction.Zero(6))
