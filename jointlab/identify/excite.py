"""Excitation programs: safe, limit-respecting motions that make actuator parameters visible.

:func:`excitation` builds, for each excited joint, a smooth signal around a centre pose,

* ``"multisine"``: a sum of harmonics of ``1 / duration`` in the band ``band`` (Hz) with
  Schroeder phases (a low peak-to-average ratio), each harmonic's amplitude shaped so that
  position, speed, acceleration and jerk contribute alike;
* ``"chirp"``: one sine whose frequency sweeps ``band`` logarithmically, its amplitude at
  each instant the largest the limits allow at that frequency;

faded in and out with quintic ramps (it starts and ends at rest on the centre) and scaled so
that it stays inside ``fraction`` of each soft limit: position range (about the centre),
velocity, acceleration and jerk. Links are kept above the floor: when a link's capsule would
sink below ``clearance`` metres (or, for a link already lower at the centre pose, more than a
centimetre below its height there), the amplitude shrinks until it does not; a centre so
close to the floor that less than a quarter of the amplitude would be left (a servo arm
folded at rest, say) is refused, naming the link: pass a centre that lifts it.

The result is a command program (:mod:`jointlab.program`), so it runs on every backend::

    - set_positions: {positions: CENTRE}      # jerk-limited move to the centre
    - wait: HOLD                              # every joint holds the centre against gravity
    - follow_trajectory: {joints: [J], waypoints: [...]}   # joint J excited; the others hold
    - set_positions: {positions: CENTRE}      # back onto the centre, should J have drifted
    - wait: HOLD
    ...

By default joints are excited one after another (``sequential``): each regression then sees
its joint moving alone while the others hold still, which keeps the small wrist torques
clear of the large coupling torques of the proximal joints. ``sequential=False`` excites
every joint at once, each on its own interleaved set of harmonics (shorter; multisine only).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import yaml

from jointlab.errors import ConfigurationError
from jointlab.identify.signals import chirp, multisine, window, windowed
from jointlab.robots import RobotDescription, forward_kinematics, load_robot

__all__ = ["MIN_FLOOR_SCALE", "SIGNALS", "Excitation", "ExcitationSegment", "excitation"]

#: Signal shapes :func:`excitation` offers.
SIGNALS = ("multisine", "chirp")
#: Samples per second used to check the limits of a signal.
_CHECK_RATE = 1000.0
#: Shrink factor per try when a link would come too close to the floor.
_SHRINK = 0.8
#: Metres a link already closer to the floor than ``clearance`` at the centre may sink.
_SINK = 0.01
_MAX_SHRINKS = 20
#: Smallest share of its limit-bound amplitude a segment may keep after the floor check.
MIN_FLOOR_SCALE = 0.25


@dataclass(frozen=True, eq=False)
class ExcitationSegment:
    """The motion of the joints excited together in one ``follow_trajectory`` step.

    Arrays have shape ``(n_waypoints, n_joints)`` (rad or m, and their derivatives).
    """

    #: Names of the excited joints.
    joints: tuple[str, ...]
    #: Waypoint times from the start of the segment, seconds, shape ``(n_waypoints,)``.
    times: np.ndarray
    #: Positions, rad or m.
    position: np.ndarray
    #: Velocities, rad/s or m/s.
    velocity: np.ndarray
    #: Accelerations, rad/s² or m/s².
    acceleration: np.ndarray
    #: Peak |position − centre|, speed, acceleration and jerk of each joint, shape ``(4, n)``.
    peaks: np.ndarray
    #: Share of the limit-bound amplitude kept to stay above the floor (1: not cut).
    floor_scale: float = 1.0

    def waypoints(self) -> list[dict[str, Any]]:
        """The segment as ``follow_trajectory`` waypoints (plain lists of floats)."""
        single = len(self.joints) == 1

        def value(row: np.ndarray) -> Any:
            return float(row[0]) if single else [float(v) for v in row]

        return [
            {
                "position": value(p),
                "velocity": value(v),
                "acceleration": value(a),
                "time_from_start": float(t),
            }
            for t, p, v, a in zip(
                self.times, self.position, self.velocity, self.acceleration, strict=True
            )
        ]


@dataclass(frozen=True, eq=False)
class Excitation:
    """An excitation program and the motion it asks for (see the module docstring)."""

    #: Name of the robot it was built for.
    robot: str
    #: Centre pose, rad or m, shape ``(dof,)``.
    centre: np.ndarray
    #: One segment per ``follow_trajectory`` step, in program order.
    segments: tuple[ExcitationSegment, ...]
    #: Seconds every joint holds before and after each segment.
    hold: float
    #: Signal shape, ``"multisine"`` or ``"chirp"``.
    signal: str
    #: Frequency band in Hz.
    band: tuple[float, float]

    @property
    def joints(self) -> tuple[str, ...]:
        """Every excited joint, in program order."""
        return tuple(name for segment in self.segments for name in segment.joints)

    @property
    def duration(self) -> float:
        """Seconds of excitation and holds (the move to the centre not included)."""
        return self.hold * (1 + len(self.segments)) + sum(float(s.times[-1]) for s in self.segments)

    @property
    def program(self) -> list[dict[str, Any]]:
        """The command program (:func:`jointlab.program.run_program` runs it anywhere)."""
        back = [
            {"set_positions": {"positions": [float(v) for v in self.centre]}},
            {"wait": self.hold},
        ]
        steps: list[dict[str, Any]] = list(back)
        for segment in self.segments:
            steps.append(
                {
                    "follow_trajectory": {
                        "joints": list(segment.joints),
                        "waypoints": segment.waypoints(),
                    }
                }
            )
            steps.extend(back)
        return steps

    def to_yaml(self) -> str:
        """The program as YAML (``jointlab run ROBOT FILE`` runs it)."""
        return yaml.safe_dump(self.program, sort_keys=False, width=100)

    def settings(self) -> dict[str, Any]:
        """JSON summary stored in a log's metadata (signal, band, joints, centre, hold)."""
        return {
            "signal": self.signal,
            "band": list(self.band),
            "joints": list(self.joints),
            "centre": [float(v) for v in self.centre],
            "hold": self.hold,
        }


