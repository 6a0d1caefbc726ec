"""Excitation signals with their first three derivatives, as arrays of shape ``(4, n)``.

Rows are position, velocity, acceleration and jerk (rad, rad/s, rad/s², rad/s³, or the
metre equivalents) at the sample times ``t``; :mod:`jointlab.identify.excite` scales them to
a joint's limits.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["chirp", "multisine", "shape", "window", "windowed"]


def window(t: np.ndarray, duration: float, ramp: float) -> np.ndarray:
    """Quintic fade-in and fade-out and their first three derivatives, shape ``(4, n)``."""
    out = np.zeros((4, t.shape[0]))
    out[0] = 1.0
    for start, sign in ((0.0, 1.0), (duration, -1.0)):
        u = np.clip(sign * (t - start) / ramp, 0.0, 1.0)
        inside = u < 1.0
        scale = sign / ramp
        values = np.array(
            [
                10 * u**3 - 15 * u**4 + 6 * u**5,
                (30 * u**2 - 60 * u**3 + 30 * u**4) * scale,
                (60 * u - 180 * u**2 + 120 * u**3) * scale**2,
                (60 - 360 * u + 360 * u**2) * scale**3,
            ]
        )
        out[:, inside] = values[:, inside]
    return out


def windowed(signal: np.ndarray, fade: np.ndarray) -> np.ndarray:
    """Derivatives of ``fade * signal`` by the product rule; both are ``(4, n)``."""
    s, w = signal, fade
    return np.array(
        [
            w[0] * s[0],
            w[1] * s[0] + w[0] * s[1],
            w[2] * s[0] + 2 * w[1] * s[1] + w[0] * s[2],
            w[3] * s[0] + 3 * w[2] * s[1] + 3 * w[1] * s[2] + w[0] * s[3],
        ]
    )


def shape(omega: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Largest amplitude of a sine at ``omega`` under ``bounds`` = (range, v, a, jerk)."""
    return np.min(bounds[:, None] / omega[None, :] ** np.arange(4)[:, None], axis=0)


def multisine(
    t: np.ndarray, harmonics: np.ndarray, period: float, bounds: np.ndarray
) -> np.ndarray:
    """A Schroeder-phased multisine and its derivatives, shape ``(4, n)``."""
    omega = 2 * math.pi * harmonics / period
    count = harmonics.shape[0]
    index = np.arange(1, count + 1)
    phase = -math.pi * index * (index - 1) / count
    amplitude = shape(omega, bounds)
    angle = np.outer(t, omega) + phase
    sin, cos = np.sin(angle), np.cos(angle)
    return np.array(
        [
            sin @ amplitude,
            cos @ (amplitude * omega),
            -(sin @ (amplitude * omega**2)),
            -(cos @ (amplitude * omega**3)),
        ]
    )


def chirp(
    t: np.ndarray, duration: float, band: tuple[float, float], bounds: np.ndarray
) -> np.ndarray:
    """A logarithmic chirp with frequency-shaped amplitude and its derivatives, ``(4, n)``.

    The derivatives are numerical (the amplitude envelope varies slowly); the limits are
    checked on them afterwards like any signal's.
    """
    f0, f1 = band
    rate = math.log(f1 / f0) / duration
    phase = 2 * math.pi * f0 * (np.exp(rate * t) - 1.0) / rate
    omega = 2 * math.pi * f0 * np.exp(rate * t)
    position = shape(omega, bounds) * np.sin(phase)
    step = t[1] - t[0]
    out = [position]
    for _ in range(3):
        out.append(np.gradient(out[-1], step))
    return np.array(out)
