"""What an rgb_array render shows: the robot large in the frame, and the task's goals."""

from __future__ import annotations

import numpy as np
import pybullet
import pytest

from jointlab.envs import JointLabEnv
from jointlab.envs.rendering import default_camera
from jointlab.robots import forward_kinematics, load_robot


def green_pixels(image: np.ndarray) -> np.ndarray:
    rgb = image.astype(int)
    return (rgb[..., 1] > rgb[..., 0] + 60) & (rgb[..., 1] > rgb[..., 2] + 60)


def project(camera, points: np.ndarray, width: int, height: int) -> np.ndarray:
    """Pixel coordinates (x right, y down) of world points seen by ``camera``."""
    view = (
        np.array(
            pybullet.computeViewMatrixFromYawPitchRoll(
                camera.target, camera.distance, camera.yaw, camera.pitch, 0.0, 2
            )
        )
        .reshape(4, 4)
        .T
    )
    projection = (
        np.array(
            pybullet.computeProjectionMatrixFOV(camera.fov, width / height, camera.near, camera.far)
        )
        .reshape(4, 4)
        .T
    )
    clip = projection @ view @ np.c_[points, np.ones(len(points))].T
    ndc = clip[:2] / clip[3]
    return np.c_[(ndc[0] + 1) * width / 2, (1 - ndc[1]) * height / 2]


@pytest.mark.parametrize("robot", ["arm6", "planar2", "trifinger", "gantry3"])
def test_default_camera_frames_the_robot_large(robot: str) -> None:
    description = load_robot(robot)
    camera = default_camera(description)
    ends = forward_kinematics(description, description.home).ends[..., :3, 3].reshape(-1, 3)
    pixels = project(camera, np.vstack([ends, description.base.position]), 320, 240)
    assert (pixels >= 0).all() and (pixels[:, 0] <= 320).all() and (pixels[:, 1] <= 240).all()
    span = np.ptp(pixels, axis=0) / (320, 240)
    assert span.max() > 0.22, span  # the earlier camera: 0.15 (arm6) down to 0.06 (gantry3)


def test_every_reach_goal_is_in_the_frame() -> None:
    env = JointLabEnv("reach")
    rng = np.random.default_rng(1)
    goals = np.array([env.task.sample_goal(rng) for _ in range(100)])
    pixels = project(default_camera(env.description), goals, 320, 240)
    assert ((pixels > 0) & (pixels < (320, 240))).all()
    env.close()


def test_reach_goal_is_drawn_where_it_is() -> None:
    env = JointLabEnv("reach", render_mode="rgb_array", render_size=(320, 240))
    goal = np.array([0.35, 0.2, 0.45])
    env.reset(seed=0, options={"goal": goal})
    green = green_pixels(env.render())
    assert green.sum() > 30
    ((x, y),) = project(env.camera, goal[None], 320, 240)
    rows, cols = np.nonzero(green)
    assert abs(cols.mean() - x) < 8 and abs(rows.mean() - y) < 8
    env.close()


def test_push_goal_disc_and_tracking_target_follow_the_task() -> None:
    push = JointLabEnv("push", render_mode="rgb_array")
    push.reset(seed=1)
    assert green_pixels(push.render()).sum() > 20
    push.close()
    tracking = JointLabEnv("joint_tracking", render_mode="rgb_array")
    tracking.reset(seed=0)
    first = tracking.task.markers()[0].position
    for _ in range(20):
        tracking.step(tracking.action_space.sample())
    tracking.render()
    body = tracking.robot.world.markers.body_id(tracking.task.markers()[0].name)
    moved = tracking.robot.world.body_pose(body)[0]
    assert np.linalg.norm(moved - first) > 1e-3
    tracking.close()


def test_rendering_does_not_change_the_episode() -> None:
    runs = []
    for render in (False, True):
        env = JointLabEnv(
            "reach", render_mode="rgb_array" if render else None, render_size=(64, 48)
        )
        observation, _ = env.reset(seed=3)
        rng = np.random.default_rng(0)
        trace = [observation]
        for _ in range(30):
            observation, *_ = env.step(rng.uniform(-1, 1, env.action_space.shape))
            if render:
                env.render()
            trace.append(observation)
        runs.append(np.array(trace))
        env.close()
    assert np.array_equal(runs[0], runs[1])
