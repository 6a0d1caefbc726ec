"""Learning curves: evaluation success against environment steps, of one run or of seeds.

:func:`plot_learning_curve` draws one run (``learning_curve.png`` of ``jointlab train``);
:func:`plot_seed_spread` draws several runs of one set-up that differ in their seed: each
run's success smoothed over a few evaluations, their median and the band from the lowest to
the highest, so a reader sees what a seed changes rather than one lucky or unlucky curve.

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
from jointlab.errors import ConfigurationError

__all__ = ["plot_learning_curve", "plot_seed_spread", "save_learning_curve", "smooth"]


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
    bands = np.array(
        [wilson_interval(round(e.success_rate * e.episodes), e.episodes) for e in evaluations]
    ).reshape(-1, 2)
    fig = Figure(figsize=(7.0, 5.0), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(2, 1))
    episodes = evaluations[-1].episodes if evaluations else 0
    top.fill_between(
        steps,
        bands[:, 0],
        bands[:, 1],
        color="tab:green",
        alpha=0.2,
        lw=0,
        label="95 % interval (Wilson)",
    )
    top.plot(
        steps,
        rate,
        "o-",
        color="tab:green",
        ms=4,
        label=f"evaluation success ({episodes} episodes each)",
    )
    top.set_ylim(-0.02, 1.02)
    top.set_ylabel("success rate\n(% of episodes)")
    top.yaxis.set_major_formatter(PercentFormatter(xmax=1.0))
    top.grid(alpha=0.3)
    bottom.plot(
        steps,
        [e.mean_reward for e in evaluations],
        "o-",
        color="tab:blue",
        ms=4,
        label="mean return per episode",
    )
    bottom.set_ylabel("return\n(reward units)")
    bottom.set_xlabel("environment steps [count]")
    bottom.xaxis.set_major_formatter(EngFormatter(sep=""))
    bottom.grid(alpha=0.3)
    handles = [*top.get_legend_handles_labels()[0], *bottom.get_legend_handles_labels()[0]]
    fig.legend(
        handles=handles, loc="outside lower center", ncol=2, frameon=False, fontsize="small"
    )  # outside the axes: it covers no data
    final = f"final success {rate[-1]:.0%}" if evaluations else "no evaluations"
    fig.suptitle(title or final, fontsize="medium")
    return fig


def save_learning_curve(
    evaluations: Sequence[Evaluation], path: str | Path, *, title: str = "", dpi: int = 110
) -> Path:
    """Draw :func:`plot_learning_curve` into the PNG ``path``; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    plot_learning_curve(evaluations, title=title).savefig(path, dpi=dpi)
    return path


def smooth(values: Sequence[float], window: int) -> np.ndarray:
    """Centred moving average over ``window`` points (fewer at the ends), shape of ``values``."""
    values = np.asarray(values, dtype=np.float64)
    if window < 1:
        raise ConfigurationError(f"window must be >= 1 evaluation, got {window}")
    half = window // 2
    return np.array([values[max(0, i - half) : i + half + 1].mean() for i in range(values.size)])


def plot_seed_spread(
    runs: Sequence[Sequence[Evaluation]], *, window: int = 3, title: str = ""
) -> Figure:
    """Smoothed success of runs that differ in their seed: each, their median and range.

    Args:
        runs: The evaluations of each run (e.g. ``read_run(folder).evaluations``).
        window: Evaluations averaged by :func:`smooth` (1: no smoothing).
        title: The figure title (default: the number of seeds and the final median).

    Returns:
        A figure of one panel; the runs are compared at the steps of the first run's
        evaluations up to the shortest run's last one (linear interpolation between a run's
        own evaluations).
    """
    if not runs or any(len(run) == 0 for run in runs):
        raise ConfigurationError("plot_seed_spread needs at least one run, each with evaluations")
    end = min(run[-1].steps for run in runs)
    grid = np.array([e.steps for e in runs[0] if e.steps <= end], dtype=np.float64)
    curves = np.array(
        [
            np.interp(grid, [e.steps for e in run], smooth([e.success_rate for e in run], window))
            for run in runs
        ]
    )
    median = np.median(curves, axis=0)
    fig = Figure(figsize=(7.0, 4.0), layout="constrained")
    ax = fig.subplots()
    for k, curve in enumerate(curves):
        ax.plot(
            grid,
            curve,
            color="tab:green",
            lw=0.8,
            alpha=0.35,
            label="each seed" if k == 0 else None,
        )
    ax.fill_between(
        grid,
        curves.min(axis=0),
        curves.max(axis=0),
        color="tab:green",
        alpha=0.15,
        lw=0,
        label=f"range over {len(runs)} seeds",
    )
    ax.plot(grid, median, color="tab:green", lw=2.0, label="median")
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel(f"success rate, smoothed over {window}\nevaluations (% of episodes)")
    ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0))
    ax.set_xlabel("environment steps [count]")
    ax.xaxis.set_major_formatter(EngFormatter(sep=""))
    ax.grid(alpha=0.3)
    fig.legend(
        handles=ax.get_legend_handles_labels()[0],
        loc="outside lower center",
        ncol=3,
        frameon=False,
        fontsize="small",
    )
    fig.suptitle(
        title or f"{len(runs)} seeds: median success {median[-1]:.0%} at {grid[-1]:,.0f} steps",
        fontsize="medium",
    )
    return fig
