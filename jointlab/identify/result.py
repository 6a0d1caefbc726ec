"""What :func:`jointlab.identify.fit` returns: estimates with intervals, residuals, write-back.

:class:`IdentificationResult` holds one :class:`Estimate` per fitted parameter and joint
(nominal value, estimate, 95 % interval), the torque residuals of the dynamics regression
per joint, and the replay scores of the latency search. :meth:`IdentificationResult.to_description`
writes the estimates into the robot file's fields (``dynamics.static_friction``,
``dynamics.damping``, ``dynamics.armature``, ``motor.delay``, ``motor.torque_constant``,
``limits.effort``) and changes nothing else. :meth:`IdentificationResult.randomization`
centres domain randomisation on the identified robot.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from jointlab.identify.errors import IdentificationError
from jointlab.identify.parameters import PARAMETERS, field_path
from jointlab.identify.writeback import write_parameters
from jointlab.robots import RobotDescription
from jointlab.robots.yaml_io import dump_yaml

if TYPE_CHECKING:
    from jointlab.sim.randomization import Randomization

__all__ = ["Estimate", "IdentificationResult", "Residuals"]


@dataclass(frozen=True)
class Estimate:
    """One identified parameter of one joint."""

    #: Parameter name, a key of :data:`jointlab.identify.parameters.FIELDS` (``"damping"``).
    parameter: str
    #: Joint name.
    joint: str
    #: Value in the robot file that was identified against.
    nominal: float
    #: Estimate.
    value: float
    #: Lower end of the 95 % interval.
    low: float
    #: Upper end of the 95 % interval.
    high: float
    #: Unit of the three values (``"N·m"``, ``"steps"``...).
    unit: str

    @property
    def field(self) -> str:
        """Robot-file field, e.g. ``"dynamics.damping"``."""
        return field_path(self.parameter)

    @property
    def change(self) -> float:
        """``value / nominal − 1`` (NaN for a nominal of 0)."""
        return self.value / self.nominal - 1.0 if self.nominal else float("nan")


@dataclass(frozen=True, eq=False)
class Residuals:
    """Torque residuals of one joint's dynamics regression."""

    #: Row times, seconds.
    time: np.ndarray
    #: Applied minus modelled torque, N·m or N.
    torque: np.ndarray

    @property
    def rms(self) -> float:
        """Root mean square, N·m or N."""
        return float(np.sqrt(np.mean(self.torque**2)))


