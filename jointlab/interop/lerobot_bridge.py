"""What LeRobot's Robot and Teleoperator API see of a JointLab robot (no LeRobot import here).

The LeRobot plugins of this repository (``lerobot_robot_jointlab``,
``lerobot_teleoperator_jointlab``) are thin LeRobot classes around these two bridges:

* :class:`RobotBridge`: a follower on any JointLab URL (``sim://so101``, ``emulated://so101``,
  ``feetech:///dev/ttyACM0?robot=so101``). Observations and actions are dictionaries keyed
  ``<joint>.pos`` in **degrees** (a gripper 0-100), as LeRobot's SO-101 and Koch followers
  report them with ``use_degrees=True`` (:class:`~jointlab.interop.units.LeRobotUnits`),
  plus one RGB image per simulated camera. ``send_action`` applies the
  targets (clipped by ``max_relative_target`` degrees from the present position, as LeRobot
  does) and advances the robot by one action period (simulated time; on a device the bus
  paces it).
* :class:`LeaderBridge`: a leader arm (torque off) on any JointLab URL; ``action()`` reads
  it once (one bus cycle) in the same keys and units.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.interop.units import LeRobotUnits

__all__ = ["DEFAULT_PERIOD", "LeaderBridge", "RobotBridge", "description_of", "joint_keys"]

#: Simulated seconds per ``send_action`` when the URL is simulated: LeRobot's default 30 fps.
DEFAULT_PERIOD = 1.0 / 30.0


def description_of(url: str) -> Any:
    """The description a robot URL names (its target, or its ``robot=`` query value).

    Raises:
        ConfigurationError: a malformed URL.
        DescriptionError: an unknown robot.
    """
    from jointlab.connection import parse_url
    from jointlab.robots import load_robot

    parsed = parse_url(url)
    named = parsed.query.get("robot")
    return load_robot(named if named else parsed.target)


def joint_keys(names: Sequence[str]) -> list[str]:
    """LeRobot's feature keys of joints ``names``: ``<joint>.pos``."""
    return [f"{name}.pos" for name in names]


