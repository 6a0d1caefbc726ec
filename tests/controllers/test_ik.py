import numpy as np
import pytest

from jointlab.controllers import solve_ik
from jointlab.errors import DescriptionError
from jointlab.robots import forward_kinematics, load_robot

ARM = load_robot("arm6")


@pytest.mark.parametrize("seed", range(5))
def test_reachable_positions_are_solved(seed):
    q_goal = np.random.default_rng(seed).uniform(0.6 * ARM.soft_lower, 0.6 * ARM.soft_upper)
    target = forward_kinematics(ARM, q_goal).tools["wrist_yaw_tool"][:3, 3]
    result = solve_ik(ARM, target)
    assert result.converged
    reached = forward_kinematics(ARM, result.q).tools["wrist_yaw_tool"][:3, 3]
    np.testing.assert_allclose(reached, target, atol=1e-5)
    assert np.all(result.q >= ARM.soft_lower) and np.all(result.q <= ARM.soft_upper)


def test_position_and_orientation():
    q_goal = ARM.home + 0.2
    frame = forward_kinematics(ARM, q_goal).tools["wrist_yaw_tool"]
    result = solve_ik(ARM, frame[:3, 3], orientation=frame[:3, :3], q0=ARM.home)
    assert result.converged and result.orientation_error < 1e-5


def test_unreachable_target_does_not_converge():
    result = solve_ik(ARM, [5.0, 0.0, 0.0], max_iterations=50)
    assert not result.converged and result.position_error > 3.0


def test_multi_chain_robots_need_a_tool_name():
    with pytest.raises(DescriptionError, match="tool="):
        solve_ik(load_robot("trifinger"), [0.0, 0.0, 0.2])


def test_cartesian_target_controller_moves_the_tool(planar):
    from jointlab.controllers import CartesianTarget, run

    description = planar.description
    goal = forward_kinematics(description, [0.6, -0.8]).tools["elbow_tool"][:3, 3]
    controller = CartesianTarget(description, goal)
    summary = run(planar, controller, duration=1.5)
    reached = forward_kinematics(description, planar.read().position).tools["elbow_tool"]
    np.testing.assert_allclose(reached[:3, 3], goal, atol=2e-3)
    assert controller.solution.converged and summary.ticks == 1500
