"""Scripted experts: one grasp-and-carry policy that solves each manipulation task.

The expert reads the environment's goal-conditioned observation and acts in its action space
(``"ee"`` directly; ``"joint"`` through the environment's grasp IK, as the joint-position
change that reaches the same grasp-point target). It is a small state machine on the cube and
grasp-point positions, closed-loop (each action moves the target towards the waypoint by the
remaining error plus the servos' sag under gravity, measured as it builds up):

1. ``approach``: hover ``HOVER`` above the cube with the jaws open;
2. ``descend``: to the cube's centre;
3. ``close``: squeeze until the gripper stops on the cube;
4. ``carry``: along the task's waypoints: Lift straight up to the goal; PickPlace up, over
   and down to the goal; Push carries the cube ``SKIM`` above the table to the goal (pressed
   on the table by the servos' sag correction, a held cube sticks) and lets go; Stack lifts
   it over the second cube, lowers it on top and lets go; a cube dropped on the way (more than
   ``LOST`` from the grasp point) is grasped again from 1.;
5. ``release`` (Push, Stack): open, then rise clear.

:func:`expert_policy` is the lookup by environment used by ``jointlab eval ROBOT expert``
and ``jointlab record``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .env import ManipulationEnv, _tangential
from .goals import Lift, PickPlace, Push, Stack

__all__ = ["ScriptedExpert", "expert_policy"]

#: Height above the cube's centre of the approach waypoint, metres.
HOVER = 0.05
#: Distance at which a waypoint counts as reached, metres.
REACHED = 0.006
#: Weight of the newest measurement in the servos' sag estimate (a first-order filter).
SAG_FILTER = 0.3
#: Offset of the jaws from the cube's centre, away from the open jaw, while grasping, metres
#: (0: measured best; 1.5 and 4 mm lost cubes on PyBullet, which the moving jaw slid askew).
CLEARANCE = 0.0
#: Steps over which the gripper command goes from open to squeeze.
CLOSE_STEPS = 6
#: Height of a pushed cube above the table while it is carried to the goal, metres.
SKIM = 0.003
#: Most steps the descent waits above the cube for the jaws to centre on it.
CENTRING_STEPS = 8
#: Distance between the grasp point and the cube's centre at which a carried cube counts as
#: dropped (the expert then grasps it again), metres; held, it is within about 1 cm.
LOST = 0.03
#: Largest sag correction, metres (the SO-101 sags about 1 cm at the edge of its reach).
MAX_SAG = 0.02


class ScriptedExpert:
    """The expert of one :class:`ManipulationEnv` (module docstring); call it on observations.

    Args:
        env: The environment (wrappers are looked through).
    """

    def __init__(self, env: Any) -> None:
        base = getattr(env, "unwrapped", env)
        if not isinstance(base, ManipulationEnv):
            raise TypeError(f"the scripted expert needs a ManipulationEnv, got {type(base)}")
        self.env = base
        self.reset()

    def reset(self) -> None:
        """Forget the episode (call at every ``env.reset``)."""
        self.phase = "approach"
        self.aim = np.zeros(3)
        self.sag = np.zeros(3)
        self.settling = True
        self.release_at = np.zeros(3)
        self.waypoint = 0
        self.count = 0
        self.centring = 0

    # ------------------------------------------------------------------ policy
    def __call__(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """The action for ``observation`` (float32, the env's action shape)."""
        env = self.env
        dof = env.description.dof
        obs = np.asarray(observation["observation"], dtype=np.float64)
        grasp = obs[2 * dof : 2 * dof + 3]
        grip = obs[2 * dof + 3]
        cube = obs[2 * dof + 4 : 2 * dof + 7]
        self.cube_speed = float(np.linalg.norm(obs[2 * dof + 10 : 2 * dof + 13]))
        goal = np.asarray(observation["desired_goal"], dtype=np.float64)[:3]
        target, opening = self._plan(grasp, grip, cube, goal)
        return self._action(grasp, target, opening)

    def _plan(
        self, grasp: np.ndarray, grip: float, cube: np.ndarray, goal: np.ndarray
    ) -> tuple[np.ndarray, float]:
        env, size = self.env, self.env.size
        # Aim the jaws a little away from the cube on the fixed jaw's side (the cube nearer
        # the open moving jaw): the fixed jaw then clears the cube's face as it comes down,
        # and the closing jaw slides the cube against it.
        towards_moving_jaw = _tangential(cube, env.workspace.origin) * env.gripper.side[2]
        aim = cube - CLEARANCE * towards_moving_jaw
        above = aim + np.array([0.0, 0.0, HOVER])
        if self.phase == "approach":
            if np.linalg.norm(grasp - above) < 2 * REACHED:
                self.phase, self.count, self.best = "descend", 0, np.inf
                self.centring = 0
            return above, 1.0
        if self.phase == "descend":
            error = float(np.linalg.norm(grasp - aim))
            self.count = 0 if error < self.best - 0.001 else self.count + 1
            self.best = min(self.best, error)
            low = grasp[2] < cube[2] + 0.003
            if (
                error < REACHED / 2
                or (low and np.linalg.norm(grasp[:2] - aim[:2]) < REACHED)
                or (low and self.count > 5 and error < 2 * REACHED)
            ):
                self.phase, self.count = "close", 0  # there, or as near as the arm gets
                self.aim = aim
            self.centring += 1
            if (
                self.phase == "descend"
                and self.centring <= CENTRING_STEPS
                and grasp[2] > cube[2] + size
                and np.linalg.norm(grasp[:2] - aim[:2]) > REACHED
            ):
                # Jaws still above the cube but off its centre: centre them before going
                # down (a jaw coming down on the cube's edge knocks it askew).
                return np.array([aim[0], aim[1], grasp[2]]), 1.0
            return aim, 1.0
        if self.phase == "close":
            self.count += 1
            if self.count == 1:
                self._holding = env.gripper.holding(env.description, size)
            settled = self.count >= CLOSE_STEPS + 2 and abs(grip - self._holding) < 0.08
            if settled or self.count > CLOSE_STEPS + 12:
                self.phase, self.waypoint = "carry", 0
            # Close over CLOSE_STEPS steps: a jaw slammed shut knocks the cube askew.
            return self.aim, max(-1.0, 1.0 - 2.0 * self.count / CLOSE_STEPS)
        if self.phase == "carry" and np.linalg.norm(cube - grasp) > LOST:
            self.phase = "approach"  # dropped: grasp it again
        if self.phase == "carry":
            points = self._carry_points(cube, goal)
            last = len(points) - 1
            if self.waypoint < last and np.linalg.norm(cube - points[self.waypoint]) < 2 * REACHED:
                self.waypoint += 1
            point = points[min(self.waypoint, last)]
            still = self.settling and self.cube_speed < 0.02
            if (
                self.waypoint == last
                and self._lets_go()
                and still
                and np.linalg.norm(cube - point) < REACHED / 2
            ):
                self.phase, self.count, self.release_at = "release", 0, grasp.copy()
            return grasp + (point - cube), -1.0
        # release: open, then rise straight up
        self.count += 1
        if self.count <= 6:
            return self.release_at, 1.0
        return self.release_at + np.array([0.0, 0.0, 0.03 * min(1.0, (self.count - 6) / 3)]), 1.0

    def _lets_go(self) -> bool:
        return isinstance(self.env.task, (Push, Stack))

    def _carry_points(self, cube: np.ndarray, goal: np.ndarray) -> list[np.ndarray]:
        task, size = self.env.task, self.env.size
        if isinstance(task, Lift):
            return [goal]
        if isinstance(task, Push):  # skimming the table: pressed on it, the cube sticks
            return [np.array([goal[0], goal[1], size / 2 + SKIM])]
        if isinstance(task, Stack):
            top = goal + np.array([0.0, 0.0, 0.004])  # let go a few mm above the second cube
            high = np.array([top[0], top[1], top[2] + 0.03])
            return [np.array([cube[0], cube[1], high[2]]), high, top]
        assert isinstance(task, PickPlace)
        height = max(goal[2], size / 2 + 0.04)
        return [np.array([cube[0], cube[1], height]), np.array([goal[0], goal[1], height]), goal]

    def _action(self, grasp: np.ndarray, target: np.ndarray, opening: float) -> np.ndarray:
        env = self.env
        commanded = env.ik.pose(env.q_target)[0]  # where the servos are asked to put it
        # The servos' sag under load: the commanded point minus the reached one, filtered.
        if self.settling:  # the servos' lag while the target moves is not sag
            self.sag += SAG_FILTER * ((commanded - grasp) - self.sag)
        size = float(np.linalg.norm(self.sag))
        if size > MAX_SAG:  # a target the arm cannot follow: do not wind up
            self.sag *= MAX_SAG / size
        delta = np.clip((target + self.sag - commanded) / env.ee_step, -1.0, 1.0)
        self.settling = bool(np.max(np.abs(delta)) < 0.5)
        if env.action_mode == "ee":
            return np.append(delta, opening).astype(np.float32)
        # "joint": the joint change that moves the IK target the same way.
        aim = commanded + delta * env.ee_step
        closing = _tangential(aim, env.workspace.origin)
        q = env.ik.solve(aim, closing, env.q_target, iterations=8).q
        q[env.gripper.joint] = env.grip_command(opening)
        action = (q - env.q_target) / env.joint_step
        return np.clip(action, -1.0, 1.0).astype(np.float32)


def expert_policy(env: Any) -> ScriptedExpert:
    """The scripted expert of ``env`` (a :class:`ManipulationEnv`, wrapped or not).

    Raises:
        TypeError: ``env`` is not a manipulation environment.
    """
    return ScriptedExpert(env)
