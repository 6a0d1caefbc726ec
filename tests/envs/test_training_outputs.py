"""What a `jointlab train` run leaves to watch: TensorBoard logs, a learning curve, run.json,
and `jointlab runs` listing it; bad run folders are a message, never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlab.cli import main
from jointlab.envs.run_record import RunError, TrainingRun, read_run

#: Scalars every run logs: ours (evaluation) and SB3's (training episodes and PPO's losses).
TAGS = {
    "eval/success_rate",
    "eval/mean_reward",
    "eval/mean_ep_length",
    "rollout/ep_rew_mean",
    "rollout/ep_len_mean",
    "rollout/success_rate",
    "train/loss",
    "train/policy_gradient_loss",
    "train/value_loss",
    "train/entropy_loss",
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One tiny seeded run (one rollout of 2048 steps, evaluated at 1024 and 2048)."""
    pytest.importorskip("stable_baselines3")
    pytest.importorskip("tensorboard")
    out = tmp_path_factory.mktemp("runs")
    argv = [
        "train",
        "reach",
        "--steps",
        "300",
        "--envs",
        "1",
        "--seed",
        "3",
        "--out",
        str(out),
        "--eval-every",
        "1024",
        "--eval-episodes",
        "2",
    ]
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert main(argv) == 0
    return out / "train-reach", stdout.getvalue()


@pytest.mark.slow
def test_training_leaves_tensorboard_scalars_at_the_evaluated_steps(trained) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    folder, printed = trained
    assert f"TensorBoard logs: {folder / 'tensorboard'}" in printed
    events = EventAccumulator(str(folder / "tensorboard"))
    events.Reload()
    assert TAGS <= set(events.Tags()["scalars"])
    assert [e.step for e in events.Scalars("eval/success_rate")] == [1024, 2048]
    assert [e.value for e in events.Scalars("eval/mean_ep_length")] == [50.0, 50.0]
    run = read_run(folder)
    rewards = [e.value for e in events.Scalars("eval/mean_reward")]
    assert rewards == pytest.approx([e.mean_reward for e in run.evaluations], rel=1e-6)
    assert all(0.0 <= e.value <= 1.0 for e in events.Scalars("rollout/success_rate"))
    assert events.Scalars("train/loss")[-1].step == 2048


@pytest.mark.slow
def test_training_leaves_a_learning_curve_and_a_run_record(trained) -> None:
    from PIL import Image

    folder, printed = trained
    curve = folder / "learning_curve.png"
    assert f"learning curve: {curve}" in printed
    with Image.open(curve) as image:
        image.verify()
        assert image.format == "PNG" and image.size[0] > 400 and image.size[1] > 300
    run = read_run(folder)
    assert (run.task, run.env_id, run.engine, run.seed, run.envs) == (
        "reach",
        "jointlab/Reach-v0",
        "pybullet",
        3,
        1,
    )
    assert run.steps == 2048 and run.wall_time > 0
    assert [(e.steps, e.episodes, e.mean_length) for e in run.evaluations] == [
        (1024, 2, 50.0),
        (2048, 2, 50.0),
    ]
    assert (folder / "model.zip").is_file() and (folder / "vecnormalize.pkl").is_file()


@pytest.mark.slow
def test_runs_lists_the_run_with_its_final_metrics(trained, capsys) -> None:
    folder, _ = trained
    final = read_run(folder).final
    for where in (folder.parent, folder):  # the folder of runs, or one run
        assert main(["runs", str(where)]) == 0
        out = capsys.readouterr().out
        row = next(line for line in out.splitlines() if line.startswith("│ train-reach"))
        for cell in (
            "reach",
            "pybullet",
            "2,048",
            f"{final.success_rate:.0%} of 2",
            f"{final.mean_reward:.2f}",
        ):
            assert cell in row, (cell, row)


# ------------------------------------------------------------------------- bad input
def _record(**changes: object) -> dict:
    value = TrainingRun("reach", "jointlab/Reach-v0", "pybullet", 0, 1, 2048, 1.5).to_json()
    return {**value, **changes}


def test_runs_in_an_empty_folder_says_so(tmp_path, capsys) -> None:
    assert main(["runs", str(tmp_path)]) == 0
    assert "no training runs in" in capsys.readouterr().out


