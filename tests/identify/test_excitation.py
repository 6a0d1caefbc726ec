"""Excitation programs: inside every soft limit, above the floor, runnable on a backend."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jointlab
from jointlab.errors import ConfigurationError, DescriptionError
from jointlab.identify import Excitation, excitation, record_excitation
from jointlab.identify.excite import MIN_FLOOR_SCALE, _floor_heights
from jointlab.recording import load_log
from jointlab.robots.stops import STOP_TOLERANCE


def _check_limits(description, program: Excitation, fraction: float) -> None:
    soft_low, soft_high = description.soft_lower, description.soft_upper
    for segment in program.segments:
        index = [description.joint_index(name) for name in segment.joints]
        position = segment.position
        assert np.all(position >= soft_low[index] - 1e-12)
        assert np.all(position <= soft_high[index] + 1e-12)
        room = np.minimum(program.centre - soft_low, soft_high - program.centre)[index]
        limits = np.array(
            [
                room,
                description.soft_velocity_limit[index],
                description.soft_acceleration_limit[index],
                description.soft_jerk_limit[index],
            ]
        )
        assert np.all(segment.peaks <= fraction * limits * (1 + 1e-9))
        assert np.all(np.abs(segment.velocity) <= fraction * limits[1] * (1 + 1e-9))
        # at rest on the centre at both ends
        for row in (0, -1):
            np.testing.assert_allclose(position[row], program.centre[index], atol=1e-9)
            np.testing.assert_allclose(segment.velocity[row], 0.0, atol=1e-9)
            np.testing.assert_allclose(segment.acceleration[row], 0.0, atol=1e-9)


@settings(max_examples=12, deadline=None)
@given(
    signal=st.sampled_from(["multisine", "chirp"]),
    fraction=st.floats(0.2, 1.0),
    low=st.floats(0.2, 0.6),
    width=st.floats(0.3, 2.5),
    sequential=st.booleans(),
)
def test_excitations_stay_inside_the_soft_limits(arm6, signal, fraction, low, width, sequential):
    if not sequential and signal == "chirp":
        sequential = True
    duration = 5.0 if sequential else (arm6.dof + 2) / width
    program = excitation(
        arm6,
        duration=duration,
        signal=signal,
        fraction=fraction,
        band=(low, low + width),
        sequential=sequential,
    )
    _check_limits(arm6, program, fraction)
    assert program.joints == arm6.joint_names


@pytest.mark.parametrize("robot", ["planar2", "gantry3", "trifinger", "coupled_gripper"])
def test_every_builtin_robot_gets_an_excitation_of_its_independent_joints(robot):
    description = jointlab.load_robot(robot)
    program = excitation(description, duration=4.0)
    independent = tuple(
        n for n, d in zip(description.joint_names, description.dependent, strict=True) if not d
    )
    assert program.joints == independent
    _check_limits(description, program, 0.8)


def test_links_stay_above_the_floor(arm6):
    centre = arm6.home.copy()
    centre[1] = 0.8  # shoulder leaning forward: the elbow swing brings the wrist down
    program = excitation(
        arm6, ["elbow", "shoulder_lift"], duration=4.0, centre=centre, clearance=0.05
    )
    floor = np.minimum(_floor_heights(arm6, program.centre[None]), 0.05) - 0.01
    for segment in program.segments:
        poses = np.repeat(program.centre[None], segment.position.shape[0], axis=0)
        poses[:, [arm6.joint_index(n) for n in segment.joints]] = segment.position
        assert np.all(_floor_heights(arm6, poses) >= floor - 1e-9)
    assert all(MIN_FLOOR_SCALE <= s.floor_scale < 1.0 for s in program.segments)
    free = excitation(arm6, ["elbow"], duration=4.0, centre=centre, clearance=-10.0)
    assert free.segments[0].floor_scale == 1.0
    assert free.segments[0].peaks[0].max() > program.segments[0].peaks[0].max()


def test_a_centre_over_the_floor_is_refused_not_shrunk_to_nothing(arm6):
    """Amplitudes cut below a quarter would hide friction under the hold: name the link."""
    centre = arm6.home.copy()
    centre[1] = 1.1  # the wrist hangs at the floor
    with pytest.raises(ConfigurationError, match=r"link 'wrist_yaw' reaching the floor.*centre"):
        excitation(arm6, ["elbow"], duration=4.0, centre=centre)
    # a servo arm's home is folded over the floor: every joint at once would be cut to 4 %
    with pytest.raises(ConfigurationError, match="below 25 %"):
        excitation("so101", duration=8.0, sequential=False)


def test_the_program_has_holds_between_segments_and_serialises(arm6):
    program = excitation(arm6, ["elbow", "wrist_pitch"], duration=4.0, hold=0.25)
    verbs = [next(iter(step)) for step in program.program]
    assert verbs == [
        "set_positions",
        "wait",
        "follow_trajectory",
        "set_positions",
        "wait",
        "follow_trajectory",
        "set_positions",
        "wait",
    ]
    assert program.duration == pytest.approx(3 * 0.25 + 2 * 4.0)
    assert "follow_trajectory" in program.to_yaml()
    assert program.settings()["joints"] == ["elbow", "wrist_pitch"]
    together = excitation(arm6, ["elbow", "wrist_pitch"], duration=4.0, sequential=False)
    assert [s.joints for s in together.segments] == [("elbow", "wrist_pitch")]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"signal": "square"}, "signal must be one of"),
        ({"band": (1.0, 0.5)}, "band must be"),
        ({"band": (0.05, 1.0)}, "below 1 / duration"),
        ({"fraction": 1.5}, "fraction"),
        ({"duration": 1.5}, "must exceed the two ramps"),
        ({"hold": -1.0}, "hold"),
        ({"sequential": False, "signal": "chirp"}, "sequential=False"),
        ({"centre": [0.0] * 5}, "centre must be 6"),
        ({"centre": [2.85, 0.4, 1.0, 0.0, 0.8, 0.0]}, "outside its soft limits"),
        ({"centre": [2.8, 0.4, 1.0, 0.0, 0.8, 0.0]}, "no room to move"),
        ({"joints": []}, "joints is empty"),
        ({"sequential": False, "band": (0.5, 1.0)}, "6 joints excited together need 6"),
    ],
)
def test_bad_options_are_refused_with_the_reason(arm6, kwargs, message):
    with pytest.raises(ConfigurationError, match=message):
        excitation(arm6, **{"duration": 4.0, **kwargs})


def test_unknown_and_dependent_joints_are_named():
    with pytest.raises(DescriptionError, match="no joint 'knee'"):
        excitation("arm6", ["knee"])
    with pytest.raises(ConfigurationError, match="'right_finger' is dependent"):
        excitation("coupled_gripper", ["right_finger"])


def test_an_excitation_runs_on_sim_and_the_log_holds_what_fit_needs(arm6, tmp_path):
    program = excitation(arm6, ["wrist_pitch"], duration=2.5, ramp=0.5, band=(0.5, 1.5), hold=0.1)
    with jointlab.connect("sim://arm6") as robot:
        path = record_excitation(robot, program, tmp_path / "excite.npz", url="sim://arm6")
    log = load_log(path)
    for key in (
        "state.position",
        "state.velocity",
        "state.current",
        "desired.position",
        "desired.torque",
        "applied.torque",
    ):
        assert key in log
    assert log.metadata.extra["physics_dt"] == 0.001
    assert log.metadata.extra["excitation"]["joints"] == ["wrist_pitch"]
    assert log.metadata.extra["url"] == "sim://arm6"
    wrist = arm6.joint_index("wrist_pitch")
    swing = np.ptp(log["state.position"][:, wrist])
    assert swing == pytest.approx(np.ptp(program.segments[0].position), rel=0.05)
    others = np.delete(log["state.position"], wrist, axis=1)
    assert np.ptp(others, axis=0).max() < 0.01  # the other joints hold


def test_states_within_the_stop_tolerance_of_a_limit_are_accepted_beyond_it_refused(arm6):
    wrist = arm6.joint_index("wrist_pitch")
    q = np.array(arm6.home)
    with jointlab.connect("sim://arm6") as robot:
        q[wrist] = arm6.upper[wrist] + 3.6e-6  # as the settled real-time emulator reported it
        assert robot.reset(q).position[wrist] == pytest.approx(arm6.upper[wrist], abs=1e-6)
        q[wrist] = arm6.upper[wrist] + 2 * STOP_TOLERANCE
        with pytest.raises(ConfigurationError, match="lies outside"):
            robot.reset(q)