@dataclass(frozen=True, eq=False)
class IdentificationResult:
    """Estimates, intervals and residuals of one fit (module docstring)."""

    #: The robot file the log was identified against.
    nominal: RobotDescription
    #: One estimate per fitted parameter and joint, parameters in report order.
    estimates: tuple[Estimate, ...]
    #: Dynamics-regression residuals by joint name.
    residuals: Mapping[str, Residuals] = field(default_factory=dict)
    #: Latency search by joint name: candidate delays (steps) and replay RMS (rad or m).
    delay_scores: Mapping[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    #: The log identified.
    source: str = "<log>"

    def __post_init__(self) -> None:
        object.__setattr__(self, "residuals", MappingProxyType(dict(self.residuals)))
        object.__setattr__(self, "delay_scores", MappingProxyType(dict(self.delay_scores)))

    # ----------------------------------------------------------------- access
    @property
    def parameters(self) -> tuple[str, ...]:
        """Fitted parameter names, in report order."""
        return tuple(p for p in PARAMETERS if any(e.parameter == p for e in self.estimates))

    @property
    def joints(self) -> tuple[str, ...]:
        """Joints with at least one estimate, in joint order."""
        fitted = {e.joint for e in self.estimates}
        return tuple(name for name in self.nominal.joint_names if name in fitted)

    def estimate(self, parameter: str, joint: str | int) -> Estimate:
        """The estimate of ``parameter`` for ``joint`` (name or index)."""
        name = self.nominal.joint_names[self.nominal.joint_index(joint)]
        for entry in self.estimates:
            if entry.parameter == parameter and entry.joint == name:
                return entry
        raise IdentificationError(
            f"no estimate of {parameter!r} for joint {name!r}; fitted: {list(self.parameters)} "
            f"of joints {list(self.joints)}"
        )

    def values(self, parameter: str) -> dict[str, float]:
        """Joint name -> estimate of ``parameter``."""
        return {e.joint: e.value for e in self.estimates if e.parameter == parameter}

    # ----------------------------------------------------------------- write-back
    def written(self) -> tuple[str, ...]:
        """Parameters :meth:`to_description` writes (every fitted one)."""
        return tuple(self.parameters)

    def to_description(self) -> RobotDescription:
        """The nominal description with the estimates written into their fields, only those.

        Raises:
            IdentificationError: an estimate the robot-file rules refuse (e.g. a saturation
                below the soft effort limit).
        """
        values = {p: self.values(p) for p in self.written()}
        return write_parameters(self.nominal, values, source=f"<{self.nominal.name} identified>")

    def to_yaml(self) -> str:
        """Robot-file YAML of :meth:`to_description`."""
        return dump_yaml(self.to_description())

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_yaml` to ``path`` (parent folders created); returns the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.to_yaml(), encoding="utf-8")
        return target

    # ----------------------------------------------------------------- randomisation
    def randomization(self, widen: float = 1.0) -> tuple[RobotDescription, Randomization]:
        """Domain randomisation centred on the identified robot.

        Friction and damping scales span the widest relative 95 % interval over the joints
        (times ``widen``, at least ±5 %); latency spans the widest delay interval. Since
        :class:`~jointlab.sim.Randomization` only adds latency, the returned description has
        each delay lowered by that half-width, so the draws centre on the identified delay.

        Returns:
            ``(description, randomization)`` for ``SimRobot(description,
            randomization=randomization)`` or ``gym.make(..., robot=description,
            randomization=randomization)``.
        """
        from jointlab.sim.randomization import Randomization

        if not widen > 0:
            raise IdentificationError(f"widen must be > 0, got {widen!r}")
        description = self.to_description()
        scales: dict[str, tuple[float, float]] = {}
        for parameter, key in (("static_friction", "friction_scale"), ("damping", "damping_scale")):
            spans = [
                max(e.value - e.low, e.high - e.value) / e.value
                for e in self.estimates
                if e.parameter == parameter and e.value > 0
            ]
            if spans:
                half = max(0.05, widen * max(spans))
                scales[key] = (max(1.0 - half, 0.01), 1.0 + half)
        latency = None
        delays = [e for e in self.estimates if e.parameter == "delay"]
        if delays:
            half_steps = max(
                1, round(widen * max(max(e.value - e.low, e.high - e.value) for e in delays))
            )
            lowered = {e.joint: max(int(e.value) - half_steps, 0) for e in delays}
            description = write_parameters(
                description, {"delay": lowered}, source=description.source
            )
            latency = (0, 2 * half_steps)
        return description, Randomization(**scales, latency=latency)

    # ----------------------------------------------------------------- reporting
    def rows(self) -> list[tuple[str, ...]]:
        """Table rows: parameter, joint, nominal, estimate, interval, change, unit."""
        out = []
        for e in self.estimates:
            digits = 0 if e.parameter == "delay" else 4
            change = "" if np.isnan(e.change) else f"{100 * e.change:+.1f} %"
            out.append(
                (
                    e.field,
                    e.joint,
                    f"{e.nominal:.{digits}f}",
                    f"{e.value:.{digits}f}",
                    f"[{e.low:.{digits}f}, {e.high:.{digits}f}]",
                    change,
                    e.unit,
                )
            )
        return out

    def summary(self) -> str:
        """A plain-text table of the estimates (what ``print(result)`` shows)."""
        header = ("field", "joint", "nominal", "identified", "95 % interval", "change", "unit")
        rows = [header, *self.rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows
        ]
        return "\n".join([f"identified from {self.source}", *lines])

    def __str__(self) -> str:
        return self.summary()
