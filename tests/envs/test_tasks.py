"""Rewards, success and reset distributions of the tasks, on hand-built states."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from jointlab.envs import JointLabEnv
from jointlab.envs.tasks import workspace_radius
from jointlab.errors import ConfigurationError
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots import forward_kinematics


def state_at(q, qd=None, torque=None):
    q = np.asarray(q, dtype=float)
    z = np.zeros_like(q)
    return ArrayState(
        0.0,
        q,
        z if qd is None else np.asarray(qd, float),
        z,
        z if torque is None else np.asarray(torque, float),
        z,
        np.ones(q.shape[0], np.uint8),
        True,
        True,
    )


@pytest.fixture
def reach():
    env = JointLabEnv("reach", success_threshold=0.05, success_bonus=0.5, effort_weight=0.2)
    env.reset(seed=0)
    yield env
    env.close()


def _tool(env, q):
    return forward_kinematics(env.description, q).tools[env.task.tool_name][:3, 3]


def test_reach_tool_exactly_at_target_is_success_with_full_reward(reach):
    q = reach.description.home + np.array([0.3, -0.2, 0.4, 0.1, -0.3, 0.2])
    reach.task.goal = _tool(reach, q)
    outcome = reach.task.evaluate(state_at(q), NJointAction.Zero(6))
    assert outcome.info["is_success"] is True
    assert outcome.info["distance"] == pytest.approx(0.0, abs=1e-12)
    assert outcome.terms == pytest.approx({"distance": 0.0, "success": 0.5, "effort": 0.0})
    assert outcome.reward == pytest.approx(0.5)
    assert not outcome.terminated


@pytest.mark.parametrize(("offset", "success"), [(0.049, True), (0.051, False)])
def test_reach_success_threshold(reach, offset, success):
    q = reach.description.home
    reach.task.goal = _tool(reach, q) + np.array([0.0, offset, 0.0])
    outcome = reach.task.evaluate(state_at(q), NJointAction.Zero(6))
    assert outcome.info["is_success"] is success
    assert outcome.terms["distance"] == pytest.approx(-offset)
    assert outcome.reward == pytest.approx(-offset + (0.5 if success else 0.0))


def test_reach_effort_term_is_normalised_by_the_effort_limit(reach):
    q = reach.description.home
    reach.task.goal = _tool(reach, q)
    torque = np.array(reach.description.effort_limit)
    outcome = reach.task.evaluate(state_at(q, torque=torque), NJointAction.Zero(6))
    assert outcome.terms["effort"] == pytest.approx(-0.2)


def test_reach_sparse_reward_and_goal_relabelling():
    env = JointLabEnv("reach", reward_type="sparse")
    env.reset(seed=0)
    task = env.task
    q = env.description.home
    tool = _tool(env, q)
    task.goal = tool
    assert task.evaluate(state_at(q), NJointAction.Zero(6)).reward == 0.0
    task.goal = tool + 0.2
    assert task.evaluate(state_at(q), NJointAction.Zero(6)).terms == {"sparse": -1.0}
    achieved = np.stack([tool, tool, tool + 0.2])
    desired = np.stack([tool, tool + 0.01, tool])
    np.testing.assert_array_equal(task.compute_reward(achieved, desired, None), [0, 0, -1])
    env.close()


def test_reach_compute_reward_matches_evaluate(reach):
    q = reach.description.home
    tool = _tool(reach, q)
    for goal in (tool, tool + 0.03, tool - 0.3):
        reach.task.goal = goal
        expected = reach.task.evaluate(state_at(q), NJointAction.Zero(6)).reward
        assert reach.task.compute_reward(tool, goal) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("engine", "options"),
    [
        ("pybullet", {}),
        ("mujoco", {"effort_weight": 0.2, "success_threshold": 0.3}),
        (
            "mujoco",
            {"reward_type": "sparse", "success_threshold": 0.3, "terminate_on_success": True},
        ),
    ],
)
def test_reach_step_info_and_reward_are_those_of_evaluate(engine, options):
    env = JointLabEnv("reach", engine=engine, **options)
    try:
        env.reset(seed=3)
        rng = np.random.default_rng(3)
        for _ in range(12):
            action = rng.uniform(-1.2, 1.2, 6).astype(np.float32)
            _, reward, terminated, _, info = env.step(action)
            njoint, clipped = env.actions.convert(action)
            outcome = env.task.evaluate(env.state, njoint)  # the general path
            expected = {
                "state": env.state,
                **outcome.info,
                **{f"reward_{name}": v for name, v in outcome.terms.items()},
                "action_clipped": clipped,
            }
            assert list(info)[:-1] == list(expected)  # the same keys in the same order
            assert all(info[key] == value for key, value in expected.items() if key != "state")
            assert info["state"] is env.state
            assert (reward, terminated) == (outcome.reward, outcome.terminated)
            assert type(reward) is float and type(terminated) is bool
    finally:
        env.close()


def test_reach_targets_are_reachable_and_above_the_ground():
    env = JointLabEnv("reach", min_height=0.1)
    d = env.description
    radius = workspace_radius(d)
    for seed in range(30):
        env.reset(seed=seed)
        goal = env.task.goal
        assert goal[2] >= 0.1
        assert np.linalg.norm(goal - np.asarray(d.base.position)) <= radius
    env.close()


def test_reach_bad_parameters_are_named():
    with pytest.raises(ConfigurationError, match="did you mean 'sparse'"):
        JointLabEnv("reach", reward_type="spares")
    with pytest.raises(ConfigurationError, match="success_threshold"):
        JointLabEnv("reach", success_threshold=0.0)


def test_tracking_on_the_reference_is_perfect():
    env = JointLabEnv("joint_tracking", position_weight=2.0, velocity_weight=0.5)
    env.reset(seed=1)
    task = env.task
    task.steps = 10
    q, qd = task.targets(10 * env.control_dt)
    outcome = task.evaluate(state_at(q, qd), NJointAction.Zero(2))
    assert outcome.reward == pytest.approx(0.0, abs=1e-12)
    assert outcome.info["is_success"] is True
    off = state_at(q + np.array([0.1, 0.0]), qd + np.array([0.0, 0.4]))
    outcome = task.evaluate(off, NJointAction.Zero(2))
    assert outcome.terms["position"] == pytest.approx(-2.0 * 0.05)
    assert outcome.terms["velocity"] == pytest.approx(-0.5 * 0.2)
    assert outcome.info["tracking_error"] == pytest.approx(0.05)
    env.close()


def test_tracking_reference_is_smooth_and_inside_the_soft_limits():
    env = JointLabEnv("joint_tracking", robot="arm6", amplitude=1.0)
    d = env.description
    t = np.arange(0, 20, 0.02)
    for seed in range(10):
        env.reset(seed=seed)
        q = np.array([env.task.targets(x)[0] for x in t])
        assert np.all(q >= d.soft_lower - 1e-9) and np.all(q <= d.soft_upper + 1e-9)
        assert np.max(np.abs(np.diff(q, axis=0))) < 0.1  # rad per 20 ms: smooth
    env.close()


def test_tracking_observes_the_reference_one_step_ahead():
    env = JointLabEnv("joint_tracking")
    observation, _ = env.reset(seed=2)
    parts = env.observation_layout.split(observation)
    np.testing.assert_allclose(parts["reference"], env.task.targets(env.control_dt)[0], rtol=1e-6)
    env.close()


def test_hold_at_target_is_success_and_pushes_disturb():
    quiet = JointLabEnv("hold", push_probability=0.0)
    quiet.reset(seed=0)
    target = quiet.task.target
    outcome = quiet.task.evaluate(state_at(target), NJointAction.Zero(6))
    assert outcome.reward == pytest.approx(0.0) and outcome.info["is_success"] is True
    assert outcome.info["push_force"] == 0.0

    errors = {}
    for probability in (0.0, 1.0):
        env = JointLabEnv(
            "hold", robot="planar2", push_probability=probability, push_strength=(1.0, 1.0)
        )
        env.reset(seed=0)
        hold = env.actions.hold(env.state)
        worst = 0.0
        for _ in range(25):
            _, _, _, _, info = env.step(hold)
            worst = max(worst, info["hold_error"])
        errors[probability] = worst
        env.close()
    quiet.close()
    # planar2's default gains hold the pose stiffly (about 1 mm under a full push)
    assert errors[0.0] < 1e-6 < 1e-4 < errors[1.0]


def test_push_box_at_goal_is_success():
    env = JointLabEnv("push")
    env.reset(seed=0)
    goal = env.task.goal
    observation, _ = env.reset(seed=0, options={"box": goal, "goal": goal})
    parts = env.observation_layout.split(observation)
    np.testing.assert_allclose(parts["box"], goal, atol=1e-6)
    outcome = env.task.evaluate(env.state, NJointAction.Zero(2))
    assert outcome.info["is_success"] is True
    assert outcome.terms["goal"] == pytest.approx(0.0, abs=1e-6)
    assert outcome.terms["success"] == pytest.approx(env.task.success_bonus)
    assert env.task.reward_terms(0.1, 0.2, 0.0) == pytest.approx(
        {"goal": -0.1, "reach": -0.2 * 0.2, "success": 0.0, "effort": 0.0}
    )
    env.close()


@pytest.mark.parametrize("robot", ["planar2", "arm6"])
def test_push_episodes_start_clear_of_the_arm_with_a_reachable_goal(robot):
    env = JointLabEnv("push", robot=robot)
    task = env.task
    for seed in range(5):
        observation, _ = env.reset(seed=seed)
        parts = env.observation_layout.split(observation)
        start, goal = parts["box"], task.goal
        assert task.goal_distance[0] - 1e-6 <= np.linalg.norm(goal[:2] - start[:2])
        assert np.linalg.norm(goal[:2] - start[:2]) <= task.goal_distance[1] + 1e-6
        radius = np.linalg.norm(goal[:2] - np.asarray(env.description.base.position)[:2])
        assert task.ring[0] - 1e-9 <= radius <= task.ring[1] + 1e-9
        assert start[2] == pytest.approx(task.half_height, abs=2e-3)  # resting on the ground
    env.close()


def test_push_links_move_the_box():
    env = JointLabEnv("push", action_mode="position")
    env.reset(seed=1)
    box = env.task.box_start
    # Sweep the arm through the box's bearing: the shoulder turns towards it.
    bearing = np.arctan2(box[1], box[0])
    assert -1.5 < bearing < 1.5  # the sweep below stays inside the shoulder's range
    start = env.description.home.copy()
    start[0] = bearing - 1.0
    env.reset(seed=1, options={"q": start})
    target = np.array([bearing + 1.0, 0.0])
    action = env.actions.normalize({"position": target})
    for _ in range(40):
        _, _, _, _, _info = env.step(action)
    assert np.linalg.norm(env.task.box_position - box) > 0.02
    env.close()


@given(
    values=arrays(
        np.float64,
        21,
        elements=st.one_of(st.floats(-1e30, 1e30), st.sampled_from([np.nan, np.inf, -np.inf])),
    )
)
def test_observation_build_clips_as_float64_then_casts(values):
    """Cast-then-clip against the float32 bounds equals clip-in-float64-then-cast."""
    from jointlab.envs.tasks.observations import ObservationLayout, ObservationPart

    rng = np.random.default_rng(0)
    low = rng.uniform(-3, 0, 21)
    layout = ObservationLayout(
        [ObservationPart("a", low[:9], low[:9] + 2.5), ObservationPart("b", low[9:], low[9:] + 0.1)]
    )
    low64 = layout.space.low.astype(np.float64)
    high64 = layout.space.high.astype(np.float64)
    expected = np.minimum(np.maximum(values, low64), high64).astype(np.float32)
    built = layout.build([values[:9], values[9:]])
    assert built.dtype == np.float32
    np.testing.assert_array_equal(built, expected)


@pytest.mark.parametrize("engine", ["pybullet", "mujoco"])
def test_push_box_randomization_is_seeded_and_reaches_the_world(engine):
    from jointlab.sim import ObjectRandomization

    randomization = ObjectRandomization(mass=(0.1, 0.6), friction=(0.3, 1.5))
    draws = []
    for _ in range(2):
        env = JointLabEnv("push", engine=engine, box_randomization=randomization)
        env.reset(seed=3)
        first = env.task.box_dynamics
        env.reset()
        draws.append((first, env.task.box_dynamics))
        world, box = env.task.world, env.task.box
        if engine == "pybullet":
            import pybullet

            info = pybullet.getDynamicsInfo(box, -1, physicsClientId=world.client_id)
            applied = (info[0], info[1])  # mass, lateral friction
        else:
            body = world._body(box)
            applied = (
                world.model.body_mass[body.id],
                world.model.geom_friction[body.geomadr[0], 0],
            )
        assert applied == pytest.approx(
            (env.task.box_dynamics.mass, env.task.box_dynamics.friction)
        )
        env.close()
    assert draws[0] == draws[1]  # the same seed, the same boxes
    assert draws[0][0] != draws[0][1]  # a new box every episode
    assert 0.1 <= draws[0][0].mass <= 0.6 and 0.3 <= draws[0][0].friction <= 1.5


def test_push_without_randomization_keeps_the_episodes_of_before():
    from jointlab.sim import ObjectRandomization

    nominal = JointLabEnv("push")
    randomised = JointLabEnv("push", box_randomization=ObjectRandomization((0.2, 0.2), (1, 1)))
    try:
        nominal.reset(seed=5)
        randomised.reset(seed=5)  # the draw comes after the start and goal
        np.testing.assert_array_equal(nominal.task.goal, randomised.task.goal)
        np.testing.assert_array_equal(nominal.task.box_start, randomised.task.box_start)
        with pytest.raises(ConfigurationError, match="box_randomization"):
            JointLabEnv("push", box_randomization=(0.1, 0.2))
    finally:
        nominal.close()
        randomised.close()
