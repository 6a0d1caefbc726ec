"""Calibration procedures: manual (a person moves each joint to its limits) and automatic homing.

Both run on a :class:`~jointlab.hardware.servo_host.robot.ServoBusRobot` connected without a
calibration and return a :class:`~jointlab.hardware.servo_host.calibration.Calibration`.

* :func:`calibrate_manual`: every servo limp; for each joint the person moves it to its
  minimum, then to its maximum (the robot file's ``min``/``max``), and confirms; the two
  encoder readings give the direction (which way the ticks went), the offset (the ticks at
  joint zero, from the minimum reading) and the range.
* :func:`calibrate_automatic`: stall-based homing against the hard stops, one push at a
  time while the other joints hold a pose: the joint is pushed slowly towards each end until
  it stops moving; the two stall readings give the range, and, with the direction of the
  robot file's transmission, the offset (the stop at the file's ``min`` is joint angle
  ``min``). The measured span is checked against the file's range.

**Poses.** :func:`plan_pushes` starts every push with the joint at the middle of its range
and the others at the zero pose, or, where that push (or the move to its start) would bring a
frame within :data:`CLEARANCE` of the table, at the nearest pose that keeps the arm clear.

**Safety.** A joint pushes towards a stop only with its servo's torque limit (Feetech
Torque Limit, Dynamixel PWM Limit) at the safe fraction of stall, :data:`SAFE_FRACTION` of
its model (at most 25 %, so a joint pushing a 3D-printed stop cannot crack it), plus the
largest gravity torque the arm model predicts the joint must lift on its way there (0 where
gravity helps), at most 100 %: the limit bounds the push onto the stop beyond the arm's own
weight there, not the lifting (at a bare 20 % the SO-101's shoulder could not lift the arm
off its first stop). A larger fraction must be asked for, and more than 100 % is refused.
The other joints hold their pose with their own limits.
The stall detector watches every bus cycle: the cycle that finds the joint stalled (it moved
less than ``STALL_TICKS`` over ``STALL_WINDOW``) is followed at once, before the next cycle,
by a hold where the joint is (Goal Position = Present Position), so the servo stops pushing
within one period.

The calibrated range keeps ``margin`` ticks off each stop so that commands never hit them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.hardware.servo_host.calibration import Calibration, JointCalibration
from jointlab.robots.description import RobotDescription
from jointlab.robots.dynamics import DynamicsModel
from jointlab.robots.kinematics import forward_kinematics

__all__ = [
    "SAFE_FRACTION",
    "Push",
    "calibrate_automatic",
    "calibrate_manual",
    "plan_pushes",
    "safe_fraction",
]

#: Default homing torque per servo model, a fraction of its stall torque (documented in
#: docs/calibration.md). STS3215: 20 % of 2.94 N m = 0.59 N m; XL430-W250: 25 % of 1.4 N m =
#: 0.35 N m; XL330-M288: 25 % of 0.52 N m = 0.13 N m.
SAFE_FRACTION = {"sts3215": 0.20, "xl430-w250": 0.25, "xl330-m288": 0.25}
#: The default of a model not in :data:`SAFE_FRACTION`.
DEFAULT_FRACTION = 0.25

#: Poses along a push at which its clearance and gravity load are checked.
PATH_POINTS = 21
#: Values per joint tried for the joints that hold while one is homed (see ``_hold_pose``).
GRID = 7
#: Height above the table (world z = 0) every frame keeps during a push, m.
CLEARANCE = 0.04

#: Ticks kept off each hard stop in the calibrated range.
MARGIN = 12
#: A joint has stalled when it moved less than this many ticks over ``STALL_WINDOW`` seconds
#: (after pushing for at least that long: a joint needs a moment to start moving).
STALL_TICKS = 2
STALL_WINDOW = 0.25
#: Seconds without motion that end a move that is not a push (to a pose, back from a stop).
SETTLE_WINDOW = 1.0


def _result(
    robot: Any,
    method: str,
    lo: np.ndarray,
    hi: np.ndarray,
    offset: np.ndarray,
    direction: np.ndarray,
    margin: int,
) -> Calibration:
    description = robot.description
    joints = tuple(
        JointCalibration(
            joint=name,
            id=int(robot.servo_ids[i]),
            offset=float(offset[i]),
            direction=int(direction[i]),
            min_ticks=int(lo[i]) + margin,
            max_ticks=int(hi[i]) - margin,
        )
        for i, name in enumerate(description.joint_names)
    )
    return Calibration(
        robot=description.name,
        protocol=description.bus.protocol.value,
        method=method,
        joints=joints,
        created=Calibration.now(),
    )


def _scale(robot: Any) -> np.ndarray:
    """Unsigned ticks per joint radian of each joint (from the robot file's transmissions)."""
    return np.abs(robot.description.transmissions.scale)


def calibrate_manual(
    robot: Any, prompt: Callable[[str], object], margin: int = MARGIN
) -> Calibration:
    """Calibrate with a person moving each joint to its limits (see the module docstring).

    Args:
        robot: A connected, disarmed ServoBusRobot.
        prompt: Called with an instruction; returns when the person has done it (the CLI
            waits for Enter).
        margin: Ticks kept off each limit in the calibrated range.

    Raises:
        ConfigurationError: a joint did not move between its two readings.
    """
    if robot.armed:
        robot.disarm()
    description = robot.description
    n = description.dof
    first, second = np.zeros(n), np.zeros(n)
    for i, name in enumerate(description.joint_names):
        prompt(
            f"move {name} (servo id {robot.servo_ids[i]}) to its minimum "
            f"({description.lower[i]:+.3f} rad) and hold it there"
        )
        first[i] = robot.idle_cycle().extras["ticks"][i]
        prompt(f"move {name} to its maximum ({description.upper[i]:+.3f} rad)")
        second[i] = robot.idle_cycle().extras["ticks"][i]
    moved = np.abs(second - first)
    if np.any(moved < 2 * margin):
        i = int(np.argmin(moved))
        raise ConfigurationError(
            f"joint {description.joint_names[i]!r} (servo id {robot.servo_ids[i]}) moved only "
            f"{moved[i]:.0f} ticks between its minimum and maximum; move it all the way"
        )
    direction = np.sign(second - first)
    offset = first - direction * _scale(robot) * description.lower
    lo, hi = np.minimum(first, second), np.maximum(first, second)
    return _result(robot, "manual", lo, hi, offset, direction, margin)


def _profile(robot: Any, i: int, speed: float) -> tuple[str, int]:
    """The register limiting servo ``i``'s setpoint speed, and its count for ``speed`` rad/s."""
    table = robot.models[i].table
    name = "profile_velocity" if "profile_velocity" in table else "goal_velocity"
    counts = speed * _scale(robot)[i] / robot.models[i].ticks_per_radian / table[name].unit
    return name, max(1, round(counts))


def safe_fraction(robot: Any) -> float:
    """The homing torque of ``robot``'s bus: the smallest :data:`SAFE_FRACTION` of its models."""
    return min(SAFE_FRACTION.get(m.name, DEFAULT_FRACTION) for m in robot.models)


def _limit_register(robot: Any, i: int) -> tuple[str, int]:
    """Servo ``i``'s torque-limiting register and its full-scale value."""
    table = robot.models[i].table
    if "torque_limit" in table:
        return "torque_limit", 1000
    return "pwm_limit", robot.models[i].pwm_full_scale


def _lowest(description: RobotDescription, q: np.ndarray) -> np.ndarray:
    """Lowest world z (m) of the element and tool frames at poses ``q`` ``(batch, dof)``.

    The first element's frame stands on the base, at or near the table, and is left out.
    """
    kinematics = forward_kinematics(description, q)
    heights = [kinematics.frames[..., 1:, 2, 3].min(axis=-1)]
    heights += [frame[..., 2, 3] for frame in kinematics.tools.values()]
    return np.min(heights, axis=0)


@dataclass(frozen=True)
class Push:
    """One homing push: joint ``joint`` from the pose ``start`` to the stop at ``end``.

    Attributes:
        joint: Joint index.
        towards_top: True for the push towards the servo's highest tick.
        start: Pose the push starts from, rad, shape ``(dof,)``; the other joints hold it.
        end: The robot file's limit the push heads for, rad.
        fraction: Torque limit of the push, a fraction of stall torque.
    """

    joint: int
    towards_top: bool
    start: np.ndarray
    end: float
    fraction: float


def _path(start: np.ndarray, joint: int, end: float, points: int) -> np.ndarray:
    path = np.repeat(start[None], points, axis=0)
    path[:, joint] = np.linspace(start[joint], end, points)
    return path


def _hold_pose(
    description: RobotDescription, joint: int, end: float, clearance: float
) -> np.ndarray:
    """A pose to push ``joint`` from towards ``end`` with the arm clear of the table.

    The joint starts from the middle of its range; the others hold the zero pose if the
    push (and the move to its start from the zero pose) keeps every frame ``clearance``
    above the table, else the pose nearest to it (of ``GRID`` values per joint inside the
    middle 90 % of its range, clear of its stops) that does.
    """
    lower, upper = np.asarray(description.lower), np.asarray(description.upper)
    n = description.dof
    middle = (lower + upper) / 2.0
    others = [k for k in range(n) if k != joint]
    inner = np.linspace(lower + 0.05 * (upper - lower), upper - 0.05 * (upper - lower), GRID)
    grids = [np.unique(np.append(inner[:, k], np.clip(0.0, lower[k], upper[k]))) for k in others]
    candidates = np.stack(np.meshgrid(*grids, indexing="ij"), -1).reshape(-1, len(others))
    candidates = candidates[np.argsort(np.abs(candidates).sum(axis=1), kind="stable")]
    candidates = np.concatenate([np.zeros((1, len(others))), candidates])  # the zero pose
    starts = np.zeros((len(candidates), n))
    starts[:, others] = candidates
    starts[:, joint] = middle[joint]
    ends = starts.copy()
    ends[:, joint] = end
    along = np.linspace(0.0, 1.0, PATH_POINTS)[:, None]
    for k in range(len(candidates)):
        if k == 1:  # not from the zero pose: first keep the candidates whose end is clear
            keep = np.flatnonzero(_lowest(description, ends) >= clearance)
            starts, ends = starts[keep[keep > 0]], ends[keep[keep > 0]]
            break
        path = np.concatenate([starts[k] * along, starts[k] + (ends[k] - starts[k]) * along])
        if np.all(_lowest(description, path) >= clearance):
            return starts[k]
    for start, stop in zip(starts, ends, strict=True):  # in order of distance from zero
        path = np.concatenate([start * along, start + (stop - start) * along])
        if np.all(_lowest(description, path) >= clearance):
            return start
    raise ConfigurationError(
        f"no pose lets joint {description.joint_names[joint]!r} reach {end:+.3f} rad with the "
        f"arm {clearance} m above the table; home it by range of motion"
    )


def plan_pushes(
    description: RobotDescription,
    models: Sequence[Any],
    fraction: float,
    joints: Sequence[int],
    clearance: float = CLEARANCE,
) -> list[Push]:
    """The homing pushes of ``joints``, two each (towards the lowest tick, then the highest).

    Each push starts from a pose clear of the table (:func:`_hold_pose`: the zero pose
    where it can) and is limited to ``fraction`` of stall plus the largest gravity torque
    the arm model predicts the joint must lift on its way to the stop, at most 100 %: the
    limit bounds what the joint pushes onto the stop beyond its own weight there, and a
    loaded joint still gets there.
    """
    dynamics = DynamicsModel(description)
    t = description.transmissions
    lower, upper = np.asarray(description.lower), np.asarray(description.upper)
    pushes = []
    for i in joints:
        stall = models[i].stall_torque * abs(t.torque_ratio[i])  # N·m at the joint
        for towards_top in (False, True):
            up = towards_top == (t.scale[i] > 0)  # the joint angle grows on this push
            end = float(upper[i] if up else lower[i])
            start = _hold_pose(description, i, end, clearance)
            path = _path(start, i, end, PATH_POINTS)
            hold = np.array([dynamics.gravity_torque(q)[i] for q in path])
            lift = max(0.0, float(np.max(hold if up else -hold)))
            pushes.append(Push(i, towards_top, start, end, min(1.0, fraction + lift / stall)))
    return pushes


def _unwrapped(robot: Any, i: int, ticks: float, start: int) -> float:
    """Servo ``i``'s stall reading ``ticks`` counted from ``start`` without the turn's wrap.

    Raises:
        ConfigurationError: the stop lies past the encoder's wrap (the reading went round).
    """
    resolution = robot.models[i].resolution
    unwrapped = start + (ticks - start + resolution / 2) % resolution - resolution / 2
    if not 0 <= unwrapped < resolution:
        raise ConfigurationError(
            f"joint {robot.description.joint_names[i]!r} (servo id {robot.servo_ids[i]}): its "
            f"stop lies past the encoder's wrap (it reads {ticks:.0f} after a turn), so its "
            "range cannot be read in one turn; calibrate it by range of motion, which writes "
            "the servos' Homing Offsets (jointlab calibrate URL --robot ROBOT)"
        )
    return float(unwrapped)


def _limit_value(robot: Any, i: int, fraction: float) -> int:
    """Servo ``i``'s torque-limit register value for ``fraction`` of its stall torque."""
    return round(fraction * _limit_register(robot, i)[1])


def _go(robot: Any, i: int, goal: int, speed: float, limit: int | None = None) -> None:
    """Servo ``i`` heads for ``goal`` ticks at ``speed`` (with torque-limit value ``limit``).

    Torque goes off and on again: the servo's profile restarts where the joint is, and an
    EEPROM limit may be written in between. As every arming does, Goal Position = Present
    Position is written before Torque Enable, so enabling torque never sends the servo to a
    stale goal (one of an earlier session, or of an earlier joint's homing).
    """
    robot.write_register(i, "torque_enable", 0)
    if limit is not None:
        robot.write_register(i, _limit_register(robot, i)[0], limit)
    robot.write_register(i, "goal_position", robot.read_register(i, "present_position"))
    robot.write_register(i, "torque_enable", 1)
    robot.write_register(i, *_profile(robot, i, speed))
    robot.write_register(i, "goal_position", int(goal))


def _settle(robot: Any, joints: list[int], timeout: float, stop: bool) -> np.ndarray:
    """Run bus cycles until ``joints`` stop moving; their ticks (raise if ``stop`` and late).

    A push (``stop``) has stalled after :data:`STALL_WINDOW` without motion, and the cycle
    that finds it stalled is followed at once by a hold where it is. Any other move has
    settled after :data:`SETTLE_WINDOW` (a joint lifting a load waits, still, until its P
    loop's setpoint has run far enough ahead to carry it) and keeps its goal: a hold where
    a P-only loop drooped under gravity would let it droop again, move after move, until
    the joint lay on its stop (the Koch's elbow did).
    """
    window = max(10, math.ceil((STALL_WINDOW if stop else SETTLE_WINDOW) / robot.bus_dt))
    history: list[np.ndarray] = []
    for _ in range(max(window + 1, math.ceil(timeout / robot.bus_dt))):
        history.append(robot.idle_cycle().extras["ticks"][joints].astype(np.float64))
        if len(history) > window and np.all(
            np.abs(history[-1] - history[-1 - window]) < STALL_TICKS
        ):
            if stop:  # stop pushing: hold where the joint stalled
                for k, i in enumerate(joints):
                    robot.write_register(i, "goal_position", int(history[-1][k]))
            return history[-1]
    if stop:
        i = joints[0]
        raise ConfigurationError(
            f"joint {robot.description.joint_names[i]!r} (servo id {robot.servo_ids[i]}) did not "
            f"stall against a hard stop within {timeout} s; is it free to move?"
        )
    return history[-1]


def calibrate_automatic(
    robot: Any,
    *,
    torque_fraction: float | None = None,
    speed: float = 0.8,
    margin: int = MARGIN,
    timeout: float = 10.0,
    on_joint: Callable[[str], object] | None = None,
    joints: Sequence[str] | None = None,
) -> Calibration:
    """Stall-based homing against the hard stops (see the module docstring).

    The arm is first brought slowly to the robot file's nominal zero pose (straight, clear
    of the table); each joint then pushes to both stops from the poses :func:`plan_pushes`
    chooses while the others hold them. Servos in ``current`` mode are homed in position
    mode (their Operating Mode is restored afterwards, as are the torque limits); the arm is
    left limp.

    Args:
        robot: A connected ServoBusRobot (disarmed; it is left disarmed).
        torque_fraction: The homing torque, a fraction of each servo's stall torque
            (default: :func:`safe_fraction`, at most 25 %; up to 1 may be asked for).
        speed: Joint speed of every move, rad/s.
        margin: Ticks kept off each stop in the calibrated range.
        timeout: Seconds one move may take.
        on_joint: Called with each joint's name as its homing starts.
        joints: Home only these joints; the others keep the robot file's nominal offset and
            their range is the file's ``min``/``max`` (default: every joint).

    Raises:
        ConfigurationError: a joint does not stall, or its measured span does not match the
            robot file's range (a wrong direction, range or transmission).
    """
    if torque_fraction is None:
        torque_fraction = safe_fraction(robot)
    if not 0 < torque_fraction <= 1:
        raise ConfigurationError(
            f"homing torque {torque_fraction:.0%} of stall refused: it must lie in (0 %, 100 %] "
            f"(the safe default of this arm is {safe_fraction(robot):.0%})"
        )
    if robot.armed:
        robot.disarm()
    description = robot.description
    n = description.dof
    servos = description.bus.servos
    restore: list[tuple[int, str, int]] = []
    full = []
    for i in range(n):  # torque is off: EEPROM limits and modes may be written
        name, _ = _limit_register(robot, i)
        full.append(robot.read_register(i, name))
        restore.append((i, name, full[-1]))
        if servos[i].mode.value != "position":
            restore.append((i, "operating_mode", robot.read_register(i, "operating_mode")))
            robot.write_register(i, "operating_mode", robot.models[i].modes["position"])
    nominal = np.sort(
        description.transmissions.to_motor(np.stack([description.lower, description.upper])),
        axis=0,
    )
    lo, hi = nominal[0] - margin, nominal[1] + margin
    chosen = description.joint_names if joints is None else tuple(joints)
    homed = [description.joint_index(name) for name in chosen]
    every = list(range(n))
    pushes = plan_pushes(description, robot.models, torque_fraction, homed)
    to_ticks = description.transmissions.to_motor
    goals = np.full(n, -1)

    def pose(q: np.ndarray) -> None:
        """Every joint to pose ``q`` (rad) at its full limit; the ones already there stay."""
        ticks = np.rint(to_ticks(q)).astype(int)
        for i in np.flatnonzero(ticks != goals):
            _go(robot, int(i), int(ticks[i]), speed, full[i])
        goals[:] = ticks
        _settle(robot, every, timeout, stop=False)

    try:
        pose(np.zeros(n))  # the zero pose, slowly: no joint is near a stop there
        for push in pushes:
            i = push.joint
            if on_joint is not None and not push.towards_top:
                on_joint(description.joint_names[i])
            holding = np.delete(to_ticks(push.start), i)
            if np.any(np.rint(holding) != np.delete(goals, i)):
                pose(np.zeros(n))  # from one holding pose to another through the zero pose
            pose(push.start)
            end = robot.models[i].resolution - 1 if push.towards_top else 0
            _go(robot, i, end, speed, _limit_value(robot, i, push.fraction))
            stalled = _unwrapped(robot, i, _settle(robot, [i], timeout, stop=True)[0], goals[i])
            (hi if push.towards_top else lo)[i] = stalled
            _go(robot, i, int(goals[i]), speed, full[i])  # back to the start at full limit
            _settle(robot, [i], timeout, stop=False)
    finally:
        for i in every:
            robot.write_register(i, "torque_enable", 0)
        for i, name, value in restore:
            robot.write_register(i, name, value)
        for i in every:
            robot.write_register(i, _profile(robot, i, speed)[0], 0)
    sign = np.sign(description.transmissions.scale)
    span = hi - lo
    expected = _scale(robot) * (description.upper - description.lower)
    bad = np.abs(span - expected) > np.maximum(0.05 * expected, 4 * margin)
    bad &= np.isin(np.arange(n), homed)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ConfigurationError(
            f"joint {description.joint_names[i]!r} (servo id {robot.servo_ids[i]}): the hard stops "
            f"are {span[i]:.0f} ticks apart, the robot file's range [{description.lower[i]}, "
            f"{description.upper[i]}] rad means {expected[i]:.0f}; if it stopped short, "
            f"{torque_fraction:.0%} of stall may be too weak for its load (raise --torque, at "
            "most 1), else check its min/max and transmission, or use the range-of-motion "
            "calibration"
        )
    at_min = np.where(sign > 0, lo, hi)
    offset = at_min - sign * _scale(robot) * description.lower
    offset = np.where(np.isin(np.arange(n), homed), offset, description.transmissions.offset)
    return _result(robot, "automatic", lo, hi, offset, sign, margin)
