"""Replaying a log: the same actions on a robot, for as long as each was in force."""

from __future__ import annotations

import numpy as np
import pytest

import jointlab
from jointlab.errors import ConfigurationError
from jointlab.program import run_program
from jointlab.recording import Recorder, load_log
from jointlab.recording.replay import logged_actions, replay

PROGRAM = "- set_position: {joint: elbow, position: 0.9}\n- hold: {for: 0.1}\n"


def recorded(tmp_path, url="sim://planar2?control_dt=0.002"):
    with jointlab.connect(url) as robot, Recorder(tmp_path / "run.npz", metadata=robot) as rec:
        run_program(robot, PROGRAM, recorder=rec)
    return load_log(tmp_path / "run.npz")


def test_replay_in_the_same_simulator_is_bit_exact(tmp_path) -> None:
    log = recorded(tmp_path)
    with jointlab.connect("sim://planar2?control_dt=0.002") as robot:
        with Recorder(tmp_path / "again.npz", metadata=robot) as recorder:
            replay(robot, log, recorder=recorder)
    again = load_log(tmp_path / "again.npz")
    assert np.array_equal(again["state.position"], log["state.position"])
    assert np.array_equal(again["desired.position"], log["desired.position"], equal_nan=True)


def test_a_late_row_is_replayed_for_every_period_it_was_in_force(tmp_path) -> None:
    log = recorded(tmp_path)
    path = tmp_path / "late.npz"
    with Recorder(path, metadata=log.metadata) as recorder:  # row 3 stays in force 3 periods
        actions = logged_actions(log)
        for k in range(6):
            t = log.time[k] + (0.004 if k > 3 else 0.0)
            recorder.log(
                t,
                desired=actions[k],
                state={"position": log["state.position"][k], "velocity": log["state.velocity"][k]},
            )
    with jointlab.connect("sim://planar2?control_dt=0.002") as robot:
        with Recorder(tmp_path / "replayed.npz", metadata=robot) as recorder:
            replay(robot, path, recorder=recorder)
    assert len(load_log(tmp_path / "replayed.npz")) == 8


def test_replay_refuses_what_it_cannot_do(tmp_path) -> None:
    log = recorded(tmp_path)
    with jointlab.connect("sim://arm6?control_dt=0.002") as robot:
        with pytest.raises(ConfigurationError, match="2-joint actions; arm6 has 6 joints"):
            replay(robot, log)
    with jointlab.connect("sim://planar2") as robot:
        with pytest.raises(ConfigurationError, match=r"recorded every 0\.002 s"):
            replay(robot, log)
    with Recorder(tmp_path / "states.npz") as recorder:
        recorder.log(0.0, state={"position": [0.0, 0.0]})
    with pytest.raises(ConfigurationError, match="no actions to replay"):
        logged_actions(load_log(tmp_path / "states.npz"))


def test_a_log_that_starts_resting_on_a_stop_replays_from_that_stop(tmp_path) -> None:
    """An arm found resting on a hard stop reads a hair beyond it (an emulated arm that settled
    limp under gravity does too); replay starts it on the stop, and refuses a real overshoot."""
    log = recorded(tmp_path)
    upper = jointlab.load_robot("planar2").upper
    for beyond, accepted in ((2e-6, True), (0.01, False)):
        path = tmp_path / f"stop-{beyond}.npz"
        with Recorder(path, metadata=log.metadata) as recorder:
            for k, action in enumerate(logged_actions(log)[:5]):
                position = np.array(log["state.position"][k])
                if k == 0:
                    position[1] = upper[1] + beyond
                state = {"position": position, "velocity": log["state.velocity"][k]}
                recorder.log(log.time[k], desired=action, state=state)
        with jointlab.connect("sim://planar2?control_dt=0.002") as robot:
            if accepted:
                replay(robot, path)
                assert robot.read().position[1] <= upper[1] + 1e-3
            else:
                with pytest.raises(ConfigurationError, match=r"q\[1\] = .* lies outside"):
                    replay(robot, path)
