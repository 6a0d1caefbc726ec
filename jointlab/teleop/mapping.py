"""From a teleoperator's reading to a follower's joint targets: pairing, scaling, checks.

Joints are paired by position in their lists (a leader SO-101 to a follower SO-101, a leader
Koch to a follower Koch), or by the names given. Each pair maps either

* ``"direct"``: the leader's angle is the follower's target (same arms: what LeRobot does
  through the two calibrations); the follower's range must hold the leader's, else the
  mapping is refused naming the joint, both ranges and the fix;
* ``"range"``: the leader's range is scaled linearly onto the follower's (different arms).

Readings are clipped into the follower's range before any step limit applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.robots import RobotDescription

__all__ = ["MAPPINGS", "JointMap"]

#: How a leader's range maps onto the follower's.
MAPPINGS = ("direct", "range")
#: A follower range may fall short of the leader's by this much and still be "direct", rad.
RANGE_TOLERANCE = 0.02


@dataclass(frozen=True)
class JointMap:
    """Pairs of leader and follower joints and the linear map of each pair.

    Attributes:
        leader_names: The mapped leader joints' names.
        leader_index: Index of each mapped joint in the leader's reading, ``(n,)``.
        follower_index: Follower joint index of each leader joint, ``(n,)``.
        scale: Follower radians per leader radian, ``(n,)``.
        offset: Follower target at leader reading 0, ``(n,)``, rad.
        lower: Follower lower limits of the mapped joints, ``(n,)``, rad.
        upper: Follower upper limits of the mapped joints, ``(n,)``, rad.
        follower_dof: The follower's joint count.
    """

    leader_names: tuple[str, ...]
    leader_index: np.ndarray
    follower_index: np.ndarray
    scale: np.ndarray
    offset: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    follower_dof: int

    @classmethod
    def build(
        cls,
        leader_names: Sequence[str],
        leader_lower: Sequence[float],
        leader_upper: Sequence[float],
        follower: RobotDescription,
        mapping: str = "direct",
        pairs: dict[str, str] | None = None,
    ) -> JointMap:
        """Pair and check the joints (see the module docstring).

        Args:
            leader_names: Leader joint names.
            leader_lower: Leader lower limits, ``(n,)``, rad.
            leader_upper: Leader upper limits, ``(n,)``, rad.
            follower: The follower's description.
            mapping: ``"direct"`` or ``"range"``.
            pairs: Leader joint -> follower joint (default: by position, all joints).

        Raises:
            ConfigurationError: joint counts differ (without ``pairs``), an unknown joint, or
                (``direct``) a follower range that does not hold the leader's.
        """
        if mapping not in MAPPINGS:
            raise ConfigurationError(f"joint mapping must be one of {MAPPINGS}, got {mapping!r}")
        names = tuple(leader_names)
        lo, hi = np.asarray(leader_lower, float), np.asarray(leader_upper, float)
        f_names = list(follower.joint_names)
        if pairs is None:
            if len(names) != len(f_names):
                raise ConfigurationError(
                    f"the leader has {len(names)} joints ({', '.join(names)}) and the follower "
                    f"{follower.name!r} has {len(f_names)} ({', '.join(f_names)}): use a leader "
                    "of the follower's kind, or pair joints explicitly (--pair LEADER=FOLLOWER)"
                )
            pairs = dict(zip(names, f_names, strict=True))
        unknown = [n for n in pairs if n not in names]
        unknown += [n for n in pairs.values() if n not in f_names]
        if unknown:
            raise ConfigurationError(
                f"joint pairing names unknown joints {unknown}: leader joints {list(names)}, "
                f"follower joints {f_names}"
            )
        keep = [i for i, n in enumerate(names) if n in pairs]
        index = np.array([f_names.index(pairs[names[i]]) for i in keep], dtype=int)
        f_lo = np.asarray(follower.lower, float)[index]
        f_hi = np.asarray(follower.upper, float)[index]
        lo, hi = lo[keep], hi[keep]
        if mapping == "direct":
            short = (f_lo > lo + RANGE_TOLERANCE) | (f_hi < hi - RANGE_TOLERANCE)
            bad = [(names[keep[k]], k) for k in np.flatnonzero(short)]
            if bad:
                name, k = bad[0]
                raise ConfigurationError(
                    f"leader joint {name!r} ranges over [{lo[k]:.3f}, {hi[k]:.3f}] rad but "
                    f"follower joint {f_names[index[k]]!r} only over [{f_lo[k]:.3f}, "
                    f"{f_hi[k]:.3f}] rad ({len(bad)} joint(s) differ): scale the leader's "
                    "range onto the follower's with --mapping range"
                )
            scale, offset = np.ones(len(keep)), np.zeros(len(keep))
        else:
            width = hi - lo
            if np.any(width <= 0):
                raise ConfigurationError("the leader has a joint with an empty range")
            scale = (f_hi - f_lo) / width
            offset = f_lo - scale * lo
        leader_index = np.array(keep, dtype=int)
        mapped = tuple(names[i] for i in keep)
        return cls(mapped, leader_index, index, scale, offset, f_lo, f_hi, follower.dof)

    def targets(self, reading: np.ndarray, present: np.ndarray) -> np.ndarray:
        """Follower targets for a leader ``reading``: mapped, clipped into the follower's range.

        Args:
            reading: The leader's whole reading, rad.
            present: The follower's present positions, ``(follower_dof,)``, rad; joints no
                leader joint maps to keep these.

        Returns:
            Follower joint targets, ``(follower_dof,)``, rad.
        """
        picked = np.asarray(reading, dtype=np.float64)[self.leader_index]
        mapped = np.clip(self.offset + self.scale * picked, self.lower, self.upper)
        target = np.array(present, dtype=np.float64)
        target[self.follower_index] = mapped
        return target
