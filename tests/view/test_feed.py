"""The view's feed: what the control loop copies, in order, with its events."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jointlab
from jointlab.errors import CommandRefused
from jointlab.interface import NJointAction
from jointlab.view import ViewFeed


class _State:
    """What the feed reads of an ArrayState."""

    def __init__(self, time: float, dof: int, q: np.ndarray | None = None) -> None:
        self.time = time
        self.position = np.full(dof, time) if q is None else np.asarray(q, dtype=float)
        self.velocity = np.zeros(dof)
        self.torque = np.zeros(dof)
        self.current = np.zeros(dof)


@settings(max_examples=60, deadline=None)
@given(capacity=st.integers(1, 20), pushes=st.integers(0, 60), n=st.none() | st.integers(1, 30))
def test_the_window_holds_the_newest_samples_oldest_first(capacity, pushes, n):
    feed = ViewFeed(dof=2, capacity=capacity)
    for k in range(pushes):
        feed.push(_State(float(k), 2), np.full(2, -k), np.zeros(2), np.ones(2))
    window = feed.window(n)
    kept = min(pushes, capacity if n is None else min(n, capacity))
    assert window.count == pushes
    assert window.time.tolist() == [float(k) for k in range(pushes - kept, pushes)]
    assert window.rows.shape == (7, kept, 2)
    assert (window.row("position")[:, 0] == window.time).all()
    assert (window.row("desired_position")[:, 1] == -window.time).all()


def test_a_watched_robot_feeds_every_step_and_every_refusal():
    with jointlab.connect("sim://arm6") as robot:
        feed = ViewFeed(robot.dof, capacity=50)
        stop = robot.listen(feed)
        target = robot.description.home + 0.1
        robot.disarm()
        with pytest.raises(CommandRefused):
            robot.apply(NJointAction.Position(target))  # disarmed
        robot.arm()
        robot.apply(NJointAction.Position(target))
        for _ in range(10):
            robot.step()
        window = feed.window()
        assert window.count == 10
        np.testing.assert_allclose(window.row("desired_position")[-1], target)
        np.testing.assert_allclose(window.row("position")[-1], robot.read().position)
        assert [e.kind for e in window.events] == ["refused"]
        assert "disarmed" in window.events[0].text
        stop()
        robot.step()
        assert feed.window().count == 10  # no longer listening


@pytest.mark.parametrize("looks_every", [1, 2, 5])
def test_entering_a_soft_limit_is_one_event_per_entry(looks_every):
    lower, upper = np.array([-1.0, -1.0]), np.array([1.0, 1.0])
    feed = ViewFeed(dof=2, capacity=8, lower=lower, upper=upper)
    for k, q in enumerate(([0.0, 0.0], [1.0, 0.0], [1.2, 0.0], [0.5, -1.0], [0.5, 0.0])):
        feed.push(_State(float(k), 2, q), np.zeros(2), np.zeros(2), np.zeros(2))
        if k % looks_every == looks_every - 1:
            feed.window()  # the view looks at its own rate
    feed.window()
    texts = [event.text for event in feed.window().events]
    assert texts == ["joint 0 at its soft upper limit", "joint 1 at its soft lower limit"]
    assert [event.time for event in feed.window().events] == [1.0, 3.0]


def test_contact_points_of_a_limp_arm_on_the_ground_reach_the_feed():
    with jointlab.connect("sim://arm6") as robot:
        feed = ViewFeed(robot.dof, capacity=10, contacts_every=10)
        robot.listen(feed)
        robot.disarm()  # limp: the arm folds down onto the ground plane
        for _ in range(round(2.0 / robot.control_dt)):
            robot.step()
        contacts = feed.window().contacts
        assert contacts is not None and contacts.shape[1] == 3 and len(contacts) >= 1
        assert np.abs(contacts[:, 2]).max() < 0.02  # on the ground (z = 0)


def test_without_contacts_the_feed_reads_none():
    feed = ViewFeed(dof=2)
    assert feed.window().contacts is None
