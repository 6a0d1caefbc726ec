"""Validation report: does the identified robot file predict the robot better than the nominal?

:func:`validate` replays a log's commands on ``sim://`` twice, with the nominal and with the
identified description (:func:`~jointlab.identify.replay.replay`), and compares each
simulated joint trajectory with the recorded one: RMS and largest difference per joint. The
*gap closed* is ``1 − rms(identified) / rms(nominal)`` (1: the identified simulation
reproduces the robot; 0: no better than the nominal one), per joint and over all joints
(root of the summed squares). Use a log that the fit did not see (a held-out trajectory).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from jointlab.identify.data import prepare
from jointlab.identify.errors import IdentificationError
from jointlab.identify.replay import replay
from jointlab.recording import Log
from jointlab.robots import RobotDescription, load_robot

__all__ = ["ValidationReport", "validate"]


@dataclass(frozen=True, eq=False)
class ValidationReport:
    """Recorded versus simulated joint trajectories (module docstring).

    Trajectory arrays have shape ``(T, dof)``, rad or m; statistics are over usable rows.
    """

    #: Joint names.
    joints: tuple[str, ...]
    #: Row times, seconds.
    time: np.ndarray
    #: Rows compared (the robot armed, powered and unbraked).
    usable: np.ndarray
    #: Recorded positions.
    measured: np.ndarray
    #: Replayed with the nominal description.
    nominal: np.ndarray
    #: Replayed with the identified description.
    identified: np.ndarray

    def _error(self, simulated: np.ndarray) -> np.ndarray:
        keep = self.usable & np.all(np.isfinite(simulated), axis=1)
        return simulated[keep] - self.measured[keep]

    @property
    def nominal_rms(self) -> np.ndarray:
        """RMS of nominal simulation minus recording per joint, shape ``(dof,)``."""
        return np.sqrt(np.mean(self._error(self.nominal) ** 2, axis=0))

    @property
    def identified_rms(self) -> np.ndarray:
        """RMS of identified simulation minus recording per joint, shape ``(dof,)``."""
        return np.sqrt(np.mean(self._error(self.identified) ** 2, axis=0))

    @property
    def nominal_max(self) -> np.ndarray:
        """Largest |nominal simulation − recording| per joint, shape ``(dof,)``."""
        return np.abs(self._error(self.nominal)).max(axis=0)

    @property
    def identified_max(self) -> np.ndarray:
        """Largest |identified simulation − recording| per joint, shape ``(dof,)``."""
        return np.abs(self._error(self.identified)).max(axis=0)

    @property
    def gap_closed(self) -> np.ndarray:
        """``1 − identified_rms / nominal_rms`` per joint (NaN where the nominal was exact)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(
                self.nominal_rms > 0, 1.0 - self.identified_rms / self.nominal_rms, np.nan
            )

    @property
    def total_gap_closed(self) -> float:
        """``1 − ‖identified_rms‖ / ‖nominal_rms‖`` over all joints."""
        nominal = float(np.linalg.norm(self.nominal_rms))
        return 1.0 - float(np.linalg.norm(self.identified_rms)) / nominal if nominal else np.nan

    def rows(self) -> list[tuple[str, ...]]:
        """Table rows: joint, RMS and max for nominal and identified (rad or m), gap closed."""
        out = []
        for j, name in enumerate(self.joints):
            closed = self.gap_closed[j]
            out.append(
                (
                    name,
                    f"{self.nominal_rms[j]:.3e}",
                    f"{self.nominal_max[j]:.3e}",
                    f"{self.identified_rms[j]:.3e}",
                    f"{self.identified_max[j]:.3e}",
                    "" if np.isnan(closed) else f"{100 * closed:.0f} %",
                )
            )
        return out

    def summary(self) -> str:
        """A plain-text table (what ``print(report)`` shows)."""
        header = (
            "joint",
            "nominal rms",
            "nominal max",
            "identified rms",
            "identified max",
            "gap closed",
        )
        rows = [header, *self.rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows
        ]
        lines.append(f"gap closed over all joints: {100 * self.total_gap_closed:.0f} %")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def plot(self, joints: Sequence[int | str] | None = None) -> Figure:
        """Measured, nominal-sim and identified-sim positions, and their differences.

        One row per joint: the trajectories on the left, simulation minus recording on the
        right. Returns a :class:`~matplotlib.figure.Figure` (no pyplot, no backend change).
        """
        chosen = (
            range(len(self.joints))
            if joints is None
            else [j if isinstance(j, int) else self.joints.index(j) for j in joints]
        )
        chosen = list(chosen)
        fig = Figure(figsize=(11, 2.1 * len(chosen) + 0.6), layout="constrained")
        axes = fig.subplots(len(chosen), 2, squeeze=False, sharex=True)
        t = self.time
        for row, j in enumerate(chosen):
            left, right = axes[row]
            left.plot(t, self.measured[:, j], color="k", lw=1.6, label="measured", gid="measured")
            left.plot(
                t,
                self.nominal[:, j],
                color="tab:red",
                lw=1,
                ls="--",
                label="nominal sim",
                gid="nominal",
            )
            left.plot(
                t,
                self.identified[:, j],
                color="tab:green",
                lw=1,
                label="identified sim",
                gid="identified",
            )
            left.set_ylabel(f"{self.joints[j]}\nposition [rad | m]")
            right.plot(
                t,
                self.nominal[:, j] - self.measured[:, j],
                color="tab:red",
                lw=1,
                label="nominal − measured",
                gid="nominal",
            )
            right.plot(
                t,
                self.identified[:, j] - self.measured[:, j],
                color="tab:green",
                lw=1,
                label="identified − measured",
                gid="identified",
            )
            right.axhline(0.0, color="0.6", lw=0.6)
            right.set_ylabel("difference [rad | m]")
        handles = [*axes[0, 0].get_lines()[:3], *axes[0, 1].get_lines()[:2]]
        fig.legend(
            handles=handles, loc="outside lower center", ncol=5, fontsize="small", frameon=False
        )
        axes[0, 0].set_title("recorded vs simulated")
        axes[0, 1].set_title(f"gap closed: {100 * self.total_gap_closed:.0f} % over all joints")
        for ax in axes[-1]:
            ax.set_xlabel("time [s]")
        return fig


def validate(
    log: Log | str | os.PathLike[str],
    nominal: RobotDescription | str,
    identified: RobotDescription | str,
    *,
    physics_dt: float | None = None,
) -> ValidationReport:
    """Replay ``log`` with both descriptions and compare with the recording (module docstring).

    Args:
        log: A recorded run (ideally not the one the fit used).
        nominal: The robot file the run was recorded with.
        identified: The identified robot file (``result.to_description()``).
        physics_dt: Physics step / device tick, seconds (default: from the log).

    Raises:
        IdentificationError: the log cannot be replayed, or the two descriptions have
            different joints.
    """
    nominal, identified = load_robot(nominal), load_robot(identified)
    if identified.joint_names != nominal.joint_names:
        raise IdentificationError(
            f"the identified robot has joints {list(identified.joint_names)}, the nominal one "
            f"{list(nominal.joint_names)}"
        )
    data = prepare(log, nominal, physics_dt=physics_dt)
    return ValidationReport(
        joints=nominal.joint_names,
        time=data.time,
        usable=data.usable,
        measured=data.position,
        nominal=replay(data, nominal),
        identified=replay(data, identified),
    )
