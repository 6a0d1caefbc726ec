"""Paired evaluation: two policies on the same seeds, their success difference with its interval.

Two checkpoints evaluated on the same seeded episodes (``lerobot-eval --seed S`` with the same
``--eval.n_episodes``, or :func:`jointlab.envs.evaluation.evaluate` with the same seeds) meet
the same goals and starts, so their outcomes pair up episode by episode. The difference of
success rates then has a much narrower interval than two independent Wilson intervals
suggest: :func:`paired_difference` gives Newcombe's score interval for a difference of paired
proportions (Newcombe 1998, method 10, as worked in Altman et al., *Statistics with
Confidence*, 2000), built on the two Wilson intervals and the
correlation of the pairs. ``b`` and ``c`` (the discordant pairs) are what the difference is
made of; McNemar's exact p-value tests whether it is zero.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jointlab.envs.evaluation import Z_95, wilson_interval
from jointlab.errors import ConfigurationError

__all__ = ["PairedDifference", "lerobot_eval_successes", "paired_difference"]


@dataclass(frozen=True)
class PairedDifference:
    """Success of A minus success of B over the same episodes.

    Attributes:
        episodes: Paired episodes.
        success_a: A's success rate.
        success_b: B's success rate.
        difference: ``success_a - success_b``.
        low: Lower end of the 95 % interval of the difference.
        high: Upper end.
        only_a: Episodes A solved and B did not (``b``).
        only_b: Episodes B solved and A did not (``c``).
        p_value: McNemar's exact two-sided p-value (difference zero).
    """

    episodes: int
    success_a: float
    success_b: float
    difference: float
    low: float
    high: float
    only_a: int
    only_b: int
    p_value: float

    def __str__(self) -> str:
        return (
            f"{self.success_a:.1%} - {self.success_b:.1%} = {self.difference:+.1%} "
            f"[{self.low:+.1%}, {self.high:+.1%}] over {self.episodes} paired episodes "
            f"({self.only_a} only A, {self.only_b} only B; McNemar p = {self.p_value:.3g})"
        )


def paired_difference(
    successes_a: Sequence[bool], successes_b: Sequence[bool], z: float = Z_95
) -> PairedDifference:
    """Newcombe's interval of ``mean(a) - mean(b)`` for outcomes paired by episode.

    Raises:
        ConfigurationError: no episodes, or lists of different lengths (not paired).
    """
    a = np.asarray(successes_a, dtype=bool)
    b = np.asarray(successes_b, dtype=bool)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ConfigurationError(
            f"paired evaluation needs the same episodes for both policies; got {a.size} and "
            f"{b.size} outcomes: evaluate both with the same --seed and --eval.n_episodes"
        )
    n = int(a.size)
    both, only_a = int(np.sum(a & b)), int(np.sum(a & ~b))
    only_b, neither = int(np.sum(~a & b)), int(np.sum(~a & ~b))
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = wilson_interval(both + only_a, n, z)
    l2, u2 = wilson_interval(both + only_b, n, z)
    product = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = 0.0
    if product > 0:
        cross = both * neither - only_a * only_b
        if cross > 0:
            cross = max(cross - n / 2, 0.0)
        phi = cross / math.sqrt(product)
    delta = math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    epsilon = math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    difference = p1 - p2
    return PairedDifference(
        n,
        p1,
        p2,
        difference,
        max(-1.0, difference - delta),
        min(1.0, difference + epsilon),
        only_a,
        only_b,
        _mcnemar(only_a, only_b),
    )


def _mcnemar(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value: a binomial test of ``b`` in ``b + c`` at 1/2."""
    total = b + c
    if total == 0:
        return 1.0
    tail = sum(math.comb(total, k) for k in range(min(b, c) + 1)) / 2.0**total
    return min(1.0, 2.0 * tail)


def lerobot_eval_successes(path: str | Path) -> list[bool]:
    """Per-episode successes of a ``lerobot-eval`` run (its ``eval_info.json``, in seed order).

    Args:
        path: The run's output folder or its ``eval_info.json``.

    Raises:
        ConfigurationError: not a ``lerobot-eval`` result.
    """
    path = Path(path).expanduser()
    if path.is_dir():
        path = path / "eval_info.json"
    try:
        info = json.loads(path.read_text())
        tasks = info["per_task"]
        return [bool(s) for task in tasks for s in task["metrics"]["successes"]]
    except FileNotFoundError:
        raise ConfigurationError(f"{path}: no such file (a lerobot-eval --output_dir?)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigurationError(
            f"{path}: not a lerobot-eval eval_info.json with per_task successes ({exc!r})"
        ) from None
