"""Logs record what was commanded, the feed-forward and what was sent, as separate channels.

On a servo arm with gravity compensation the Commander sends each position-only servo its
target plus ``g(q)/kp``: the ``sent`` targets carry that offset, the ``commanded`` targets
do not, and plots measure the tracking error against ``commanded`` on every backend.
"""

from __future__ import annotations

import numpy as np
import pytest

import jointlab
from jointlab.controllers import Commander, run
from jointlab.recording import Recorder, load_log
from jointlab.recording.plots import plot_log


@pytest.mark.parametrize("url", ["emulated://so101?lockstep=1", "sim://so101"])
def test_commanded_target_feedforward_and_sent_are_logged_apart(tmp_path, url) -> None:
    with jointlab.connect(url) as robot:
        robot.arm()
        robot.step()
        commander = Commander(robot)
        d = robot.description
        target = d.home.copy()
        target[1] += 0.3  # the shoulder lift, under gravity
        path = tmp_path / "run.npz"
        with Recorder(path, robot) as recorder:
            handle = commander.set_positions(target)
            run(robot, commander, until=lambda _: handle.done, recorder=recorder)
    log = load_log(path)
    commanded = log["commanded.position"][-1]
    sent = log["sent.position"][-1]
    feedforward = log["feedforward.torque"][-1]
    np.testing.assert_allclose(commanded, target, atol=1e-9)  # what was asked, nothing added
    assert abs(feedforward[1]) > 0.05  # gravity loads the shoulder lift, N·m
    # Each joint gets the feed-forward either as torque or, on a position-only servo, as a
    # target offset kp·(p + f/kp − q) = kp·(p − q) + f.
    offset = ~np.isclose(sent, commanded, rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(
        (sent - commanded)[offset], (feedforward / d.default_kp)[offset], atol=1e-9
    )
    np.testing.assert_allclose(log["sent.torque"][-1][~offset], feedforward[~offset], atol=1e-9)
    figure = plot_log(path)  # rows: joints; columns: position, tracking error, torque
    lift = figure.axes[1 * 3]
    (drawn_target,) = [line for line in lift.get_lines() if line.get_gid() == "target"]
    np.testing.assert_allclose(drawn_target.get_ydata(), log["commanded.position"][:, 1])


def test_run_summaries_measure_against_what_was_commanded(tmp_path) -> None:
    """`jointlab run so101 examples/programs/so101_wave.yaml` once said 0.14 rad (the sent
    targets' gravity offset) where its plot and log said 6.6 mrad."""
    from pathlib import Path

    from jointlab.program import run_program

    program = Path(__file__).parents[2] / "examples" / "programs" / "so101_wave.yaml"
    path = tmp_path / "run.npz"
    with jointlab.connect("sim://so101") as robot, Recorder(path, robot) as recorder:
        results = run_program(robot, program, recorder=recorder)
    log = load_log(path)
    q = log["state.position"]
    against_commanded = np.abs(log["commanded.position"] - q)
    against_sent = np.abs(log["sent.position"] - q)
    worst = max(r.summary.max_tracking_error for r in results if r.summary.ticks)
    assert worst == pytest.approx(float(np.nanmax(against_commanded)), rel=1e-12)
    assert worst < 0.02 < float(np.nanmax(against_sent))  # rad: the offset is not an error
    finite = against_commanded[np.isfinite(against_commanded)]
    ticks = [r.summary for r in results if r.summary.ticks]
    total = sum(s.rms_tracking_error**2 * s.ticks for s in ticks) / sum(s.ticks for s in ticks)
    assert np.sqrt(total) == pytest.approx(np.sqrt(np.mean(finite**2)), rel=1e-6)
