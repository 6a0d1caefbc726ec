"""From a recorded log to the aligned arrays identification works on.

A log row ``k`` (written by :func:`jointlab.controllers.run` or :func:`jointlab.program.run_program`
through a :class:`~jointlab.recording.Recorder`) holds the state at the start of control period
``k`` (``state.*``), the action the controller asked for (``desired.*``) and the torque the
robot applied during the period (``applied.torque``). :class:`IdentificationData` lines them
up so that row ``k`` reads: state ``q[k]``, ``qd[k]``; the acceleration the period produced,
``(qd[k+1] − qd[k]) / dt``; the torque applied during it and the motor current that carried
it (``state.current[k+1]``). The last row, rows where the robot was disarmed, unpowered or
braked, and rows with missing values are marked unusable. A host that fell behind its device
leaves gaps of whole control periods between rows: replays step through them, the fits use
only rows one period apart (:attr:`IdentificationData.regular`).

Identification is exact at ``control_dt == dt`` (one physics step or device tick per row);
with longer control periods the torque and acceleration are those of the period's last
physics step and its average, a good approximation for slow excitations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.signal import butter, sosfiltfilt

from jointlab.identify.errors import IdentificationError
from jointlab.recording import Log, load_log
from jointlab.robots import RobotDescription, load_robot

__all__ = ["MIN_ROWS", "Commands", "IdentificationData", "prepare"]

#: Fewest usable rows a log must have.
MIN_ROWS = 200
#: The command to record an excitation log with, for error messages.
RECORD_HINT = (
    "record one with `jointlab identify excite ROBOT URL` or jointlab.identify.record_excitation()"
)


@dataclass(frozen=True, eq=False)
class Commands:
    """The desired actions of a log, checked once (NaN semantics of ``NJointAction``).

    Every array has shape ``(T, dof)``.
    """

    #: Feed-forward torque, N·m or N (finite).
    torque: np.ndarray
    #: Position target, rad or m; NaN where the PD was off.
    position: np.ndarray
    #: P gain, N·m/rad; NaN for the robot's default.
    kp: np.ndarray
    #: D gain, N·m·s/rad; NaN for the robot's default.
    kd: np.ndarray
    #: Velocity target, rad/s; NaN for 0.
    velocity: np.ndarray

    def command_torque(
        self, q: np.ndarray, qd: np.ndarray, default_kp: np.ndarray, default_kd: np.ndarray
    ) -> np.ndarray:
        """``torque + kp·(position − q) + kd·(velocity − qd)`` row by row, shape ``(T, dof)``.

        Exactly the law every backend evaluates (before latency and saturation).
        """
        pd = ~np.isnan(self.position)
        kp = np.where(np.isnan(self.kp), default_kp, self.kp)
        kd = np.where(np.isnan(self.kd), default_kd, self.kd)
        velocity = np.where(np.isnan(self.velocity), 0.0, self.velocity)
        feedback = kp * (np.where(pd, self.position, q) - q) + kd * (velocity - qd)
        return self.torque + np.where(pd, feedback, 0.0)


@dataclass(frozen=True, eq=False)
class IdentificationData:
    """A log's rows aligned for identification (see the module docstring).

    Joint-space arrays have shape ``(T, dof)`` in the description's joint order.
    """

    #: The robot the log was recorded on, as the host described it.
    description: RobotDescription
    #: Row times, seconds, shape ``(T,)``.
    time: np.ndarray
    #: Control period of the log (row spacing), seconds.
    dt: float
    #: Physics step or device tick, seconds (``motor.delay`` counts these).
    physics_dt: float
    #: Joint positions, rad or m.
    position: np.ndarray
    #: Joint velocities, rad/s or m/s.
    velocity: np.ndarray
    #: Acceleration over each row's period (from ``smooth_velocity``), rad/s² or m/s² (NaN
    #: in the last row).
    acceleration: np.ndarray
    #: Torque applied during each row's period, N·m or N.
    torque: np.ndarray
    #: Motor current during each row's period, A; ``None`` when the log has none.
    current: np.ndarray | None
    #: The desired actions; ``None`` when the log has no ``desired`` channel.
    commands: Commands | None
    #: Rows usable for identification, shape ``(T,)``.
    usable: np.ndarray
    #: Control periods each row spans until the next one (1 unless the recorder missed some),
    #: shape ``(T,)``.
    periods: np.ndarray
    #: The log file, if any (for messages).
    source: str
    #: ``velocity``, ``torque`` and ``current`` after the low-pass (the same arrays without
    #: one): what the regressions use. Latency, saturation and replay use the raw ones.
    smooth_velocity: np.ndarray
    smooth_torque: np.ndarray
    smooth_current: np.ndarray | None

    @property
    def dof(self) -> int:
        """Number of joints."""
        return self.description.dof

    @property
    def rows(self) -> int:
        """Number of rows."""
        return int(self.time.shape[0])

    @property
    def regular(self) -> np.ndarray:
        """Usable rows that span exactly one control period, shape ``(T,)``."""
        return self.usable & (self.periods == 1)


def _column(log: Log, key: str, dof: int, source: str, why: str) -> np.ndarray:
    if key not in log:
        raise IdentificationError(
            f"{source}: the log has no column {key!r}, needed {why}; its fields are "
            f"{list(log.keys())}; {RECORD_HINT}"
        )
    array = np.asarray(log[key], dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != dof:
        raise IdentificationError(
            f"{source}: {key!r} has {array.shape[1] if array.ndim == 2 else 1} values per row, "
            f"expected {dof} (one per joint)"
        )
    return array


def _flag(log: Log, key: str, default: bool) -> np.ndarray:
    if key not in log:
        return np.full(len(log), default)
    values = np.asarray(log[key], dtype=np.float64).reshape(len(log), -1)[:, 0]
    return np.nan_to_num(values, nan=0.0) > 0.5


def _lowpass(values: np.ndarray, cutoff: float, rate: float) -> np.ndarray:
    """Zero-phase Butterworth low-pass per column; NaN cells bridged, and kept NaN."""
    missing = ~np.isfinite(values)
    filled = np.array(values)
    rows = np.arange(values.shape[0])
    for column in np.flatnonzero(missing.any(axis=0)):
        known = ~missing[:, column]
        if known.any():
            filled[:, column] = np.interp(rows, rows[known], values[known, column])
        else:
            filled[:, column] = 0.0
    sos = butter(4, cutoff, fs=rate, output="sos")
    return np.where(missing, np.nan, sosfiltfilt(sos, filled, axis=0))


def _commands(log: Log, dof: int, source: str) -> Commands | None:
    keys = ("torque", "position", "position_kp", "position_kd", "velocity")
    if not all(f"desired.{key}" in log for key in keys):
        return None
    arrays = [_column(log, f"desired.{key}", dof, source, "") for key in keys]
    if np.any(arrays[2] < 0) or np.any(arrays[3] < 0):
        raise IdentificationError(f"{source}: desired gains must be >= 0 or NaN")
    return Commands(*arrays)


def prepare(
    log: Log | str | Path,
    description: RobotDescription | str,
    *,
    physics_dt: float | None = None,
    cutoff: float | None = None,
    default_cutoff: bool = False,
) -> IdentificationData:
    """Check a log against a description and align its rows (module docstring).

    Args:
        log: A loaded :class:`~jointlab.recording.Log` or a log file path.
        description: The robot file the log was recorded with (the nominal one).
        physics_dt: Physics step / device tick in seconds; default the log's
            ``metadata.extra["physics_dt"]``, else its control period.
        cutoff: Zero-phase low-pass (4th-order Butterworth) on velocity, torque and current
            for the regressions (and before differentiating), Hz; ``None`` filters nothing.
        default_cutoff: ``cutoff`` is a default, not the user's: on a log too slow for it
            (at most ``2·cutoff`` rows per second) filter nothing instead of refusing.

    Raises:
        IdentificationError: missing columns, another robot's log, a reset inside the log,
            uneven row times or too few usable rows.
    """
    if not isinstance(log, Log):
        log = load_log(log)
    description = load_robot(description)
    source = str(log.source) if log.source is not None else "<log>"
    dof = description.dof
    names = log.metadata.joint_names
    if names is not None and tuple(names) != description.joint_names:
        raise IdentificationError(
            f"{source}: recorded on joints {list(names)}, but robot {description.name!r} has "
            f"joints {list(description.joint_names)}; pass the robot file the log was recorded "
            "with"
        )
    time = np.asarray(log.time, dtype=np.float64)
    if time.shape[0] < MIN_ROWS:
        raise IdentificationError(
            f"{source}: the log has {time.shape[0]} rows, fewer than the {MIN_ROWS} "
            f"identification needs; {RECORD_HINT}"
        )
    steps = np.diff(time)
    if np.any(steps <= 0):
        row = int(np.flatnonzero(steps <= 0)[0]) + 1
        raise IdentificationError(
            f"{source}: time goes from {time[row - 1]:.6g} s to {time[row]:.6g} s at row {row} "
            "(a reset or two runs in one log); identify one run at a time"
        )
    # The control period: the log's own (a host late in most periods, as a real-time run on
    # a busy machine is, makes the typical step a multiple of it), else the typical step.
    logged = getattr(log.metadata, "dt", None)
    dt = float(logged) if logged and np.min(steps) > 0.75 * logged else float(np.median(steps))
    periods = np.round(steps / dt)
    if np.any(np.abs(steps - periods * dt) > 0.25 * dt):
        row = int(np.flatnonzero(np.abs(steps - periods * dt) > 0.25 * dt)[0]) + 1
        raise IdentificationError(
            f"{source}: rows are not a whole number of control periods apart: {steps[row - 1]:.6g}"
            f" s before row {row}, {dt:.6g} s typically; identification needs the robot's own "
            "time (state.time) in the time column"
        )
    why_state = "for the joint motion"
    position = _column(log, "state.position", dof, source, why_state)
    velocity = _column(log, "state.velocity", dof, source, why_state)
    if "applied.torque" in log:
        torque = _column(log, "applied.torque", dof, source, "")
    else:
        state_torque = _column(log, "state.torque", dof, source, "for the applied torque")
        torque = np.vstack([state_torque[1:], np.full((1, dof), np.nan)])
    current = None
    if "state.current" in log:
        state_current = _column(log, "state.current", dof, source, "")
        current = np.vstack([state_current[1:], np.full((1, dof), np.nan)])
    commands = _commands(log, dof, source)
    if physics_dt is None:
        physics_dt = float(log.metadata.extra.get("physics_dt") or dt)
    if not (math.isfinite(physics_dt) and 0 < physics_dt <= dt * (1 + 1e-9)):
        raise IdentificationError(
            f"{source}: physics_dt {physics_dt!r} s must be > 0 and at most the control period "
            f"{dt:.6g} s"
        )
    nyquist = 0.5 / dt
    if cutoff is not None and default_cutoff and cutoff >= nyquist:
        cutoff = None
    if cutoff is not None:
        if not 0 < cutoff < nyquist:
            raise IdentificationError(
                f"cutoff {cutoff!r} Hz must lie in (0, {nyquist:.6g}) Hz (half the log's rate)"
            )
    smooth = (
        (lambda values: values)
        if cutoff is None
        else (lambda values: _lowpass(values, cutoff, 1.0 / dt))
    )
    smooth_velocity = smooth(velocity)
    acceleration = np.vstack(
        [np.diff(smooth_velocity, axis=0) / steps[:, None], np.full((1, dof), np.nan)]
    )
    usable = (
        _flag(log, "state.armed", True)
        & _flag(log, "state.motor_power", True)
        & ~_flag(log, "state.brakes", False)
        & np.all(np.isfinite(position) & np.isfinite(velocity), axis=1)
        & np.all(np.isfinite(acceleration) & np.isfinite(torque), axis=1)
    )
    if commands is not None:
        usable &= np.all(np.isfinite(commands.torque), axis=1)
    # A row followed by missed periods (a host that fell behind its device) has no torque
    # for the rows it spans: replay steps through it, the fits leave it out.
    spans = np.append(periods, 1.0).astype(np.int64)
    if int(usable.sum()) < MIN_ROWS:
        raise IdentificationError(
            f"{source}: only {int(usable.sum())} rows were recorded with the robot armed, "
            f"powered and unbraked; identification needs at least {MIN_ROWS}; {RECORD_HINT}"
        )
    return IdentificationData(
        description=description,
        time=time,
        dt=dt,
        physics_dt=float(physics_dt),
        position=position,
        velocity=velocity,
        acceleration=acceleration,
        torque=torque,
        current=current,
        commands=commands,
        usable=usable,
        periods=spans,
        source=source,
        smooth_velocity=smooth_velocity,
        smooth_torque=smooth(torque),
        smooth_current=None if current is None else smooth(current),
    )
