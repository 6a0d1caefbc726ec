"""The one control loop: stopping conditions, the summary, recording and pacing."""

import math

import numpy as np
import pytest

from jointlab.controllers import Commander, GravityCompensation, JointPD, run, with_feedforward
from jointlab.errors import ConfigurationError
from jointlab.recording import Recorder, load_log


def test_run_for_a_duration(gantry):
    controller = with_feedforward(
        JointPD(gantry.description.home), GravityCompensation(gantry.description)
    )
    summary = run(gantry, controller, duration=0.25)
    assert summary.ticks == 250 and summary.stopped_by == "duration"
    assert summary.duration == pytest.approx(0.25)
    assert summary.target_rate is None and summary.overruns == 0
    assert summary.max_tracking_error < 1e-3
    assert 0 < summary.compute_time_median <= summary.compute_time_p99 <= summary.compute_time_max


def test_run_until_a_condition(gantry):
    commander = Commander(gantry)
    commander.set_position("x", 0.5)
    summary = run(gantry, commander, until=lambda state: state.position[0] > 0.45)
    assert summary.stopped_by == "until"
    assert 0.45 < gantry.read().position[0] < 0.5


def test_a_commander_runs_until_idle(gantry):
    commander = Commander(gantry)
    handle = commander.home(-1)
    summary = run(gantry, commander)
    assert summary.stopped_by == "idle" and handle.done


def test_a_plain_controller_needs_a_stopping_condition(gantry):
    with pytest.raises(ConfigurationError, match="duration= or until="):
        run(gantry, JointPD(gantry.description.home))
    with pytest.raises(ConfigurationError, match="rate"):
        run(gantry, JointPD(gantry.description.home), duration=0.1, rate=0.0)


def test_paced_run_reports_its_rate(gantry):
    summary = run(gantry, JointPD(gantry.description.home), duration=0.02, rate=500.0)
    assert summary.target_rate == 500.0 and summary.ticks == 20
    assert math.isfinite(summary.achieved_rate)


def test_recorder_gets_desired_applied_state_and_events(gantry, tmp_path):
    commander = Commander(gantry)
    handle = commander.set_position("x", 0.45)
    path = tmp_path / "run.csv"
    with Recorder(path, gantry) as recorder:
        summary = run(gantry, commander, recorder=recorder)  # until the move is done
    log = load_log(path)
    assert len(log) == summary.ticks
    columns = set(log.columns)
    assert {"desired.position[0]", "applied.torque[0]", "state.position[0]"} <= columns
    # "accepted" happened before the run; the run forwards what happens during it
    assert [event.kind for event in log.events] == ["begin_motion", "end_motion"]
    applied = np.asarray(log["applied.torque[0]"])
    assert np.any(np.abs(applied) > 0) and handle.done
