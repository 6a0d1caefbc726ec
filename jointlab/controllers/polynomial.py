"""Joint-space piecewise polynomials: the one representation of every planned motion.

Trajectories (Hermite or quintic through waypoints) and jerk-limited ruckig profiles are
both stored as a :class:`PiecewisePolynomial`: breakpoints ``t_0 < t_1 < ... < t_m`` and, per
piece ``k`` and joint ``j``, six coefficients in ascending powers of the local time
``tau = t - t_k``. A control tick evaluates position, velocity and acceleration of every
joint with one small matrix product, so sampling costs a few microseconds.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.interpolate import BPoly, CubicHermiteSpline, PPoly

from jointlab.errors import JointLabError

__all__ = ["DEGREE", "PiecewisePolynomial"]

#: Highest polynomial degree stored (quintic).
DEGREE = 5
_ORDER = DEGREE + 1
_POWERS = np.arange(_ORDER, dtype=np.float64)
# Rows map ascending position coefficients to ascending velocity/acceleration coefficients.
_DV = np.zeros((_ORDER, _ORDER))
_DA = np.zeros((_ORDER, _ORDER))
for _k in range(1, _ORDER):
    _DV[_k - 1, _k] = _k
for _k in range(2, _ORDER):
    _DA[_k - 2, _k] = _k * (_k - 1)


class PiecewisePolynomial:
    """Joint positions ``q(t)`` as polynomials of degree <= 5 between breakpoints.

    Outside ``[start, end]`` the motion is clamped: before ``start`` it is the state at
    ``start``, after ``end`` the end position with zero velocity and acceleration.

    Args:
        breaks: Breakpoints in seconds, shape ``(m + 1,)``, strictly increasing.
        coeffs: Coefficients in ascending powers of ``t - breaks[k]``, shape ``(m, n, dof)``
            with ``n <= 6`` (padded to 6).
    """

    __slots__ = (
        "_all",
        "_breaks",
        "_coeffs",
        "_end_rows",
        "_end_state",
        "_list",
        "_start_rows",
        "_start_state",
    )

    def __init__(self, breaks: Any, coeffs: Any) -> None:
        breaks = np.array(breaks, dtype=np.float64)
        coeffs = np.array(coeffs, dtype=np.float64)
        if breaks.ndim != 1 or breaks.shape[0] < 2:
            raise JointLabError(f"breaks must have shape (m + 1,) with m >= 1, got {breaks.shape}")
        if np.any(np.diff(breaks) <= 0) or not np.all(np.isfinite(breaks)):
            raise JointLabError(f"breaks must be finite and strictly increasing, got {breaks}")
        if coeffs.ndim != 3 or coeffs.shape[0] != breaks.shape[0] - 1 or coeffs.shape[1] > _ORDER:
            raise JointLabError(
                f"coeffs must have shape ({breaks.shape[0] - 1}, <=6, dof), got {coeffs.shape}"
            )
        if not np.all(np.isfinite(coeffs)):
            raise JointLabError("coeffs must be finite")
        padded = np.zeros((coeffs.shape[0], _ORDER, coeffs.shape[2]))
        padded[:, : coeffs.shape[1]] = coeffs
        self._breaks = breaks
        self._list = breaks.tolist()
        self._coeffs = padded
        # (m, 6, 3*dof): position | velocity | acceleration columns, one matmul per sample.
        self._all = np.concatenate(
            [padded, np.einsum("ij,mjd->mid", _DV, padded), np.einsum("ij,mjd->mid", _DA, padded)],
            axis=2,
        )
        self._start_state = self._evaluate(0, 0.0)
        self._end_state = self._evaluate(len(self._list) - 2, self._list[-1] - self._list[-2])
        self._start_rows = np.array(self._start_state)
        self._end_rows = np.zeros((3, padded.shape[2]))
        self._end_rows[0] = self._end_state[0]
        for array in (*self._start_state, *self._end_state, self._start_rows, self._end_rows):
            array.setflags(write=False)

    # ------------------------------------------------------------------ properties
    @property
    def breaks(self) -> np.ndarray:
        """Breakpoints in seconds, shape ``(m + 1,)`` (a copy)."""
        return self._breaks.copy()

    @property
    def coeffs(self) -> np.ndarray:
        """Ascending-power coefficients, shape ``(m, 6, dof)`` (a copy)."""
        return self._coeffs.copy()

    @property
    def dof(self) -> int:
        """Number of joints."""
        return int(self._coeffs.shape[2])

    @property
    def start(self) -> float:
        """First breakpoint, seconds."""
        return self._list[0]

    @property
    def end(self) -> float:
        """Last breakpoint, seconds."""
        return self._list[-1]

    @property
    def duration(self) -> float:
        """``end - start`` in seconds."""
        return self._list[-1] - self._list[0]

    @property
    def end_position(self) -> np.ndarray:
        """Position held after the end, shape ``(dof,)``."""
        return self._end_state[0]

    @property
    def start_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity, acceleration at ``start``, each shape ``(dof,)``."""
        return tuple(x.copy() for x in self._start_state)  # type: ignore[return-value]

    @property
    def end_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity, acceleration at ``end`` (before clamping), shape ``(dof,)``."""
        return tuple(x.copy() for x in self._end_state)  # type: ignore[return-value]

    # ------------------------------------------------------------------ evaluation
    def _evaluate(self, piece: int, tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        values = np.dot(tau**_POWERS, self._all[piece])  # matmul's result, a third of its cost
        dof = self._coeffs.shape[2]
        return values[:dof], values[dof : 2 * dof], values[2 * dof :]

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity and acceleration at time ``t`` (seconds), each ``(dof,)``.

        Fast path for one control tick (one bisection and one small matrix product).
        """
        breaks = self._list
        if t <= breaks[0]:
            return self._start_state
        if t >= breaks[-1]:
            p = self._end_state[0]
            zero = np.zeros_like(p)
            return p, zero, zero
        piece = bisect.bisect_right(breaks, t) - 1
        return self._evaluate(piece, t - breaks[piece])

    def sample_rows(self, t: float) -> np.ndarray:
        """:meth:`sample` as the rows of one array (position, velocity, acceleration).

        The control tick's path: one bisection and one vector-matrix product, shape
        ``(3, dof)`` (read-only before the start and after the end).
        """
        breaks = self._list
        if t <= breaks[0]:
            return self._start_rows
        if t >= breaks[-1]:
            return self._end_rows
        piece = bisect.bisect_right(breaks, t) - 1
        return np.dot((t - breaks[piece]) ** _POWERS, self._all[piece]).reshape(3, -1)

    def sample_many(self, times: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vectorised :meth:`sample`: ``times`` shape ``(n,)`` -> three arrays ``(n, dof)``."""
        times = np.asarray(times, dtype=np.float64).reshape(-1)
        dof = self._coeffs.shape[2]
        clamped = np.clip(times, self._list[0], self._list[-1])
        piece = np.clip(
            np.searchsorted(self._breaks, clamped, side="right") - 1, 0, self._coeffs.shape[0] - 1
        )
        tau = clamped - self._breaks[piece]
        powers = tau[:, None] ** _POWERS
        values = np.einsum("nk,nkd->nd", powers, self._all[piece])
        p, v, a = values[:, :dof], values[:, dof : 2 * dof], values[:, 2 * dof :]
        after = times >= self._list[-1]
        v[after] = 0.0
        a[after] = 0.0
        return p, v, a

    def pieces(self, joint: int) -> list[tuple[float, float, float, float, float]]:
        """Constant-jerk pieces ``(t_start, p, v, a, jerk)`` of one joint (cubic pieces only)."""
        c = self._coeffs[:, :, joint]
        if np.any(c[:, 4:]):
            raise JointLabError("pieces() needs a motion of cubic pieces (constant jerk)")
        return [
            (t, c[k, 0], c[k, 1], 2 * c[k, 2], 6 * c[k, 3]) for k, t in enumerate(self._list[:-1])
        ]

    def to_ppoly(self) -> PPoly:
        """The same motion as a :class:`scipy.interpolate.PPoly` (``c`` shape ``(6, m, dof)``)."""
        return PPoly(self._coeffs[:, ::-1].transpose(1, 0, 2).copy(), self._breaks.copy())

    # ------------------------------------------------------------------ composition
    def shifted(self, offset: float) -> PiecewisePolynomial:
        """The same motion starting ``offset`` seconds later."""
        return PiecewisePolynomial(self._breaks + offset, self._coeffs)

    def then(self, other: PiecewisePolynomial) -> PiecewisePolynomial:
        """This motion followed by ``other`` (shifted to start at this one's end)."""
        if other.dof != self.dof:
            raise JointLabError(f"cannot join motions of {self.dof} and {other.dof} joints")
        shifted = other._breaks - other._list[0] + self._list[-1]
        return PiecewisePolynomial(
            np.concatenate([self._breaks, shifted[1:]]),
            np.concatenate([self._coeffs, other._coeffs]),
        )

    # ------------------------------------------------------------------ builders
    @classmethod
    def constant(cls, position: Any, duration: float) -> PiecewisePolynomial:
        """Stand still at ``position`` (shape ``(dof,)``) for ``duration`` seconds."""
        position = np.asarray(position, dtype=np.float64).reshape(1, 1, -1)
        return cls([0.0, float(duration)], position)

    @classmethod
    def cruise(cls, position: Any, velocity: Any, duration: float) -> PiecewisePolynomial:
        """Constant velocity (shape ``(dof,)``) from ``position`` for ``duration`` seconds."""
        p = np.asarray(position, dtype=np.float64)
        v = np.asarray(velocity, dtype=np.float64)
        return cls([0.0, float(duration)], np.stack([p, v])[None])

    @classmethod
    def hermite(
        cls,
        times: Any,
        positions: Any,
        velocities: Any,
        accelerations: Any | None = None,
    ) -> PiecewisePolynomial:
        """Interpolate waypoints with scipy: cubic Hermite, or quintic where accelerations are.

        Args:
            times: Waypoint times in seconds, shape ``(n,)``, strictly increasing.
            positions: Positions, shape ``(n, dof)``.
            velocities: Velocities, shape ``(n, dof)`` (all finite).
            accelerations: Accelerations, shape ``(n, dof)``, NaN where not given; ``None`` for
                none. A piece whose two ends both have an acceleration is quintic
                (:meth:`scipy.interpolate.BPoly.from_derivatives`); one with a single end given
                is quartic; others are cubic Hermite
                (:class:`scipy.interpolate.CubicHermiteSpline`).
        """
        times = np.asarray(times, dtype=np.float64)
        positions = np.asarray(positions, dtype=np.float64)
        velocities = np.asarray(velocities, dtype=np.float64)
        cubic = CubicHermiteSpline(times, positions, velocities)
        coeffs = np.zeros((times.shape[0] - 1, _ORDER, positions.shape[1]))
        coeffs[:, :4] = cubic.c[::-1].transpose(1, 0, 2)
        if accelerations is not None:
            acc = np.asarray(accelerations, dtype=np.float64)
            for j in np.flatnonzero(np.isfinite(acc).any(axis=0)):
                derivs = [
                    [positions[i, j], velocities[i, j]]
                    + ([acc[i, j]] if np.isfinite(acc[i, j]) else [])
                    for i in range(times.shape[0])
                ]
                bpoly = BPoly.from_derivatives(times, derivs)
                ppoly = PPoly.from_bernstein_basis(bpoly)
                c = ppoly.c[::-1]  # ascending, shape (deg + 1, m)
                coeffs[:, :, j] = 0.0
                coeffs[:, : c.shape[0], j] = c.T
        return cls(times, coeffs)

    @classmethod
    def from_pieces(
        cls, pieces: Sequence[Sequence[tuple[float, float, float, float, float]]], duration: float
    ) -> PiecewisePolynomial:
        """Merge per-joint constant-jerk pieces onto one common set of breakpoints.

        Args:
            pieces: For each joint, a list of ``(t_start, p, v, a, jerk)`` pieces in time order,
                the first starting at 0. A joint's last piece lasts until ``duration``.
            duration: Total duration in seconds.
        """
        dof = len(pieces)
        starts = sorted({round(t, 12) for joint in pieces for (t, *_rest) in joint} | {0.0})
        breaks = [t for t in starts if t < duration - 1e-12] + [float(duration)]
        if len(breaks) < 2:
            breaks = [0.0, max(float(duration), 1e-9)]
        breaks_arr = np.array(breaks)
        coeffs = np.zeros((len(breaks) - 1, _ORDER, dof))
        for j, joint in enumerate(pieces):
            table = np.array(joint, dtype=np.float64).reshape(-1, 5)
            index = np.searchsorted(table[:, 0], breaks_arr[:-1] + 1e-12, side="right") - 1
            index = np.clip(index, 0, table.shape[0] - 1)
            t0, p, v, a, jerk = table[index].T
            dt = breaks_arr[:-1] - t0
            coeffs[:, 0, j] = p + dt * (v + dt * (a / 2 + dt * jerk / 6))
            coeffs[:, 1, j] = v + dt * (a + dt * jerk / 2)
            coeffs[:, 2, j] = (a + dt * jerk) / 2
            coeffs[:, 3, j] = jerk / 6
        return cls(breaks_arr, coeffs)

    # ------------------------------------------------------------------ analysis
    def extrema(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact bounds over ``[start, end]``: (min position, max position, max ``|velocity|``).

        Each has shape ``(dof,)``; found from the roots of the first and second derivatives.
        """
        ppoly = self.to_ppoly()
        lower = np.empty(self.dof)
        upper = np.empty(self.dof)
        speed = np.empty(self.dof)
        for j in range(self.dof):
            single = PPoly(ppoly.c[:, :, j], ppoly.x, extrapolate=False)
            velocity = single.derivative()
            times = np.concatenate([self._breaks, velocity.roots(extrapolate=False)])
            values = single(np.clip(times, self._list[0], self._list[-1]))
            lower[j], upper[j] = np.nanmin(values), np.nanmax(values)
            times = np.concatenate([self._breaks, velocity.derivative().roots(extrapolate=False)])
            speed[j] = np.nanmax(np.abs(velocity(np.clip(times, self._list[0], self._list[-1]))))
        return lower, upper, speed

    def peaks(self) -> tuple[np.ndarray, np.ndarray]:
        """Largest ``|velocity|`` and ``|acceleration|`` over ``[start, end]``, each ``(dof,)``.

        Exact: each derivative is evaluated at the breakpoints and at the roots of the next
        derivative (BB.Actuator's BeginMotion reports them as ``peak_velocity`` and
        ``acceleration``).
        """
        ppoly = self.to_ppoly()
        speed = np.empty(self.dof)
        accel = np.empty(self.dof)
        span = (self._list[0], self._list[-1])
        for j in range(self.dof):
            velocity = PPoly(ppoly.c[:, :, j], ppoly.x, extrapolate=False).derivative()
            for target, curve in ((speed, velocity), (accel, velocity.derivative())):
                times = np.concatenate([self._breaks, curve.derivative().roots(extrapolate=False)])
                target[j] = np.nanmax(np.abs(curve(np.clip(times, *span))))
        return speed, accel
