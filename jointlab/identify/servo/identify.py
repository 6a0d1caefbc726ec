"""Servo identification referenced to the twin, and its write-back into the robot file.

The numpy servo model (:mod:`.model`) leaves out what the twin has: the bus's own cycle
delay, the coupling between joints, contacts, the register rounding. Fitting it to the
recording alone would fold those into the parameters. So :func:`identify_servos` fits it
twice, to the recording and to the twin of the robot file replaying the same goals
(:func:`~.twin.replay_on_twin`), and writes the difference: the stiffness factor scaled by
``recording / twin``, the other parameters moved by ``recording − twin``. A twin that
already matches the arm gets its own file back.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jointlab.identify.errors import IdentificationError
from jointlab.identify.servo.fit import BOUNDS, MAX_RELATIVE_INTERVAL, ServoFit, fit_model
from jointlab.identify.servo.model import PARAMETERS, joint_inputs
from jointlab.identify.servo.traces import ServoTrace
from jointlab.identify.servo.twin import recording_gains, replay_on_twin
from jointlab.robots import RobotDescription, load_robot
from jointlab.robots.schema import description_from_dict
from jointlab.robots.serialize import description_to_dict
from jointlab.robots.yaml_io import dump_yaml

__all__ = ["FILE_FIELDS", "ServoEstimate", "ServoIdentification", "file_values", "identify_servos"]

#: Parameter -> its robot-file field (per joint).
FILE_FIELDS = {
    "stiffness": "bus.servos.{joint}.stiffness",
    "coulomb": "dynamics.static_friction",
    "viscous": "dynamics.damping",
    "backlash": "bus.servos.{joint}.backlash",
    "delay": "bus.servos.{joint}.delay",
    "torque_limit": "limits.effort",
}
#: Units of each parameter in reports.
UNITS = {
    "stiffness": "×",
    "coulomb": "N·m",
    "viscous": "N·m·s/rad",
    "backlash": "deg",
    "delay": "ms",
    "torque_limit": "N·m",
}
_SHOWN = {"backlash": np.degrees(1.0), "delay": 1e3}
#: Parameters judged by their interval relative to their value.
_BY_RATIO = ("stiffness", "coulomb", "viscous", "torque_limit")
#: Parameters of the servo's own position loop (meaningless for a servo in current mode).
_SERVO_LOOP = ("stiffness", "backlash", "delay")


def file_values(description: RobotDescription) -> np.ndarray:
    """The robot file's values of the six parameters, ``(dof, 6)``."""
    servos = description.bus.servos  # type: ignore[union-attr]
    return np.stack(
        [
            [s.stiffness for s in servos],
            np.asarray(description.static_friction, dtype=np.float64),
            np.asarray(description.damping, dtype=np.float64),
            [s.backlash for s in servos],
            [s.delay for s in servos],
            np.asarray(description.effort_limit, dtype=np.float64),
        ],
        axis=1,
    )


@dataclass(frozen=True)
class ServoEstimate:
    """One parameter of one joint.

    Attributes:
        joint: Joint name.
        parameter: One of :data:`~.model.PARAMETERS`.
        nominal: The robot file's value (SI: factor, N·m, N·m·s/rad, rad, s, N·m).
        value: The identified value (the nominal one where not identified).
        interval: 95 % half-width (NaN where not identified).
        identified: Whether the recording identifies it.
        reason: Why not, when not.
        note: How, when not from this joint alone.
    """

    joint: str
    parameter: str
    nominal: float
    value: float
    interval: float
    identified: bool
    reason: str = ""
    note: str = ""

    @property
    def field(self) -> str:
        """The robot-file field it is written to."""
        return FILE_FIELDS[self.parameter].format(joint=self.joint)