class RobotBridge:
    """A JointLab follower behind LeRobot's Robot API (see the module docstring).

    Args:
        url: The robot URL.
        period: Robot time per ``send_action``, s (default: 1/30 s in simulation, rounded
            to whole control periods; one control period on a device).
        max_relative_target: Largest step per action from the present position, degrees.
        cameras: Simulated camera names (rendered images in every observation).
        camera_size: (width, height) of those images, pixels.
        task: A task of ``lerobot-eval``'s JointLab environment (``Reach``) judging this
            episode (:class:`~jointlab.interop.task_judge.TaskJudge`): its scene is drawn in
            the cameras and its success decided on the state at :meth:`disconnect`.
        task_seed: The episode's seed (the scene of ``lerobot-eval``'s episode of that seed).
        task_log: A file the verdict is appended to, one JSON line per episode.
    """

    def __init__(
        self,
        url: str,
        period: float | None = None,
        max_relative_target: float | None = None,
        cameras: Sequence[str] = (),
        camera_size: tuple[int, int] = (128, 96),
        task: str | None = None,
        task_seed: int = 0,
        task_log: str | None = None,
    ) -> None:
        if max_relative_target is not None and not max_relative_target > 0:
            raise ConfigurationError(
                f"max_relative_target must be > 0 degrees, got {max_relative_target!r}"
            )
        self.url, self.period, self.max_relative_target = url, period, max_relative_target
        self.camera_names = list(cameras)
        self.camera_size = (int(camera_size[0]), int(camera_size[1]))
        self.robot: Any = None
        self._cameras: list[Any] = []
        self._steps = 1
        #: The robot's description (known before connecting, for LeRobot's features).
        self.description = description_of(url)
        self.units = LeRobotUnits.of(self.description)
        self.task_name, self.task_seed, self.task_log = task, int(task_seed), task_log
        self.judge: Any = None
        if task is not None:  # an unknown task fails here, before anything connects
            from jointlab.interop.task_judge import TaskJudge

            TaskJudge.check(task)
        #: The last episode's verdict (with ``task``), else None.
        self.verdict: dict[str, Any] | None = None

    @property
    def observation_features(self) -> dict[str, Any]:
        """``<joint>.pos``: float, and ``<camera>``: (height, width, 3)."""
        features: dict[str, Any] = dict.fromkeys(joint_keys(self.description.joint_names), float)
        width, height = self.camera_size
        for name in self.camera_names:
            features[name] = (height, width, 3)
        return features

    @property
    def action_features(self) -> dict[str, type]:
        """``<joint>.pos``: float."""
        return dict.fromkeys(joint_keys(self.description.joint_names), float)

    @property
    def is_connected(self) -> bool:
        """True between :meth:`connect` and :meth:`disconnect`."""
        return self.robot is not None

    def connect(self) -> None:
        """Connect and arm (holding the present pose; a servo arm needs its calibration).

        Raises:
            CommandRefused: an uncalibrated servo arm (the message has the command to run).
        """
        import jointlab
        from jointlab.interop.cameras import SimCamera

        robot = jointlab.connect(self.url)
        try:
            period = self.period
            if period is None:
                period = robot.control_dt if getattr(robot, "realtime", False) else DEFAULT_PERIOD
            self._steps = max(1, round(period / robot.control_dt))
            if not robot.read().armed:
                robot.arm()
            width, height = self.camera_size
            self._cameras = [SimCamera(name, robot, width, height) for name in self.camera_names]
            if self.task_name is not None:
                from jointlab.interop.task_judge import TaskJudge

                self.judge = TaskJudge(self.task_name, self.description, self.task_seed)
                for camera in self._cameras:
                    camera.show(self.judge.markers())
        except BaseException:
            robot.close()
            raise
        self.robot = robot

    def observation(self) -> dict[str, Any]:
        """Joint positions (degrees, a gripper 0-100) and camera images of the present state."""
        state = self.robot.read()
        keys = self.units.keys
        observation: dict[str, Any] = dict(
            zip(keys, self.units.to_lerobot(state.position).tolist(), strict=True)
        )
        for camera in self._cameras:
            observation[camera.name] = camera.grab(state)
        return observation

    def send_action(self, action: dict[str, Any]) -> dict[str, float]:
        """Apply ``<joint>.pos`` targets (LeRobot units; missing joints hold), step; what was sent.

        ``max_relative_target`` caps each joint's step in its own unit (degrees, or 0-100).

        Raises:
            ConfigurationError: an unknown key.
        """
        from jointlab.interface import NJointAction

        keys = list(self.units.keys)
        unknown = sorted(set(action) - set(keys))
        if unknown:
            raise ConfigurationError(
                f"action keys {unknown} are not joints of "
                f"{self.description.name!r}; expected {keys}"
            )
        units = self.units
        present = units.to_lerobot(self.robot.read().position)
        target = np.array([float(action.get(k, p)) for k, p in zip(keys, present, strict=True)])
        if self.max_relative_target is not None:
            cap = self.max_relative_target
            target = np.clip(target, present - cap, present + cap)
        lower, upper = (
            units.to_lerobot(self.description.lower),
            units.to_lerobot(self.description.upper),
        )
        target = np.clip(target, lower, upper)
        from jointlab.faults import FaultRule

        with FaultRule(self.robot):  # the one rule: hold, disarm, stop with the error
            self.robot.apply(NJointAction.Position(units.from_lerobot(target)))
            for _ in range(self._steps):
                self.robot.step()
        return dict(zip(keys, target.tolist(), strict=True))

    def disconnect(self) -> None:
        """Hold one period, disarm, close; safe twice."""
        from jointlab.errors import JointLabError
        from jointlab.interface import NJointAction

        robot, self.robot = self.robot, None
        if robot is None:
            return
        judge, self.judge = self.judge, None
        try:
            if judge is not None:
                judge.judge(robot.read())
                self.verdict = judge.report(self.task_log, self.url)
                judge.close()
            robot.apply(NJointAction.Position(robot.read().position))
            robot.step()
            robot.disarm()
        except JointLabError:
            pass
        finally:
            for camera in self._cameras:
                camera.close()
            self._cameras = []
            robot.close()


class LeaderBridge:
    """A JointLab leader arm behind LeRobot's Teleoperator API.

    Args:
        url: The leader's URL (``emulated://so101``, ``feetech:///dev/ttyACM1?robot=so101``).
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.leader: Any = None
        self.units = LeRobotUnits.of(description_of(url))
        self._names = list(self.units.keys)

    @property
    def is_connected(self) -> bool:
        """True between :meth:`connect` and :meth:`disconnect`."""
        return self.leader is not None

    def connect(self) -> None:
        """Connect (torque off)."""
        import jointlab
        from jointlab.teleop import LeaderArm

        self.leader = LeaderArm(jointlab.connect(self.url))

    @property
    def action_features(self) -> dict[str, type]:
        """``<joint>.pos``: float."""
        return dict.fromkeys(self._names, float)

    def action(self) -> dict[str, float]:
        """One reading: ``<joint>.pos`` in degrees (a gripper 0-100)."""
        reading = self.units.to_lerobot(self.leader.read())
        return dict(zip(self._names, reading.tolist(), strict=True))

    def disconnect(self) -> None:
        """Close the leader; safe twice."""
        leader, self.leader = self.leader, None
        if leader is not None:
            leader.close()
