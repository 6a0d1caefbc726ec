"""Every figure the project draws: units on both axes, no legend over data, readable ticks."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from figure_hygiene import figure_problems
from recording_helpers import Run

from jointlab.recording import Recorder, plots


@pytest.fixture
def log_path(tmp_path, run: Run) -> Path:
    path = tmp_path / "run.npz"
    with Recorder(path, run.metadata) as rec:
        for k, t in enumerate(run.times):
            rec.log(t, desired=run.desired[k], applied=run.applied[k], state=run.states[k])
            if k == 5:
                rec.event(t, "command", verb="set_position")
    return path


def test_a_run_plot_passes(log_path):
    assert figure_problems(plots.plot_log(log_path)) == []


def test_a_comparison_plot_passes(log_path):
    assert figure_problems(plots.plot_comparison({"sim": log_path, "device": log_path})) == []


@pytest.mark.parametrize("episodes", [3, 10, 100])
def test_an_evaluation_plot_passes(episodes):
    rng = np.random.default_rng(episodes)
    returns = rng.normal(-20.0, 5.0, episodes)
    successes = rng.random(episodes) < 0.6
    assert figure_problems(plots.plot_episodes(returns, successes)) == []


def test_the_checker_catches_what_it_forbids():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 3))
    ax = fig.subplots()
    ax.plot(np.linspace(0, 1, 50), np.linspace(0, 1, 50), label="a long legend label here")
    ax.set_xticks(np.linspace(0, 1, 60))
    ax.set_ylabel("position")
    ax.legend(loc="center")
    problems = figure_problems(fig)
    assert any("no unit" in p and "y label" in p for p in problems)
    assert any("x label" in p for p in problems)
    assert any("legend covers" in p for p in problems)
    assert any("tick labels overlap" in p for p in problems)


def test_an_identification_validation_plot_passes():
    from jointlab.identify.validation import ValidationReport

    t = np.linspace(0.0, 2.0, 400)
    measured = np.column_stack([np.sin(t), np.cos(t)])
    report = ValidationReport(
        joints=("a", "b"), time=t, usable=np.ones(t.size, dtype=bool), measured=measured,
        nominal=measured + 0.05, identified=measured + 0.01,
    )  # fmt: skip
    assert figure_problems(report.plot()) == []


def _evaluations(seed: int, points: int = 12):
    from jointlab.envs.run_record import Evaluation

    rng = np.random.default_rng(seed)
    success = np.clip(np.linspace(0.0, 0.9, points) + rng.normal(0, 0.05, points), 0, 1)
    return [Evaluation(steps=2048 * (k + 1), episodes=20, success_rate=float(s),
                       mean_reward=float(-30 + 20 * s), mean_length=50.0)
            for k, s in enumerate(success)]  # fmt: skip


def test_the_learning_curves_pass():
    from jointlab.envs.learning_curve import plot_learning_curve, plot_seed_spread

    assert figure_problems(plot_learning_curve(_evaluations(0))) == []
    assert figure_problems(plot_seed_spread([_evaluations(s) for s in range(3)])) == []
