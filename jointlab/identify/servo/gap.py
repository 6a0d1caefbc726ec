"""The real-to-sim gap of a servo arm: the recording against its twin, nominal and identified.

:func:`gap_report` replays each recording's goals on the twin of the nominal robot file and on
the twin of the identified one (:func:`~.twin.replay_on_twin`) and compares what each reports
with what the arm recorded: per joint the RMS tracking difference (twin minus recording), the
share of the nominal gap the identified file closes, and one figure per joint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jointlab.identify.errors import IdentificationError
from jointlab.identify.servo.traces import ServoTrace
from jointlab.identify.servo.twin import replay_on_twin
from jointlab.robots import RobotDescription, load_robot

__all__ = ["GapReport", "JointGap", "gap_report"]


@dataclass(frozen=True)
class JointGap:
    """One joint's gap.

    Attributes:
        joint: Joint name.
        nominal: RMS of nominal twin minus recording over every frame, rad.
        identified: The same for the identified twin, rad.
    """

    joint: str
    nominal: float
    identified: float

    @property
    def closed(self) -> float:
        """Share of the nominal gap the identified file closes (1: all, < 0: wider)."""
        return 1.0 - self.identified / self.nominal if self.nominal > 0 else float("nan")


@dataclass(frozen=True)
class GapReport:
    """The gap of every joint over every recording (see the module docstring)."""

    robot: str
    joints: tuple[JointGap, ...]
    recordings: tuple[ServoTrace, ...]
    nominal: tuple[ServoTrace, ...]
    identified: tuple[ServoTrace, ...]

    @property
    def closed(self) -> float:
        """Share of the whole gap closed: ``1 − ‖identified‖ / ‖nominal‖`` over all joints."""
        nominal = np.sqrt(sum(g.nominal**2 for g in self.joints))
        identified = np.sqrt(sum(g.identified**2 for g in self.joints))
        return float(1.0 - identified / nominal) if nominal > 0 else float("nan")

    def summary(self) -> str:
        """One line per joint and the total, in degrees."""
        lines = [
            f"gap of {self.robot!r} over {len(self.recordings)} recording(s): RMS of "
            "twin minus recording, deg",
            "  joint            nominal  identified  closed",
        ]
        for g in self.joints:
            lines.append(
                f"  {g.joint:<15}  {np.degrees(g.nominal):7.3f}  "
                f"{np.degrees(g.identified):10.3f}  {100 * g.closed:5.0f} %"
            )
        lines.append(f"  share of the gap closed: {100 * self.closed:.0f} %")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def figure(self, joint: str, recording: int = 0) -> object:
        """A figure of ``joint`` in recording ``recording``: positions, then differences."""
        from matplotlib.figure import Figure

        j = list(self.recordings[0].joints).index(joint)
        rec, nom, ide = (
            self.recordings[recording],
            self.nominal[recording],
            self.identified[recording],
        )
        t = rec.time - rec.time[0]
        fig = Figure(figsize=(8.0, 5.5))
        top, bottom = fig.subplots(2, 1, sharex=True)
        top.plot(t, np.degrees(rec.goal[:, j]), color="0.6", linestyle="--", label="goal")
        top.plot(t, np.degrees(rec.position[:, j]), color="k", label="recorded")
        top.plot(t, np.degrees(nom.position[:, j]), color="tab:red", label="nominal twin")
        top.plot(t, np.degrees(ide.position[:, j]), color="tab:blue", label="identified twin")
        top.set_ylabel(f"{joint} (deg)")
        bottom.plot(t, np.degrees(nom.position[:, j] - rec.position[:, j]), color="tab:red")
        bottom.plot(t, np.degrees(ide.position[:, j] - rec.position[:, j]), color="tab:blue")
        bottom.set_ylabel("twin − recorded (deg)")
        bottom.set_xlabel("time (s)")
        gap = self.joints[j]
        fig.suptitle(
            f"{self.robot} {joint}: gap {np.degrees(gap.nominal):.2f}° -> "
            f"{np.degrees(gap.identified):.2f}° ({100 * gap.closed:.0f} % closed)",
            y=0.995,
        )
        fig.legend(
            *top.get_legend_handles_labels(),
            loc="upper center",
            ncol=4,
            bbox_to_anchor=(0.5, 0.955),
            frameon=False,
        )
        fig.subplots_adjust(top=0.86, hspace=0.12)
        return fig

    def save_figures(self, folder: str | Path) -> list[Path]:
        """One PNG per joint (``gap-<joint>.png``) of the first recording in ``folder``."""
        from jointlab.recording.plots import save

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        return [save(self.figure(g.joint), folder / f"gap-{g.joint}.png") for g in self.joints]


def gap_report(
    nominal: RobotDescription | str,
    identified: RobotDescription | str,
    recordings: Sequence[ServoTrace],
    *,
    p_registers: Sequence[float] | None = None,
    nominal_replays: Sequence[ServoTrace] | None = None,
) -> GapReport:
    """Replay ``recordings`` on both twins and measure the gap of each (module docstring).

    Args:
        nominal: The robot file before identification.
        identified: The identified robot file (same joints).
        recordings: The arm's recordings.
        p_registers: P register of each servo while recording (default: the files' gains).
        nominal_replays: The nominal twin's replays, when already run (identification does).

    Raises:
        IdentificationError: no recordings, or files of other joints.
    """
    nominal, identified = load_robot(nominal), load_robot(identified)
    if not recordings:
        raise IdentificationError("gap: no recording to compare with")
    if nominal.joint_names != identified.joint_names:
        raise IdentificationError(
            f"gap: {identified.name!r} has joints {list(identified.joint_names)}, "
            f"{nominal.name!r} has {list(nominal.joint_names)}"
        )
    if nominal_replays is None:
        nominal_replays = [replay_on_twin(nominal, r, p_registers=p_registers) for r in recordings]
    identified_replays = [
        replay_on_twin(identified, r, p_registers=p_registers) for r in recordings
    ]

    def rms(replays: Sequence[ServoTrace]) -> np.ndarray:
        pairs = zip(replays, recordings, strict=True)
        difference = np.concatenate([p.position - r.position for p, r in pairs])
        return np.sqrt(np.mean(difference**2, axis=0))

    nominal_rms, identified_rms = rms(nominal_replays), rms(identified_replays)
    joints = tuple(
        JointGap(joint=name, nominal=float(nominal_rms[j]), identified=float(identified_rms[j]))
        for j, name in enumerate(nominal.joint_names)
    )
    return GapReport(
        robot=nominal.name,
        joints=joints,
        recordings=tuple(recordings),
        nominal=tuple(nominal_replays),
        identified=tuple(identified_replays),
    )
