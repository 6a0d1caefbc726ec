"""``jointlab eval ROBOT expert --env ID`` (Wilson interval, --paired) and ``jointlab record``."""

import json

import numpy as np
import pytest

from jointlab.cli import main
from jointlab.envs.evaluation import wilson_interval
from jointlab.envs.statistics import paired_difference, success_rate


def test_eval_prints_success_with_its_interval_and_the_paired_difference(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            [
                "eval",
                "so101",
                "expert",
                "--env",
                "jointlab/Lift-v0",
                "--episodes",
                "2",
                "--paired",
                "expert",
                "--out",
                str(tmp_path),
                "--name",
                "eval",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.count("95 % CI") == 3 and "paired (expert - expert): A - B = +0.0 points" in out
    assert "control period 40.0 ms (checked every step" in out
    summary = json.loads((tmp_path / "eval" / "summary.json").read_text())
    assert summary["seeds"] == [0, 1] and summary["paired"]["difference"] == 0.0
    assert summary["policies"][0]["successes"] == summary["policies"][1]["successes"]


def test_record_writes_expert_demonstrations(tmp_path, capsys):
    assert (
        main(
            [
                "record",
                "so101",
                "expert",
                "--env",
                "jointlab/Lift-v0",
                "--episodes",
                "1",
                "--out",
                str(tmp_path),
                "--name",
                "demos",
            ]
        )
        == 0
    )
    data = np.load(tmp_path / "demos" / "demos.npz")
    assert data["action"].shape == (50, 4) and data["joint_target"].shape == (50, 6)
    assert data["success"].shape == (1,) and data["seed"].tolist() == [0]


def test_the_manipulation_tasks_need_a_simulated_robot(capsys):
    assert main(["eval", "emulated://so101", "expert", "--env", "jointlab/Lift-v0"]) == 2
    assert "the manipulation tasks need a simulated robot" in capsys.readouterr().err


def test_paired_difference_brackets_the_difference_and_is_antisymmetric():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(size=200) < 0.9, rng.uniform(size=200) < 0.7
    ab, ba = paired_difference(a, b), paired_difference(b, a)
    assert ab.difference == pytest.approx(a.mean() - b.mean())
    assert ab.low < ab.difference < ab.high
    assert (ab.low, ab.high) == pytest.approx((-ba.high, -ba.low))
    assert str(success_rate(a)).startswith(f"{100 * a.mean():.1f} %")
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
