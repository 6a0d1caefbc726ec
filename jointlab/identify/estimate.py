"""``fit(log, description)``: identify a robot's actuators from one recorded run.

The steps, each in its own module:

1. :func:`~jointlab.identify.data.prepare` checks the log against the robot file and aligns
   its rows (state, acceleration over the period, applied torque, current, command);
2. :func:`~jointlab.identify.regression.fit_joint_dynamics`: Coulomb friction, viscous
   damping and reflected inertia per joint, least squares on the rigid-body dynamics;
3. :func:`~jointlab.identify.actuator.fit_torque_constant`: current-to-torque scale;
4. latency: a first guess from command versus applied torque
   (:func:`~jointlab.identify.actuator.guess_delay`), chosen by replaying the log in
   simulation with the identified dynamics and candidate delays
   (:func:`~jointlab.identify.replay.search_delay`);
5. :func:`~jointlab.identify.actuator.fit_effort`: saturation, from rows the actuator clamped.

Every parameter that the log cannot identify is reported at once, in one
:class:`~jointlab.identify.errors.IdentificationError` that names the parameter, the joint
and the excitation that would identify it; nothing is silently left at its nominal value.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from jointlab.errors import DescriptionError
from jointlab.identify.actuator import fit_effort, fit_torque_constant, guess_delay
from jointlab.identify.data import IdentificationData, prepare
from jointlab.identify.errors import IdentificationError
from jointlab.identify.parameters import DEFAULT_CUTOFF, DEFAULT_PARAMETERS, PARAMETERS, UNITS
from jointlab.identify.regression import DYNAMICS_PARAMETERS, fit_joint_dynamics, nominal_armature
from jointlab.identify.replay import search_delay
from jointlab.identify.result import Estimate, IdentificationResult, Residuals
from jointlab.identify.writeback import write_parameters
from jointlab.recording import Log
from jointlab.robots import RobotDescription, load_robot

__all__ = ["fit"]


def _joints(description: RobotDescription, joints: Sequence[int | str] | None) -> list[int]:
    if joints is None:
        return [j for j in range(description.dof) if not description.dependent[j]]
    indices = []
    for joint in joints:
        try:
            index = description.joint_index(joint)
        except DescriptionError as exc:
            raise IdentificationError(str(exc)) from exc
        if description.dependent[index]:
            raise IdentificationError(
                f"joint {description.joint_names[index]!r} is dependent (coupled): it has no "
                "actuator of its own to identify"
            )
        indices.append(index)
    return indices


def _parameters(parameters: Sequence[str] | None) -> tuple[str, ...]:
    if parameters is None:
        return DEFAULT_PARAMETERS
    if isinstance(parameters, str):
        parameters = [parameters]
    unknown = [p for p in parameters if p not in PARAMETERS]
    if unknown:
        raise IdentificationError(
            f"unknown parameter {unknown[0]!r}; expected some of {list(PARAMETERS)}"
        )
    if not parameters:
        raise IdentificationError(f"parameters is empty; choose some of {list(PARAMETERS)}")
    return tuple(p for p in PARAMETERS if p in parameters)


def _nominal(description: RobotDescription, parameter: str, j: int) -> float:
    spec = description.joints[j]
    return float(
        {
            "static_friction": spec.dynamics.static_friction,
            "damping": spec.dynamics.damping,
            "armature": nominal_armature(description)[j],
            "delay": spec.motor.delay,
            "torque_constant": spec.motor.torque_constant,
            "effort": spec.limits.effort,
        }[parameter]
    )


def fit(
    log: Log | str | os.PathLike[str],
    description: RobotDescription | str,
    *,
    joints: Sequence[int | str] | None = None,
    parameters: Sequence[str] | None = None,
    physics_dt: float | None = None,
    cutoff: float | None = DEFAULT_CUTOFF,
    max_delay: int = 10,
) -> IdentificationResult:
    """Identify the actuators of ``description`` from a recorded ``log`` (module docstring).

    Args:
        log: A :class:`~jointlab.recording.Log` or a log file (CSV, NPZ, Parquet) with the
            ``state``, ``desired`` and ``applied`` channels that :func:`jointlab.run` writes.
        description: The robot file the log was recorded with (the nominal robot).
        joints: Joints to identify (names or indices); default every independent joint.
        parameters: Some of ``static_friction``, ``damping``, ``armature``, ``delay``,
            ``torque_constant``, ``effort``; default :data:`DEFAULT_PARAMETERS`. The others
            keep their nominal values (also inside the fit).
        physics_dt: Physics step / device tick in seconds (the unit of ``motor.delay``);
            default the log's metadata ``physics_dt``, else its control period.
        cutoff: Low-pass cutoff of the regressions in Hz (see
            :func:`~jointlab.identify.data.prepare`); ``None`` for none. The default is
            skipped on logs of fewer than ``2·DEFAULT_CUTOFF`` rows per second.
        max_delay: Largest latency considered, physics steps.

    Returns:
        An :class:`IdentificationResult`; ``result.to_description()`` is the updated robot.

    Raises:
        IdentificationError: the log lacks a needed column, is too short, or does not excite
            a parameter asked for (every such problem listed, with the excitation to record).
    """
    description = load_robot(description)
    if not description.base.fixed:
        raise IdentificationError(
            f"robot {description.name!r} has a floating base; identification needs the base "
            "bolted down (its rigid-body model assumes a fixed base)"
        )
    wanted = _parameters(parameters)
    indices = _joints(description, joints)
    if isinstance(max_delay, bool) or not isinstance(max_delay, int) or max_delay < 0:
        raise IdentificationError(f"max_delay must be a whole number >= 0, got {max_delay!r}")
    data = prepare(
        log,
        description,
        physics_dt=physics_dt,
        cutoff=cutoff,
        default_cutoff=cutoff == DEFAULT_CUTOFF,
    )
    dynamics, problems = fit_joint_dynamics(data, indices, wanted)
    constants: dict = {}
    if "torque_constant" in wanted:
        constants, trouble = fit_torque_constant(data, indices)
        problems += trouble
    if "delay" in wanted and data.commands is None:
        problems.append(
            "delay (motor.delay) cannot be identified: the log has no desired channel (the "
            "commands); record with jointlab.run(..., recorder=Recorder(...)) or "
            "`jointlab identify excite`"
        )
    guesses, _ = guess_delay(data, indices, max_delay)
    if "effort" in wanted:  # checked now with the first guesses, so all problems come at once
        problems += fit_effort(data, indices, _rows(data, description, indices, guesses))[1]
    if problems:
        raise _error(data, problems)
    names = description.joint_names
    fitted = {
        p: {names[j]: float(fit_.values[fit_.names.index(p)]) for j, fit_ in dynamics.items()}
        for p in DYNAMICS_PARAMETERS
        if p in wanted
    }
    identified = write_parameters(description, fitted) if fitted else description
    delays: dict[int, int] = {}
    search = None
    if "delay" in wanted:
        search = search_delay(data, identified, indices, guesses, max_delay)
        delays = search.delay
    efforts: dict = {}
    if "effort" in wanted:
        efforts, trouble = fit_effort(data, indices, _rows(data, description, indices, delays))
        if trouble:
            raise _error(data, trouble)
    estimates = []
    for parameter in wanted:
        for j in indices:
            linear = bool(description.is_linear[j])
            nominal = _nominal(description, parameter, j)
            if parameter in DYNAMICS_PARAMETERS:
                fit_ = dynamics[j]
                k = fit_.names.index(parameter)
                value, (low, high) = float(fit_.values[k]), fit_.interval[k]
            elif parameter == "torque_constant":
                e = constants[j]
                value, low, high = e.value, e.low, e.high
            elif parameter == "effort":
                e = efforts[j]
                value, low, high = e.value, e.low, e.high
            else:  # delay: ``search`` ran above
                value = float(delays[j])
                low, high = search.interval(j) if search is not None else (value, value)
            estimates.append(
                Estimate(
                    parameter,
                    names[j],
                    nominal,
                    value,
                    float(low),
                    float(high),
                    UNITS[parameter][linear],
                )
            )
    return IdentificationResult(
        nominal=description,
        estimates=tuple(estimates),
        residuals={names[j]: Residuals(f.time, f.residual) for j, f in dynamics.items()},
        delay_scores={}
        if search is None
        else {names[j]: (search.candidates[j], search.scores[j]) for j in indices},
        source=data.source,
    )


def _rows(
    data: IdentificationData,
    description: RobotDescription,
    joints: list[int],
    delays: dict[int, int],
) -> dict[int, int]:
    """Latency in log rows per joint: ``delays`` (physics steps), else the file's."""
    steps = data.dt / data.physics_dt
    return {j: round(delays.get(j, description.joints[j].motor.delay) / steps) for j in joints}


def _error(data: IdentificationData, problems: list[str]) -> IdentificationError:
    listed = "\n".join(f"  - {p}" for p in problems)
    count = len(problems)
    return IdentificationError(
        f"{data.source}: {count} problem{'s keep' if count > 1 else ' keeps'} the log from "
        f"identifying what was asked:\n{listed}\n(or leave those joints or parameters out: "
        "joints=[...] / --joints, parameters=[...] / --parameters)"
    )
