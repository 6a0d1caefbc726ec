"""The learning curve of a training run: evaluation success against environment steps.

Drawn on a bare :class:`matplotlib.figure.Figure` and rendered with the Agg canvas, so no
pyplot state or display is involved and it works headless.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, PercentFormatter

from jointlab.envs.evaluation import wilson_interval
from jointlab.envs.run_record import Evaluation

__all__ = ["plot_learning_curve", "save_learning_curve"]


def plot_learning_curve(evaluations: Sequence[Evaluation], *, title: str = "") -> Figure:
    """Success rate (with its Wilson 95 % interval) and mean return against steps.

    Args:
        evaluations: The run's evaluations in training order.
        title: The figure title (default: the final success rate).

    Returns:
        A figure of two panels sharing the x axis (environment steps).
    """
    steps = np.array([e.steps for e in evaluations], dtype=np.float64)
    rate = np.array([e.success_rate for e in evaluations])
    bands = np.array([wilson_interval(round(e.success_rate * e.episodes), e.episodes)
                      for e in evaluations]).reshape(-1, 2)  # fmt: skip
    fig = Figure(figsize=(7.0, 5.0), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(2, 1))
    episodes = evaluations[-1].episodes if evaluations else 0
    top.fill_between(steps, bands[:, 0], bands[:, 1], color="tab:green", alpha=0.2, lw=0,
                     label="95 % interval (Wilson)")  # fmt: skip
    top.plot(steps, rate, "o-", color="tab:green", ms=4,
             label=f"evaluation success ({episodes} episodes each)")  # fmt: skip
    top.set_ylim(-0.02, 1.02)
    top.set_ylabel("success rate\n(% of episodes)")
    top.yaxis.set_major_formatter(PercentFormatter(xmax=1.0))
    top.grid(alpha=0.3)
    bottom.plot(steps, [e.mean_reward for e in evaluations], "o-", color="tab:blue", ms=4,
                label="mean return per episode")  # fmt: skip
    bottom.set_ylabel("return\n(reward units)")
    bottom.set_xlabel("environment steps")
    bottom.xaxis.set_major_formatter(EngFormatter(sep=""))
    bottom.grid(alpha=0.3)
    handles = [*top.get_legend_handles_labels()[0], *bottom.get_legend_handles_labels()[0]]
    fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False,
               fontsize="small")  # outside the axes: it covers no data  # fmt: skip
    final = f"final success {rate[-1]:.0%}" if evaluations else "no evaluations"
    fig.suptitle(title or final, fontsize="medium")
    return fig


def save_learning_curve(evaluations: Sequence[Evaluation], path: str | Path, *,
                        title: str = "", dpi: int = 110) -> Path:  # fmt: skip
    """Draw :func:`plot_learning_curve` into the PNG ``path``; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    plot_learning_curve(evaluations, title=title).savefig(path, dpi=dpi)
    return path