@dataclass(frozen=True)
class ServoIdentification:
    """What servo identification found (see the module docstring).

    Attributes:
        description: The robot file identified (the nominal one).
        estimates: One per joint and parameter, joint-major.
        recording: The model's fit to the recordings.
        twin: The model's fit to the twin's replays of the same goals.
        sources: The recordings used.
    """

    description: RobotDescription
    estimates: tuple[ServoEstimate, ...]
    recording: ServoFit
    twin: ServoFit
    sources: tuple[str, ...]

    def estimate(self, joint: str, parameter: str) -> ServoEstimate:
        """The estimate of ``parameter`` of ``joint``."""
        for e in self.estimates:
            if e.joint == joint and e.parameter == parameter:
                return e
        raise KeyError((joint, parameter))

    def to_description(self) -> RobotDescription:
        """The robot file with every identified value written (the rest unchanged).

        Raises:
            IdentificationError: a value the robot-file rules refuse (names joint and field).
        """
        from jointlab.errors import DescriptionError

        data = description_to_dict(self.description)
        actuators = {a["name"]: a for a in data["actuators"]}
        servos = data["bus"]["servos"]
        for e in self.estimates:
            if not e.identified:
                continue
            value = float(f"{e.value:.6g}")
            if e.parameter in ("stiffness", "backlash", "delay"):
                servos[e.joint][e.parameter] = value
            elif e.parameter == "coulomb":
                actuators[e.joint].setdefault("dynamics", {})["static_friction"] = value
            elif e.parameter == "viscous":
                actuators[e.joint].setdefault("dynamics", {})["damping"] = value
            else:
                actuators[e.joint].setdefault("limits", {})["effort"] = value
        try:
            return description_from_dict(data, source=self.description.source)
        except DescriptionError as exc:
            raise IdentificationError(f"cannot write the identified values: {exc}") from exc

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the identified robot file to ``path``; returns it."""
        path = Path(path)
        text = dump_yaml(self.to_description())
        path.write_text(
            "# Servo-identified by `jointlab identify fit` from:\n"
            + "".join(f"#   {s}\n" for s in self.sources)
            + text
        )
        return path

    def rows(self) -> list[tuple[str, ...]]:
        """Table rows: joint, parameter, nominal, identified, ±95 %, field or reason."""
        rows = []
        for e in self.estimates:
            scale = _SHOWN.get(e.parameter, 1.0)
            value = f"{e.value * scale:.4g}" if e.identified else "-"
            interval = f"±{e.interval * scale:.2g}" if e.identified else ""
            rows.append(
                (
                    e.joint,
                    f"{e.parameter} ({UNITS[e.parameter]})",
                    f"{e.nominal * scale:.4g}",
                    value,
                    interval,
                    (e.field + (f" ({e.note})" if e.note else ""))
                    if e.identified
                    else f"cannot identify: {e.reason}",
                )
            )
        return rows

    def summary(self) -> str:
        """The table of :meth:`rows`, then the residuals per joint."""
        rows = [("joint", "parameter", "nominal", "identified", "95 %", "written to"), *self.rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r[:5], widths, strict=False)) + "  " + r[5]
            for r in rows
        ]
        lines.append("model residual RMS per joint (recording; start -> fitted), deg:")
        for f in self.recording.joints:
            lines.append(f"  {f.joint}: {np.degrees(f.rms_start):.3f} -> {np.degrees(f.rms):.3f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def identify_servos(
    description: RobotDescription | str,
    traces: Sequence[ServoTrace],
    *,
    p_registers: Sequence[float] | None = None,
    twin_traces: Sequence[ServoTrace] | None = None,
) -> ServoIdentification:
    """Identify every servo of ``description`` from position-only ``traces``.

    Args:
        description: The robot file the arm is believed to be (its twin is the reference).
        traces: Recordings of the arm (one robot, same joints).
        p_registers: P register of each servo while recording (default: the file's gains).
        twin_traces: The twin's replays of ``traces`` (default: replayed here).

    Raises:
        IdentificationError: no trace, traces of other joints, or nothing identifiable.
    """
    description = load_robot(description)
    if not traces:
        raise IdentificationError("no recording to identify from")
    for trace in traces:
        if tuple(trace.joints) != tuple(description.joint_names):
            raise IdentificationError(
                f"{trace.source}: joints {list(trace.joints)} are not robot "
                f"{description.name!r}'s {list(description.joint_names)}"
            )
    if twin_traces is None:
        twin_traces = [replay_on_twin(description, t, p_registers=p_registers) for t in traces]
    kp, kd = recording_gains(description, p_registers)
    nominal = file_values(description)
    models = [s.model for s in description.bus.servos]  # type: ignore[union-attr]
    real = fit_model([joint_inputs(description, t) for t in traces], nominal, kp, kd, models=models)
    twin = fit_model(
        [joint_inputs(description, t) for t in twin_traces], nominal, kp, kd, models=models
    )
    real_x, twin_x = real.values(), twin.values()
    value = nominal + (real_x - twin_x)
    value[:, 0] = nominal[:, 0] * real_x[:, 0] / twin_x[:, 0]
    value = np.clip(value, np.maximum(BOUNDS[:, 0], 0.0), BOUNDS[:, 1])  # files hold >= 0
    value[:, 4] = np.minimum(value[:, 4], 0.1)  # the file's delay range
    estimates = []
    servos = description.bus.servos  # type: ignore[union-attr]
    for j, joint in enumerate(description.joint_names):
        r, t = real.joints[j], twin.joints[j]
        for p, name in enumerate(PARAMETERS):
            ok = bool(r.identified[p])
            reason = r.reasons.get(name, "")
            note = r.notes.get(name, "")
            if ok and servos[j].mode.value == "current" and name in _SERVO_LOOP:
                ok = False
                reason = (
                    f"the servo of joint {joint!r} runs in current mode: JointLab's "
                    "host law (gains, bus.rate) sets its stiffness and timing"
                )
            if ok and not t.identified[p] and name != "torque_limit":
                ok = False
                reason = f"the twin's replay does not pin it down either ({t.reasons[name]})"
            spread = np.hypot(r.interval[p], t.interval[p] if t.identified[p] else 0.0)
            if p == 0 and ok:
                spread *= nominal[j, 0] / twin_x[j, 0]
            if ok and name in _BY_RATIO and spread > MAX_RELATIVE_INTERVAL * abs(value[j, p]):
                ok = False
                reason = (
                    f"joint {joint!r}: recording and twin together do not pin it down "
                    f"({value[j, p]:.3g} ± {spread:.2g})"
                )
            estimates.append(
                ServoEstimate(
                    joint=joint,
                    parameter=name,
                    nominal=float(nominal[j, p]),
                    value=float(value[j, p] if ok else nominal[j, p]),
                    interval=float(spread) if ok else float("nan"),
                    identified=ok,
                    reason=reason,
                    note=note,
                )
            )
    return ServoIdentification(
        description=description,
        estimates=tuple(estimates),
        recording=real,
        twin=twin,
        sources=tuple(t.source for t in traces),
    )
