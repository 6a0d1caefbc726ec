"""The acceptance run an owner performs on a servo arm, and the same run on its twin.

:func:`run_acceptance` drives a connected servo arm (``feetech://``, ``dynamixel://`` or
``emulated://``) through a fixed, small procedure and measures:

* **bus health**: every servo's model, firmware, voltage, temperature, load and error bits,
  ping round trips (:func:`~jointlab.hardware.servo_host.survey.survey`);
* **droop** at three poses (home and two bends of the shoulder, elbow and wrist) under the
  P registers in force: the held position minus the goal, beside the analytic droop of a
  P-only loop (:func:`~jointlab.hardware.servo_host.droop.holding_droop`);
* **a small step on each joint** (``step`` rad): rise time (10-90 %), overshoot and the
  settling error;
* **backlash by reversal**: the same goal approached from above and from below; the
  difference of the settled positions is the lost motion (backlash plus the friction band);
* **sync-read latency**: wall-clock round trips of the Sync Read of every servo's state.

Safe by construction: the arm is armed through the one arming path (it holds its pose),
every motion is a minimum-jerk move at most ``speed`` rad/s to goals inside the joint limits
(with a margin), steps are small, and the run stops, holds and disarms on the first servo
error bit, a lost servo, or a load above ``max_load`` of the torque limit for
:data:`LOAD_TIME` (the report says which and why).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from jointlab.errors import JointLabError
from jointlab.faults import hold_then_disarm
from jointlab.interface import NJointAction

__all__ = ["AcceptanceReport", "JointStep", "acceptance_poses", "run_acceptance", "side_by_side"]

#: Share of each joint's range kept clear of its limits.
MARGIN = 0.1
#: Seconds a joint may stay above the load limit before the run stops.
LOAD_TIME = 0.3


@dataclass(frozen=True)
class JointStep:
    """One joint's step response and reversal.

    Attributes:
        joint: Joint name.
        rise: 10-90 % rise time, s (NaN when it never reached 90 %).
        overshoot: Overshoot beyond the step, share of the step.
        settling: Settled position minus goal, rad.
        backlash: Settled position approached from above minus from below, rad.
    """

    joint: str
    rise: float
    overshoot: float
    settling: float
    backlash: float


@dataclass(frozen=True)
class AcceptanceReport:
    """What :func:`run_acceptance` measured (angles in rad, times in s)."""

    url: str
    robot: str
    survey: object
    poses: np.ndarray
    droop: np.ndarray
    predicted_droop: np.ndarray
    steps: tuple[JointStep, ...]
    sync_read_ms: np.ndarray
    fault: str | None = None
    p_registers: tuple[int, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        """True when the run finished without a fault."""
        return self.fault is None

    def summary(self) -> str:
        """The report as text (degrees, ms)."""
        lines = [f"acceptance of {self.robot!r} at {self.url}"]
        rows = getattr(self.survey, "rows", ())
        for r in rows:
            errors = ", ".join(r.errors) or "none"
            lines.append(
                f"  servo {r.id} {r.joint}: {r.model} fw {r.firmware}, {r.voltage:.1f} V, "
                f"{r.temperature:.0f} °C, load {r.load:.1f} {r.load_unit}, errors: "
                f"{errors}"
            )
        if len(self.sync_read_ms):
            lines.append(
                f"  sync read: median {np.median(self.sync_read_ms):.2f} ms, p99 "
                f"{np.percentile(self.sync_read_ms, 99):.2f} ms"
            )
        for k, pose in enumerate(self.droop):
            values = " ".join(f"{np.degrees(v):+.2f}" for v in pose)
            predicted = " ".join(f"{np.degrees(v):+.2f}" for v in self.predicted_droop[k])
            lines.append(f"  droop at pose {k + 1} (deg): {values}  (P-only model: {predicted})")
        for s in self.steps:
            lines.append(
                f"  step {s.joint}: rise {1e3 * s.rise:.0f} ms, overshoot "
                f"{100 * s.overshoot:.0f} %, settling {np.degrees(s.settling):+.2f}°, "
                f"backlash {np.degrees(s.backlash):.2f}°"
            )
        lines.append("  result: " + ("passed" if self.passed else f"stopped: {self.fault}"))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def acceptance_poses(description: object) -> np.ndarray:
    """Three poses: home raised off the table, then its shoulder, elbow and wrist bent.

    Raised: the shoulder lift and the elbow 0.3 rad back from home (where an arm rests on
    its table); bent: the shoulder and wrist 0.2 rad each way, the elbow against them.
    """
    home = np.asarray(description.home, dtype=np.float64)  # type: ignore[attr-defined]
    raise_, bend = np.zeros_like(home), np.zeros_like(home)
    names = list(description.joint_names)  # type: ignore[attr-defined]
    for k, name in enumerate(names):
        if "shoulder_lift" in name or "elbow" in name:
            raise_[k] = -0.3
        if any(word in name for word in ("shoulder_lift", "elbow", "wrist_flex")):
            bend[k] = 0.2 if "elbow" not in name else -0.2
    base = home + raise_
    return np.stack([base, base + bend, base - bend])


class _Stop(Exception):
    """The procedure met a fault; the message says which servo and why."""


class _Driver:
    """The procedure's motion: checked moves and holds on a servo arm."""

    def __init__(self, robot: object, speed: float, max_load: float) -> None:
        self.robot = robot
        d = robot.description  # type: ignore[attr-defined]
        self.description = d
        span = d.upper - d.lower
        self.low, self.high = d.lower + MARGIN * span, d.upper - MARGIN * span
        self.speed = speed
        self.limit = max_load * np.asarray(d.effort_limit, dtype=np.float64)
        self.dt = float(robot.control_dt)  # type: ignore[attr-defined]
        self.loaded_for = np.zeros(len(self.limit))

    def check(self, state: object) -> None:
        """Stop on a servo error bit, or a load above the limit for :data:`LOAD_TIME`."""
        errors = (
            np.asarray(state.extras.get("hardware_error", 0)) if hasattr(state, "extras") else 0
        )
        names = self.description.joint_names
        if np.any(errors):
            j = int(np.flatnonzero(np.atleast_1d(errors))[0])
            raise _Stop(
                f"servo of joint {names[j]!r} reports hardware error bits "
                f"{int(np.atleast_1d(errors)[j]):#04x}"
            )
        over = np.abs(state.torque) > self.limit
        self.loaded_for = np.where(over, self.loaded_for + self.dt, 0.0)
        loaded = self.loaded_for >= LOAD_TIME
        if np.any(loaded):
            j = int(np.flatnonzero(loaded)[0])
            raise _Stop(
                f"joint {names[j]!r} loaded {abs(state.torque[j]):.2f} N·m, above "
                f"{self.limit[j]:.2f} N·m: lighten the arm, free the joint"
            )

    def hold(self, goal: np.ndarray, seconds: float) -> np.ndarray:
        """Hold ``goal``; the positions of every period, ``(n, dof)``."""
        goal = np.clip(goal, self.low, self.high)
        out = []
        for _ in range(max(1, round(seconds / self.dt))):
            self.robot.apply(NJointAction.Position(goal))  # type: ignore[attr-defined]
            self.robot.step()  # type: ignore[attr-defined]
            state = self.robot.read()  # type: ignore[attr-defined]
            self.check(state)
            out.append(state.position.copy())
        return np.array(out)

    def move(self, goal: np.ndarray) -> None:
        """A minimum-jerk move to ``goal`` at most ``speed`` rad/s."""
        start = self.robot.read().position.copy()  # type: ignore[attr-defined]
        goal = np.clip(goal, self.low, self.high)
        distance = float(np.max(np.abs(goal - start)))
        duration = max(self.dt, 1.875 * distance / self.speed)  # peak speed of minimum jerk
        steps = max(1, int(np.ceil(duration / self.dt)))
        for k in range(1, steps + 1):
            s = k / steps
            blend = 10 * s**3 - 15 * s**4 + 6 * s**5
            self.hold(start + blend * (goal - start), self.dt)


