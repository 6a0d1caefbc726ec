"""The grasp holds: a cube closed in the SO-101's (and Koch's) jaws stays put while the arm
carries it 20 cm at its configured joint speed, on PyBullet and on MuJoCo."""

import numpy as np
import pytest

from jointlab.envs.manipulation import ManipulationEnv, expert_policy
from jointlab.interface import NJointAction

#: Largest slip of the cube in the wrist frame over the transfer, metres, per engine.
#: Measured (seed 0, so101): MuJoCo 1.8 mm, PyBullet 0.29 mm (1.26 mm before Bullet's
#: friction anchors were turned on for the objects of a scene) at the configured speed; the
#: issue's target is 1 mm (docs/manipulation.md, "Grasping": what limits it on MuJoCo).
SLIP_LIMIT = {"mujoco": 0.0025, "pybullet": 0.001}


def _grasp(env: ManipulationEnv) -> None:
    """Run the Lift expert until the cube is held 3 cm above the table."""
    observation, _ = env.reset(seed=0)
    expert = expert_policy(env)
    for _ in range(env.task.max_episode_steps):
        observation, *_ = env.step(expert(observation))
        if expert.phase == "carry" and observation["achieved_goal"][2] > env.size / 2 + 0.03:
            return
    pytest.fail(f"the expert did not lift the cube on {env.robot.engine}")


def _cube_in_wrist(env: ManipulationEnv) -> np.ndarray:
    wrist = env.ik.kinematics.matrix(env.robot.read().position)
    return (np.linalg.inv(wrist) @ np.append(env.cube_poses()[0][0], 1.0))[:3]


def _transfer(env: ManipulationEnv, goal_q: np.ndarray) -> None:
    """Move along the joint-space line with the slowest joint at its configured speed.

    A trapezoidal profile at the joints' acceleration limit; one action per control period.
    """
    d = env.description
    start = env.q_target.copy()
    delta = goal_q - start
    distance = float(np.max(np.abs(delta)))
    speed = 1.0 / float(np.max(np.abs(delta) / d.config_speed) / distance)
    accel = float(np.min(d.acceleration_limit))
    travelled = velocity = 0.0
    while travelled < distance - 1e-12:
        velocity = min(
            speed,
            velocity + accel * env.control_dt,
            float(np.sqrt(2 * accel * (distance - travelled))),
        )
        travelled = min(distance, travelled + velocity * env.control_dt)
        env.robot.apply(NJointAction.Position(start + delta * (travelled / distance)))
        env.robot.step()
    for _ in range(10):
        env.robot.step()


@pytest.mark.parametrize("engine", ["pybullet", "mujoco"])
def test_cube_stays_in_the_so101_grip_over_a_20_cm_transfer(engine):
    pytest.importorskip(engine)
    env = ManipulationEnv("lift", engine=engine)
    try:
        _grasp(env)
        before = _cube_in_wrist(env)
        start = env.ik.pose(env.robot.read().position)[0]
        radius = float(np.linalg.norm(start[:2]))
        turn = -np.sign(start[1]) * 2 * np.arcsin(0.1 / radius)  # a 20 cm chord, past x
        c, s = np.cos(turn), np.sin(turn)
        target = np.array([c * start[0] - s * start[1], s * start[0] + c * start[1], start[2]])
        closing = np.array([-target[1], target[0], 0.0]) / radius
        solution = env.ik.solve(target, closing, env.q_target, iterations=100)
        assert solution.reached()
        goal_q = solution.q
        goal_q[env.gripper.joint] = env.q_target[env.gripper.joint]
        _transfer(env, goal_q)
        moved = np.linalg.norm(env.cube_poses()[0][0] - start)
        slip = np.linalg.norm(_cube_in_wrist(env) - before)
        assert moved > 0.18, moved
        assert slip < SLIP_LIMIT[engine], f"slip {slip * 1000:.2f} mm on {engine}"
    finally:
        env.close()
