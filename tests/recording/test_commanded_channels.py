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
    np.testing.assert_allclose((sent - commanded)[offset], (feedforward / d.default_kp)[offset],
                               atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(log["sent.torque"][-1][~offset], feedforward[~offset], atol=1e-9)
    figure = plot_log(path)  # rows: joints; columns: position, tracking error, torque
    lift = figure.axes[1 * 3]
    (drawn_target,) = [line for line in lift.get_lines() if line.get_gid() == "target"]
    np.testing.assert_allclose(drawn_target.get_ydata(), log["commanded.position"][:, 1])
