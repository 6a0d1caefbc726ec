"""Argument handling of ``examples/05_sim_to_sim.py`` (training itself is not run here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("torch")

PATH = Path(__file__).resolve().parents[2] / "examples" / "05_sim_to_sim.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("sim_to_sim_example", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_push_defaults_and_policy_names(example):
    args = example.parse_args(["--experiment", "push", "--max-minutes", "35", "--stop-at", "10"])
    assert args.steps == 3_000_000 and args.episodes == 100 and args.max_minutes == 35
    assert args.out == Path("/tmp/sim_to_sim_push") and args.stop_at == 10
    assert example.policy_names(example.EXPERIMENTS["push"]) == [
        "mujoco-nominal",
        "mujoco-randomised",
    ]
    assert example.EXPERIMENTS["push"].env_kwargs["success_threshold"] == 0.10
    reach = example.parse_args([])
    assert reach.experiment == "reach" and reach.steps == 300_000
    assert len(example.policy_names(example.EXPERIMENTS["reach"])) == 4
    overridden = example.parse_args(["--experiment", "push", "--set", "reach_weight=1.0"])
    assert overridden.overrides == {"reach_weight": 1.0}


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--experiment", "push", "--only", "pybullet-nominal"], "mujoco-nominal"),
        (["--stop-at", "0"], "--stop-at must be >= 1"),
        (["--max-minutes", "-1"], "--max-minutes must be > 0"),
        (["--set", "reach_weight"], "KEY=VALUE"),
        (["--experiment", "grasp"], "invalid choice"),
    ],
)
def test_bad_arguments_are_named(example, argv, words, capsys):
    with pytest.raises(SystemExit):
        example.parse_args(argv)
    assert words in capsys.readouterr().err