# ----------------------------------------------------------------------------- builder
def _joint_indices(description: RobotDescription, joints: Sequence[int | str] | None) -> list[int]:
    independent = [i for i in range(description.dof) if not description.dependent[i]]
    if joints is None:
        return independent
    indices = []
    for joint in joints:
        index = description.joint_index(joint)
        if description.dependent[index]:
            raise ConfigurationError(
                f"excitation: joint {description.joint_names[index]!r} is dependent (coupled); "
                "excite its leading joints instead"
            )
        if index not in indices:
            indices.append(index)
    if not indices:
        raise ConfigurationError("excitation: joints is empty; name at least one joint")
    return indices


def _floor_heights(description: RobotDescription, q: np.ndarray) -> np.ndarray:
    """Lowest height (m) of each element's capsule for poses ``q`` (shape ``(n, dof)``)."""
    kin = forward_kinematics(description, description.apply_coupling(q))
    radius = np.array([s.link.radius if s.link else 0.0 for s in description.actuators])
    low = np.minimum(kin.frames[..., 2, 3], kin.ends[..., 2, 3]) - radius
    return low.min(axis=0)


def excitation(
    description: RobotDescription | str,
    joints: Sequence[int | str] | None = None,
    duration: float = 8.0,
    *,
    signal: str = "multisine",
    band: tuple[float, float] = (0.25, 1.5),
    fraction: float = 0.8,
    centre: Sequence[float] | None = None,
    hold: float = 0.5,
    ramp: float = 1.0,
    sequential: bool = True,
    clearance: float = 0.05,
    waypoint_rate: float = 50.0,
) -> Excitation:
    """Build an excitation program for ``joints`` of ``description`` (see the module docstring).

    Args:
        description: The robot (a description, built-in name or file path).
        joints: Joints to excite, by index or name; default every independent joint.
        duration: Seconds of excitation per segment (per joint when ``sequential``), ramps
            included.
        signal: ``"multisine"`` or ``"chirp"``.
        band: Lowest and highest frequency in Hz.
        fraction: Share of each soft limit the motion may use, in (0, 1].
        centre: Pose the joints move about, shape ``(dof,)``; default the home pose.
        hold: Seconds every joint holds still before and after each segment.
        ramp: Seconds of the quintic fade-in and fade-out of each segment.
        sequential: Excite the joints one after another (True) or all at once.
        clearance: Height in metres that link ends keep above the floor (z = 0).
        waypoint_rate: Waypoints per second handed to ``follow_trajectory`` (quintic pieces
            through each waypoint's position, velocity and acceleration).

    Returns:
        An :class:`Excitation`; ``.program`` runs on any backend.

    Raises:
        ConfigurationError: an invalid option, an unknown or dependent joint, a centre outside
            the soft limits, a joint with no room to move about the centre, or a centre so
            close to the floor that under :data:`MIN_FLOOR_SCALE` of the motion would be left.
    """
    description = load_robot(description)
    if signal not in SIGNALS:
        raise ConfigurationError(f"excitation: signal must be one of {SIGNALS}, got {signal!r}")
    low_f, high_f = (float(v) for v in band)
    if not (0 < low_f < high_f and math.isfinite(high_f)):
        raise ConfigurationError(f"excitation: band must be 0 < low < high Hz, got {band!r}")
    if not 0 < fraction <= 1:
        raise ConfigurationError(f"excitation: fraction must lie in (0, 1], got {fraction!r}")
    for name, value in (("duration", duration), ("ramp", ramp), ("waypoint_rate", waypoint_rate)):
        if not (math.isfinite(value) and value > 0):
            raise ConfigurationError(f"excitation: {name} must be > 0, got {value!r}")
    if not (math.isfinite(hold) and hold >= 0):
        raise ConfigurationError(f"excitation: hold must be >= 0 s, got {hold!r}")
    if 2 * ramp >= duration:
        raise ConfigurationError(
            f"excitation: duration {duration} s must exceed the two ramps (2 x {ramp} s)"
        )
    if duration * low_f < 1:
        raise ConfigurationError(
            f"excitation: band starts at {low_f} Hz, below 1 / duration = {1 / duration:.3g} Hz; "
            "lengthen the duration or raise the band"
        )
    if sequential is False and signal != "multisine":
        raise ConfigurationError("excitation: sequential=False needs signal='multisine'")
    indices = _joint_indices(description, joints)
    centre_q = description.home if centre is None else np.asarray(centre, dtype=np.float64)
    if centre_q.shape != (description.dof,) or not np.all(np.isfinite(centre_q)):
        raise ConfigurationError(
            f"excitation: centre must be {description.dof} finite numbers, got {centre!r}"
        )
    soft_low, soft_high = description.soft_lower, description.soft_upper
    outside = (centre_q < soft_low) | (centre_q > soft_high)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise ConfigurationError(
            f"excitation: centre {centre_q[i]:.6g} of joint {description.joint_names[i]!r} lies "
            f"outside its soft limits [{soft_low[i]:.6g}, {soft_high[i]:.6g}]"
        )
    centre_q = description.apply_coupling(centre_q)
    room = np.minimum(centre_q - soft_low, soft_high - centre_q)
    bounds = fraction * np.array(
        [
            room,
            description.soft_velocity_limit,
            description.soft_acceleration_limit,
            description.soft_jerk_limit,
        ]
    )
    for i in indices:
        if room[i] <= 1e-6:
            raise ConfigurationError(
                f"excitation: joint {description.joint_names[i]!r} has no room to move: its "
                f"centre {centre_q[i]:.6g} sits on a soft limit; pass another centre"
            )
    groups = [[i] for i in indices] if sequential else [indices]
    t = np.linspace(0.0, duration, round(duration * _CHECK_RATE) + 1)
    fade = window(t, duration, ramp)
    floor = np.minimum(_floor_heights(description, centre_q[None]), clearance) - _SINK
    segments = []
    for group in groups:
        motion = np.empty((4, t.shape[0], len(group)))
        for column, i in enumerate(group):
            if signal == "chirp":
                raw = chirp(t, duration, (low_f, high_f), bounds[:, i])
            else:
                first = max(1, math.ceil(low_f * duration))
                harmonics = np.arange(first + column, math.floor(high_f * duration) + 1, len(group))
                if harmonics.size == 0:
                    raise ConfigurationError(
                        f"excitation: band {band} Hz holds no harmonic of 1/{duration} s left "
                        f"for joint {description.joint_names[i]!r}: {len(group)} joints excited "
                        f"together need {len(group)} harmonics; lengthen the duration to about "
                        f"{(len(group) + 1) / (high_f - low_f):.3g} s or widen the band"
                    )
                raw = multisine(t, harmonics, duration, bounds[:, i])
            shaped = windowed(raw, fade)
            peaks = np.abs(shaped).max(axis=1)
            motion[:, :, column] = shaped * float(np.min(bounds[:, i] / peaks))
        motion, floor_scale = _keep_above_floor(description, centre_q, group, motion, floor)
        stride = max(1, round(_CHECK_RATE / waypoint_rate))
        keep = np.arange(0, t.shape[0], stride)
        if keep[-1] != t.shape[0] - 1:
            keep = np.append(keep, t.shape[0] - 1)
        segments.append(
            ExcitationSegment(
                joints=tuple(description.joint_names[i] for i in group),
                times=t[keep],
                position=centre_q[group] + motion[0][keep],
                velocity=motion[1][keep],
                acceleration=motion[2][keep],
                peaks=np.abs(motion).max(axis=1),
                floor_scale=floor_scale,
            )
        )
    return Excitation(
        robot=description.name,
        centre=centre_q,
        segments=tuple(segments),
        hold=float(hold),
        signal=signal,
        band=(low_f, high_f),
    )