def test_runs_of_a_missing_folder_is_one_line(tmp_path, capsys) -> None:
    assert main(["runs", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "nowhere is not a folder" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "is not valid JSON"),
        (json.dumps({"steps": 5}), "not a JointLab run record"),
        (json.dumps(_record(version=7)), "run record version 7; this JointLab reads 1 to 1"),
        (json.dumps({k: v for k, v in _record().items() if k != "engine"}), "'engine' is missing"),
        (json.dumps(_record(steps="many")), "wrong type"),
        (None, "no run record (not a training run, or one trained by an older JointLab"),
    ],
)
def test_runs_names_an_unreadable_run_and_lists_the_good_ones(
    tmp_path, capsys, content, expected
) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    (good / "run.json").write_text(json.dumps(_record()))
    (bad / "model.zip").write_bytes(b"PK")
    if content is not None:
        (bad / "run.json").write_text(content)
    assert main(["runs", str(tmp_path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "good │ reach │ pybullet │ 2,048" in out
    assert f"unreadable: {bad / 'run.json'}" in out and expected in out
    with pytest.raises(RunError, match=str(bad / "run.json")):
        read_run(bad)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(changes=st.dictionaries(st.sampled_from(list(_record())), JSON, max_size=4))
def test_any_run_record_reads_or_raises_run_error(changes) -> None:
    try:
        run = TrainingRun.from_json(_record(**changes), "x/run.json")
    except RunError as exc:
        assert "x/run.json" in str(exc)
    else:
        assert TrainingRun.from_json(run.to_json()) == run


def test_the_cli_defaults_are_the_training_modules() -> None:
    from jointlab.cli import train as cli
    from jointlab.envs import training
    from jointlab.sim.engine import DEFAULT_ENGINE, ENGINES

    assert (cli.ENGINES, cli.DEFAULT_ENGINE) == (ENGINES, DEFAULT_ENGINE)
    assert (cli.EVAL_EVERY, cli.EVAL_EPISODES) == (training.EVAL_EVERY, training.EVAL_EPISODES)


def test_the_learning_curve_labels_its_axes_and_keeps_the_legend_off_the_data() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from jointlab.envs.learning_curve import plot_learning_curve
    from jointlab.envs.run_record import Evaluation

    evaluations = [
        Evaluation(s, 20, r, -20.0 + s / 1e4, 50.0)
        for s, r in ((5000, 0.1), (10000, 0.45), (15000, 0.9))
    ]
    fig = plot_learning_curve(evaluations)
    FigureCanvasAgg(fig).draw()
    top, bottom = fig.axes
    assert bottom.get_xlabel() == "environment steps [count]"
    assert "success rate" in top.get_ylabel() and "% of episodes" in top.get_ylabel()
    (line,) = [ln for ln in top.get_lines() if ln.get_label().startswith("evaluation success")]
    assert list(line.get_xdata()) == [5000, 10000, 15000]
    assert list(line.get_ydata()) == [0.1, 0.45, 0.9]
    (legend,) = fig.legends
    box = legend.get_window_extent()
    assert not any(box.overlaps(ax.get_window_extent()) for ax in (top, bottom))
    assert fig.get_suptitle() == "final success 90%"


def test_the_seed_spread_is_the_median_and_range_of_the_smoothed_runs() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from jointlab.envs.learning_curve import plot_seed_spread, smooth
    from jointlab.envs.run_record import Evaluation

    assert list(smooth([0.0, 1.0, 0.0, 1.0], 3)) == [0.5, 1 / 3, 2 / 3, 0.5]
    rates = ([0.0, 0.3, 0.6, 0.9], [0.0, 0.0, 0.3, 0.6], [0.3, 0.6, 0.9, 1.0])
    runs = [
        [Evaluation(1000 * (i + 1), 10, r, 0.0, 50.0) for i, r in enumerate(seed)] for seed in rates
    ]
    fig = plot_seed_spread(runs, window=1)
    FigureCanvasAgg(fig).draw()
    (ax,) = fig.axes
    (median,) = [ln for ln in ax.get_lines() if ln.get_label() == "median"]
    assert list(median.get_ydata()) == [0.0, 0.3, 0.6, 0.9]
    assert "3 seeds: median success 90% at 4,000 steps" == fig.get_suptitle()
    assert not fig.legends[0].get_window_extent().overlaps(ax.get_window_extent())
    with pytest.raises(ValueError, match="at least one run"):
        plot_seed_spread([runs[0], []])
