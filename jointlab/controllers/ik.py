"""Cartesian targets: numerical damped-least-squares IK on the description's kinematics.

:func:`solve_ik` iterates ``Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e`` with the numerical Jacobian of
:func:`jointlab.robots.kinematics.position_jacobian` (plus, when an orientation is asked for,
a numerical rotation Jacobian from batched forward kinematics), limits each step, keeps the
joints inside their soft limits and leaves dependent (coupled) joints to their leaders.

:class:`CartesianTarget` is a controller that solves the IK at ``reset`` (and whenever the
target changes) and moves there with a jerk-limited ruckig profile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from jointlab.controllers.motion import MotionLimits, plan_move
from jointlab.controllers.polynomial import PiecewisePolynomial
from jointlab.errors import CommandRefused, DescriptionError
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.description import RobotDescription
from jointlab.robots.kinematics import forward_kinematics, position_jacobian
from jointlab.robots.transforms import rpy_matrix

__all__ = ["CartesianTarget", "IKResult", "solve_ik"]


@dataclass(frozen=True, eq=False)
class IKResult:
    """Outcome of :func:`solve_ik`."""

    #: Joint positions, rad or m, shape ``(dof,)``.
    q: np.ndarray
    #: True when the position (and orientation) error is below the tolerance.
    converged: bool
    #: Iterations used.
    iterations: int
    #: Remaining position error, metres.
    position_error: float
    #: Remaining orientation error, radians (0 without an orientation target).
    orientation_error: float


def _default_tool(description: RobotDescription, tool: str | None) -> str:
    if tool is not None:
        return tool
    if len(description.tool_names) != 1:
        raise DescriptionError(
            f"robot {description.name!r} has tools {list(description.tool_names)}; pass tool=<name>"
        )
    return description.tool_names[0]


def _orientation_error(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    return Rotation.from_matrix(target @ current.T).as_rotvec()


def solve_ik(
    description: RobotDescription,
    position: Any,
    *,
    orientation: Any = None,
    tool: str | None = None,
    q0: Any = None,
    max_iterations: int = 200,
    tolerance: float = 1e-5,
    damping: float = 1e-2,
    max_step: float = 0.2,
) -> IKResult:
    """Joint positions that put ``tool`` at ``position`` (and ``orientation``).

    Args:
        description: The robot.
        position: Target tool position in the world frame, metres, shape ``(3,)``.
        orientation: Optional target orientation: roll-pitch-yaw (shape ``(3,)``, rad) or a
            rotation matrix ``(3, 3)``.
        tool: Tool frame name (``<last actuator>_tool``); optional for single-chain robots.
        q0: Start guess, shape ``(dof,)``; default the home position.
        max_iterations: Iteration limit.
        tolerance: Convergence threshold on the position error (m) and orientation error (rad).
        damping: Damping ``λ`` of the least-squares step (m).
        max_step: Largest joint change per iteration (rad or m).
    """
    tool = _default_tool(description, tool)
    target_p = np.asarray(position, dtype=np.float64).reshape(3)
    target_r = None
    if orientation is not None:
        value = np.asarray(orientation, dtype=np.float64)
        target_r = rpy_matrix(value) if value.shape == (3,) else value.reshape(3, 3)
    q = np.array(description.home if q0 is None else q0, dtype=np.float64)
    free = ~description.dependent
    lower, upper = description.soft_lower, description.soft_upper
    dof = description.dof
    p_err = r_err = np.inf
    for iteration in range(1, max_iterations + 1):
        frame = forward_kinematics(description, q).frame(tool)
        error = target_p - frame[:3, 3]
        jac = position_jacobian(description, q, tool)
        p_err = float(np.linalg.norm(error))
        r_err = 0.0
        if target_r is not None:
            rot_error = _orientation_error(target_r, frame[:3, :3])
            r_err = float(np.linalg.norm(rot_error))
            eps = 1e-6
            batch = np.concatenate([q + np.eye(dof) * eps, q - np.eye(dof) * eps])
            frames = forward_kinematics(description, batch).frame(tool)[..., :3, :3]
            rel = np.einsum("nij,nkj->nik", frames[:dof], frames[dof:])
            jac_r = (Rotation.from_matrix(rel).as_rotvec() / (2 * eps)).T
            jac = np.vstack([jac, jac_r])
            error = np.concatenate([error, rot_error])
        if p_err < tolerance and r_err < tolerance:
            return IKResult(q, True, iteration - 1, p_err, r_err)
        jac = jac * free
        step = jac.T @ np.linalg.solve(jac @ jac.T + damping**2 * np.eye(jac.shape[0]), error)
        largest = np.max(np.abs(step))
        if largest > max_step:
            step *= max_step / largest
        q = description.apply_coupling(np.clip(q + step, lower, upper))
    return IKResult(q, False, max_iterations, p_err, r_err)


class CartesianTarget:
    """Controller: move the tool to a Cartesian position via IK and a jerk-limited move.

    Args:
        description: The robot.
        position: Target tool position, world frame, metres, shape ``(3,)``.
        orientation: Optional target orientation (roll-pitch-yaw in rad, or a 3x3 matrix).
        tool: Tool frame name; optional for single-chain robots.
        limits: Motion limits; default the description's soft limits and configured speeds.

    Raises (from :meth:`reset`):
        CommandRefused: the IK did not converge (reason ``"out_of_limits"``): the target is
            outside the workspace reachable within the soft limits.
    """

    def __init__(
        self,
        description: RobotDescription,
        position: Any,
        *,
        orientation: Any = None,
        tool: str | None = None,
        limits: MotionLimits | None = None,
    ) -> None:
        self.description = description
        self.tool = _default_tool(description, tool)
        self.limits = limits or MotionLimits.from_description(description, description.config_speed)
        self._position = np.asarray(position, dtype=np.float64).reshape(3)
        self._orientation = orientation
        self._motion: PiecewisePolynomial | None = None
        self._start_time = 0.0
        #: The last IK solution.
        self.solution: IKResult | None = None

    def set_target(self, position: Any, orientation: Any = None) -> None:
        """Change the target; the move is re-planned at the next :meth:`compute`."""
        self._position = np.asarray(position, dtype=np.float64).reshape(3)
        self._orientation = orientation
        self._motion = None

    def reset(self, state: ArrayState) -> None:
        """Solve the IK from the current position and plan the move."""
        result = solve_ik(
            self.description,
            self._position,
            orientation=self._orientation,
            tool=self.tool,
            q0=state.position,
        )
        if not result.converged:
            raise CommandRefused(
                f"no joint position puts {self.tool!r} at {self._position.tolist()} within the "
                f"soft limits (remaining error {result.position_error:.3g} m)",
                reason="out_of_limits",
            )
        self.solution = result
        self._motion = plan_move(
            self.limits, state.position, result.q, start_velocity=state.velocity
        )
        self._start_time = state.time

    def compute(self, state: ArrayState) -> NJointAction:
        """PD action to the sampled point of the move."""
        if self._motion is None:
            self.reset(state)
        p, v, _ = self._motion.sample(state.time - self._start_time)  # type: ignore[union-attr]
        return NJointAction.Position(p, velocity=v)