def _keep_above_floor(
    description: RobotDescription,
    centre: np.ndarray,
    group: list[int],
    motion: np.ndarray,
    floor: np.ndarray,
) -> tuple[np.ndarray, float]:
    """Shrink ``motion`` (shape ``(4, n, len(group))``) until no link sinks below ``floor``.

    Returns the motion and the share of it kept. Raises :class:`ConfigurationError` when
    less than :data:`MIN_FLOOR_SCALE` would be left: an excitation that small hides friction
    and latency under the gravity hold (a servo arm folded at rest over the floor, say), so
    the centre pose must lift the link instead.
    """
    poses = np.repeat(centre[None], motion.shape[1], axis=0)
    names = [description.joint_names[i] for i in group]
    scale = 1.0
    for _ in range(_MAX_SHRINKS):
        poses[:, group] = centre[group] + scale * motion[0]
        heights = _floor_heights(description, poses[::10])
        if np.all(heights >= floor - 1e-9):
            return motion * scale, scale
        if scale * _SHRINK < MIN_FLOOR_SCALE:
            break
        scale *= _SHRINK
    lowest = int(np.argmin(heights - floor))
    link = description.actuators[lowest].name
    at_centre = float(_floor_heights(description, centre[None])[lowest])
    raise ConfigurationError(
        f"excitation: joints {names} cannot move about the centre without link {link!r} "
        f"reaching the floor (its capsule is {at_centre:.3g} m above it at the centre) unless "
        f"their amplitudes shrink below {100 * MIN_FLOOR_SCALE:.0f} % of what the limits "
        "allow, too little to identify; pass a centre pose that lifts it (centre=[...], "
        "--centre)"
    )
