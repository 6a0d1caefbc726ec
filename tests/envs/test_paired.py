"""Paired evaluation: Newcombe's interval of a difference of paired success rates."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointlab.envs.paired import lerobot_eval_successes, paired_difference
from jointlab.errors import ConfigurationError


def test_a_worked_example() -> None:
    # 40 vs 35 of 50, the 5 differences all one way (Altman's method: phi corrected by n/2).
    a = [True] * 40 + [False] * 10
    b = [True] * 35 + [False] * 15
    result = paired_difference(a, b)
    assert result.difference == pytest.approx(0.10)
    assert (result.low, result.high) == pytest.approx((0.00662, 0.19745), abs=5e-5)
    assert (result.only_a, result.only_b) == (5, 0)
    assert result.p_value == pytest.approx(0.0625)  # 2 * 0.5**5


def test_pairing_narrows_the_interval_against_independent_samples() -> None:
    rng = np.random.default_rng(3)
    shared = rng.random(100) < 0.6
    a, b = shared.copy(), shared.copy()
    b[:6] = ~b[:6]  # six episodes differ
    paired = paired_difference(a, b)
    unpaired = paired_difference(a, rng.permutation(b))  # the same rates, pairing destroyed
    assert paired.high - paired.low < unpaired.high - unpaired.low


def test_same_outcomes_give_zero_and_p_one() -> None:
    result = paired_difference([True, False, True], [True, False, True])
    assert result.difference == 0.0 and result.low <= 0.0 <= result.high
    assert result.p_value == 1.0


def test_unpaired_lists_are_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"same --seed and --eval\.n_episodes"):
        paired_difference([True, False], [True])


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=200))
def test_the_interval_holds_the_estimate_inside_minus_one_to_one(pairs) -> None:
    a, b = zip(*pairs, strict=True)
    result = paired_difference(a, b)
    assert -1.0 <= result.low <= result.difference <= result.high <= 1.0
    assert 0.0 <= result.p_value <= 1.0


def test_lerobot_eval_results_are_read_in_seed_order(tmp_path) -> None:
    info = {
        "per_task": [
            {"task_group": "jointlab", "task_id": 0, "metrics": {"successes": [True, False, True]}}
        ]
    }
    (tmp_path / "eval_info.json").write_text(json.dumps(info))
    assert lerobot_eval_successes(tmp_path) == [True, False, True]
    with pytest.raises(ConfigurationError, match="no such file"):
        lerobot_eval_successes(tmp_path / "missing")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ConfigurationError, match="not a lerobot-eval"):
        lerobot_eval_successes(tmp_path / "bad.json")