def _step_response(t: np.ndarray, q: np.ndarray, start: float, goal: float) -> tuple[float, ...]:
    """Rise time (10-90 %), overshoot (share) and settling error (rad) of one step."""
    size = goal - start
    progress = (q - start) / size
    rise = float("nan")
    above10 = np.flatnonzero(progress >= 0.1)
    above90 = np.flatnonzero(progress >= 0.9)
    if len(above10) and len(above90):
        rise = float(t[above90[0]] - t[above10[0]])
    overshoot = max(0.0, float(np.max(progress)) - 1.0)
    settled = float(np.mean(q[-max(1, len(q) // 5) :]))
    return rise, overshoot, settled - goal


def run_acceptance(
    robot: object,
    *,
    url: str = "",
    joints: Sequence[str] | None = None,
    step: float = np.radians(5.0),
    settle: float = 0.5,
    speed: float = 0.5,
    max_load: float = 0.9,
    sync_reads: int = 50,
) -> AcceptanceReport:
    """Run the acceptance procedure (module docstring) on a connected servo arm.

    Args:
        robot: A connected, calibrated :class:`~jointlab.hardware.servo_host.robot.ServoBusRobot`
            (disarmed: it is armed here and disarmed at the end).
        url: Its URL, for the report.
        joints: Joints to step (default: all).
        step: Step size, rad (small: at most 0.2).
        settle: Seconds each step and hold lasts.
        speed: Largest joint speed of the moves between poses, rad/s.
        max_load: Stop when a joint's torque exceeds this share of its effort limit.
        sync_reads: Sync Reads timed.
    """
    from jointlab.hardware.servo_host.droop import holding_droop
    from jointlab.hardware.servo_host.survey import survey

    description = robot.description  # type: ignore[attr-defined]
    names = list(description.joint_names)
    chosen = names if joints is None else list(joints)
    for name in chosen:
        if name not in names:
            raise JointLabError(f"acceptance: no joint {name!r}; joints: {names}")
    step = float(min(abs(step), 0.2))
    poses = acceptance_poses(description)
    droop = np.full((len(poses), len(names)), np.nan)
    predicted = np.full_like(droop, np.nan)
    steps: list[JointStep] = []
    latency: list[float] = []
    fault = None
    bus = survey(robot)
    broken = [r for r in bus.rows if r.errors]
    models = robot.models  # type: ignore[attr-defined]
    p = tuple(int(robot.read_register(j, "position_p_gain")) for j in range(len(names)))  # type: ignore[attr-defined]
    if broken:
        fault = f"servo {broken[0].id} ({broken[0].joint}) reports {', '.join(broken[0].errors)}"
        return AcceptanceReport(
            url=url,
            robot=description.name,
            survey=bus,
            poses=poses,
            droop=droop,
            predicted_droop=predicted,
            steps=(),
            sync_read_ms=np.zeros(0),
            fault=fault,
            p_registers=p,
        )
    drive = _Driver(robot, speed, max_load)
    robot.arm()  # type: ignore[attr-defined]
    try:
        p = tuple(int(robot.read_register(j, "position_p_gain")) for j in range(len(names)))  # type: ignore[attr-defined]
        for k, pose in enumerate(poses):
            goal = np.clip(pose, drive.low, drive.high)
            drive.move(goal)
            held = drive.hold(goal, settle)
            q = np.mean(held[-max(1, len(held) // 3) :], axis=0)
            droop[k] = q - goal
            predicted[k] = holding_droop(description, models, p, q).droop
        base = np.clip(poses[0], drive.low, drive.high)
        drive.move(base)
        drive.hold(base, settle)
        for name in chosen:
            j = names.index(name)
            up = base.copy()
            up[j] += step
            q = drive.hold(up, settle)[:, j]
            t = np.arange(1, len(q) + 1) * drive.dt
            rise, overshoot, settling = _step_response(t, q, float(base[j]), float(up[j]))
            above = drive.hold(base, settle)[:, j]
            down = base.copy()
            down[j] -= step
            drive.hold(down, settle)
            below = drive.hold(base, settle)[:, j]
            tail = max(1, len(above) // 5)
            backlash = float(np.mean(above[-tail:]) - np.mean(below[-tail:]))
            steps.append(
                JointStep(
                    joint=name, rise=rise, overshoot=overshoot, settling=settling, backlash=backlash
                )
            )
        driver = robot.driver  # type: ignore[attr-defined]
        register = models[0].table["present_position"]
        ids = list(robot.servo_ids)  # type: ignore[attr-defined]
        for _ in range(sync_reads):
            start = time.perf_counter()
            driver.sync_read(register.address, register.size, ids)
            latency.append((time.perf_counter() - start) * 1e3)
    except _Stop as stop:
        fault = str(stop)
    except JointLabError as exc:
        fault = f"{type(exc).__name__}: {exc}"
    finally:
        # Every ending, a fault or not, as the one rule ends a run (jointlab.faults): the
        # present pose held against gravity for one period, then disarmed, never raising.
        hold_then_disarm(robot)  # type: ignore[arg-type]
    return AcceptanceReport(
        url=url,
        robot=description.name,
        survey=bus,
        poses=poses,
        droop=droop,
        predicted_droop=predicted,
        steps=tuple(steps),
        sync_read_ms=np.array(latency),
        fault=fault,
        p_registers=p,
    )


def side_by_side(arm: AcceptanceReport, twin: AcceptanceReport) -> list[tuple[str, ...]]:
    """Rows comparing the arm with its twin: quantity, joint, arm, twin, P-only model."""
    rows: list[tuple[str, ...]] = []
    joints = list(getattr(arm.survey, "rows", ()))
    for k in range(len(arm.droop)):
        for j, row in enumerate(joints):
            rows.append(
                (
                    f"droop pose {k + 1} (deg)",
                    row.joint,
                    f"{np.degrees(arm.droop[k, j]):+.2f}",
                    f"{np.degrees(twin.droop[k, j]):+.2f}",
                    f"{np.degrees(arm.predicted_droop[k, j]):+.2f}",
                )
            )
    twin_steps = {s.joint: s for s in twin.steps}
    for s in arm.steps:
        t = twin_steps.get(s.joint)
        if t is None:
            continue
        rows.append(("rise (ms)", s.joint, f"{1e3 * s.rise:.0f}", f"{1e3 * t.rise:.0f}", ""))
        rows.append(
            ("overshoot (%)", s.joint, f"{100 * s.overshoot:.0f}", f"{100 * t.overshoot:.0f}", "")
        )
        rows.append(
            (
                "settling (deg)",
                s.joint,
                f"{np.degrees(s.settling):+.2f}",
                f"{np.degrees(t.settling):+.2f}",
                "",
            )
        )
        rows.append(
            (
                "backlash (deg)",
                s.joint,
                f"{np.degrees(s.backlash):.2f}",
                f"{np.degrees(t.backlash):.2f}",
                "",
            )
        )
    if len(arm.sync_read_ms) and len(twin.sync_read_ms):
        rows.append(
            (
                "sync read p50 (ms)",
                "bus",
                f"{np.median(arm.sync_read_ms):.2f}",
                f"{np.median(twin.sync_read_ms):.2f}",
                "",
            )
        )
    return rows
