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
        joints=("a", "b"),
        time=t,
        usable=np.ones(t.size, dtype=bool),
        measured=measured,
        nominal=measured + 0.05,
        identified=measured + 0.01,
    )
    assert figure_problems(report.plot()) == []


def _evaluations(seed: int, points: int = 12):
    from jointlab.envs.run_record import Evaluation

    rng = np.random.default_rng(seed)
    success = np.clip(np.linspace(0.0, 0.9, points) + rng.normal(0, 0.05, points), 0, 1)
    return [
        Evaluation(
            steps=2048 * (k + 1),
            episodes=20,
            success_rate=float(s),
            mean_reward=float(-30 + 20 * s),
            mean_length=50.0,
        )
        for k, s in enumerate(success)
    ]


def test_the_learning_curves_pass():
    from jointlab.envs.learning_curve import plot_learning_curve, plot_seed_spread

    assert figure_problems(plot_learning_curve(_evaluations(0))) == []
    assert figure_problems(plot_seed_spread([_evaluations(s) for s in range(3)])) == []


def test_an_evaluation_plot_with_its_summary_title_passes():
    """`jointlab eval` titles the plot with its one-line summary (long with a URL)."""
    rng = np.random.default_rng(10)
    title = (
        "jointlab/Reach-v0 on sim://arm6?engine=mujoco: 10 episodes, success 60%, "
        "return -20.12 ± 4.87"
    )
    fig = plots.plot_episodes(rng.normal(-20.0, 5.0, 10), rng.random(10) < 0.6, title=title)
    assert figure_problems(fig) == []


PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"


@pytest.mark.parametrize(
    ("url", "program"),
    [
        ("sim://so101", "so101_wave.yaml"),  # servo arm: torques near the summary boxes
        ("sim://arm6", "first_program.yaml"),  # commands close together: stacked labels
        ("sim://gantry3", "gantry_square.yaml"),  # linear joints (mm, N)
    ],
)
def test_the_run_plot_of_jointlab_run_passes(tmp_path, monkeypatch, url, program):
    """The plot `jointlab run` writes (execute_program), of the shipped example programs."""
    from jointlab.cli.programs import PLOT_NAME, execute_program
    from jointlab.program import load_program

    figures = []
    original = plots.save

    def keep(fig, path, **kwargs):
        figures.append(fig)
        return original(fig, path, **kwargs)

    monkeypatch.setattr(plots, "save", keep)  # execute_program imports it when it runs
    execute_program(url, load_program(PROGRAMS / program), tmp_path, f"{program} on {url}")
    assert (tmp_path / PLOT_NAME).exists()
    (fig,) = figures
    assert figure_problems(fig) == []


def test_the_checker_catches_texts_over_data_and_each_other():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 3), layout="constrained")
    ax = fig.subplots()
    t = np.linspace(0, 1, 50)
    ax.plot(t, t)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("position [rad]")
    ax.text(0.5, 0.5, "a box over the line", transform=ax.transAxes, ha="center")
    ax.annotate("one label", (0.1, 1.0), xycoords=("data", "axes fraction"))
    ax.annotate("another label", (0.12, 1.0), xycoords=("data", "axes fraction"))
    ax.set_title("a title long enough to meet the legend", loc="right")
    fig.legend(["line"], loc="upper right")
    problems = figure_problems(fig)
    assert any("covers" in p and "a box over the line" in p for p in problems), problems
    assert any("'one label' and 'another label' overlap" in p for p in problems), problems
    assert any("the legend overlap" in p for p in problems), problems
