"""Manipulation one can learn: grasp, lift, push, place and stack cubes with a gripper arm.

A table scene with cubes (:mod:`.scene`), a robot's gripper found in its description
(:mod:`.gripper`), the grasp IK (:mod:`.ik`), the goal-conditioned tasks (:mod:`.goals`), the
environment (:mod:`.env`), scripted experts (:mod:`.experts`) and the Gymnasium ids
(:mod:`.registration`: ``jointlab/Lift-v0``, ``jointlab/Push-v1``, ``jointlab/PickPlace-v0``,
``jointlab/Stack-v0``).
"""

from .env import ACTION_SPACES, ManipulationEnv, measure_workspace
from .experts import ScriptedExpert, expert_policy
from .goals import GOAL_TASKS, GoalTask, Lift, PickPlace, Push, Stack, Workspace
from .gripper import Gripper, find_gripper
from .ik import GraspIK, IKSolution
from .registration import MANIPULATION_IDS, make_manipulation_env, register_manipulation_envs
from .scene import CubeSpec, TableScene, load_scene

__all__ = [
    "ACTION_SPACES",
    "GOAL_TASKS",
    "MANIPULATION_IDS",
    "CubeSpec",
    "GoalTask",
    "GraspIK",
    "Gripper",
    "IKSolution",
    "Lift",
    "ManipulationEnv",
    "PickPlace",
    "Push",
    "ScriptedExpert",
    "Stack",
    "TableScene",
    "Workspace",
    "expert_policy",
    "find_gripper",
    "load_scene",
    "make_manipulation_env",
    "measure_workspace",
    "register_manipulation_envs",
]
