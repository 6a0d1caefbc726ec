"""Success rates with confidence intervals, and the paired difference of two policies.

A success rate from n episodes is a binomial proportion, given with Wilson's score interval
(:func:`jointlab.envs.evaluation.wilson_interval`). Two policies run on the same seeds are
compared by the difference of their rates with Newcombe's interval for paired proportions
(method 10, from the two Wilson intervals and the correlation of the paired outcomes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .evaluation import wilson_interval

__all__ = ["PairedDifference", "Rate", "paired_difference", "success_rate"]


@dataclass(frozen=True)
class Rate:
    """A success rate with its 95 % Wilson interval."""

    successes: int
    trials: int
    low: float
    high: float

    @property
    def value(self) -> float:
        """Successes over trials (0 without trials)."""
        return self.successes / self.trials if self.trials else 0.0

    def __str__(self) -> str:
        return (
            f"{100 * self.value:.1f} % ({self.successes}/{self.trials}; 95 % CI "
            f"{100 * self.low:.1f}-{100 * self.high:.1f} %)"
        )


def success_rate(outcomes: np.ndarray) -> Rate:
    """The :class:`Rate` of boolean episode outcomes."""
    outcomes = np.asarray(outcomes, dtype=bool)
    k, n = int(outcomes.sum()), int(outcomes.size)
    return Rate(k, n, *wilson_interval(k, n))


@dataclass(frozen=True)
class PairedDifference:
    """Rate of policy A minus rate of policy B on the same seeds, with its 95 % interval."""

    difference: float
    low: float
    high: float
    a: Rate
    b: Rate
    #: Seeds only A solved, and only B.
    only_a: int
    only_b: int

    def __str__(self) -> str:
        return (
            f"A - B = {100 * self.difference:+.1f} points (95 % CI {100 * self.low:+.1f} to "
            f"{100 * self.high:+.1f}); A only {self.only_a}, B only {self.only_b} of "
            f"{self.a.trials} seeds"
        )


def paired_difference(a: np.ndarray, b: np.ndarray) -> PairedDifference:
    """Newcombe's (1998, method 10) interval of ``rate(a) - rate(b)`` for paired outcomes.

    Args:
        a: Outcomes of policy A, booleans, shape ``(n,)``.
        b: Outcomes of policy B on the same seeds, same shape.
    """
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"paired outcomes need the same shape, got {a.shape} and {b.shape}")
    n = a.size
    ra, rb = success_rate(a), success_rate(b)
    both = int(np.sum(a & b))
    only_a = int(np.sum(a & ~b))
    only_b = int(np.sum(~a & b))
    neither = n - both - only_a - only_b
    diff = (only_a - only_b) / n if n else 0.0
    # phi: correlation of the paired outcomes (0 when a margin is empty).
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (both * neither - only_a * only_b) / math.sqrt(margins) if margins > 0 else 0.0
    d_low = (
        (ra.value - ra.low) ** 2
        - 2 * phi * (ra.value - ra.low) * (rb.high - rb.value)
        + (rb.high - rb.value) ** 2
    )
    d_high = (
        (ra.high - ra.value) ** 2
        - 2 * phi * (ra.high - ra.value) * (rb.value - rb.low)
        + (rb.value - rb.low) ** 2
    )
    low = diff - math.sqrt(max(d_low, 0.0))
    high = diff + math.sqrt(max(d_high, 0.0))
    return PairedDifference(diff, max(-1.0, low), min(1.0, high), ra, rb, only_a, only_b)
