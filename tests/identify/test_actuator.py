"""Saturation and latency on simulated devices; torque constant errors."""

from __future__ import annotations

import numpy as np
import pytest

import jointlab
from jointlab.identify import (
    IdentificationError,
    connect_planted,
    excitation,
    fit,
    plant,
    record_excitation,
)
from jointlab.interface import NJointAction
from jointlab.recording import LogMetadata, Recorder


class Steps:
    """Position steps of ±``size`` about home every ``period`` seconds (PD at default gains)."""

    def __init__(self, home: np.ndarray, size: float, period: float) -> None:
        self.home, self.size, self.period = home, size, period

    def reset(self, state) -> None:
        pass

    def compute(self, state) -> NJointAction:
        sign = 1.0 if int(state.time / self.period) % 2 == 0 else -1.0
        return NJointAction.Position(self.home + sign * self.size)


@pytest.fixture(scope="module")
def saturated_log(tmp_path_factory, arm6):
    planted = plant(arm6, effort=0.7)
    path = tmp_path_factory.mktemp("effort") / "steps.npz"
    with connect_planted(planted, arm6) as robot:
        with Recorder(path, LogMetadata.from_robot(robot, physics_dt=0.001)) as recorder:
            jointlab.run(robot, Steps(arm6.home, 0.05, 0.25), duration=1.0, recorder=recorder)
    return path, planted


def test_saturation_is_read_from_clamped_rows(saturated_log, arm6):
    path, planted = saturated_log
    result = fit(path, arm6, parameters=["effort"])
    for j, name in enumerate(arm6.joint_names):
        estimate = result.estimate("effort", name)
        assert estimate.value == pytest.approx(planted.effort_limit[j], rel=1e-6)
        assert estimate.low <= estimate.value <= estimate.high
        assert estimate.field == "limits.effort"
    identified = result.to_description()
    np.testing.assert_allclose(identified.effort_limit, planted.effort_limit, rtol=1e-5)


def test_a_log_that_never_saturates_says_so(tmp_path, arm6):
    with jointlab.connect("sim://arm6") as robot:
        path = record_excitation(
            robot,
            excitation(arm6, ["wrist_yaw"], duration=2.5, ramp=0.5, band=(0.5, 1.5), hold=0.1),
            tmp_path / "gentle.npz",
        )
    with pytest.raises(IdentificationError) as info:
        fit(path, arm6, joints=["wrist_yaw"], parameters=["effort"])
    assert "effort (limits.effort) of joint 'wrist_yaw' cannot be identified" in str(info.value)
    assert "never saturated" in str(info.value)


def test_latency_is_found_by_replay_when_rows_span_several_physics_steps(tmp_path, arm6):
    planted = plant(arm6, delay=[0, 0, 0, 0, 1, 0])  # only the joint searched
    program = excitation(arm6, ["wrist_pitch"], duration=2.5, ramp=0.5, band=(0.5, 1.5), hold=0.1)
    with connect_planted(planted, arm6, control_dt=0.002) as robot:
        path = record_excitation(robot, program, tmp_path / "slow.npz")
    result = fit(path, arm6, joints=["wrist_pitch"], parameters=["delay"], max_delay=3)
    estimate = result.estimate("delay", "wrist_pitch")
    assert estimate.value == 1 and estimate.unit == "steps"
    candidates, scores = result.delay_scores["wrist_pitch"]
    assert list(candidates) == [0, 1, 2, 3]  # no first guess at two steps per row
    assert scores[1] == 0.0 and scores[0] > 0.0  # the replay reproduces the device exactly
