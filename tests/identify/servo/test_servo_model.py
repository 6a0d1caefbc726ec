"""The servo model and its fit, on traces the model itself made (no emulator: fast).

A trace simulated from known parameters (with the encoder's one-tick quantisation) is fitted
back; the checks on recordings refuse what cannot identify anything, naming the recording.
"""

from __future__ import annotations

import numpy as np
import pytest

from jointlab.identify.errors import IdentificationError
from jointlab.identify.servo.excite import servo_excitation
from jointlab.identify.servo.fit import fit_model, reversals
from jointlab.identify.servo.identify import file_values
from jointlab.identify.servo.model import joint_inputs, simulate
from jointlab.identify.servo.traces import ServoTrace, check_trace
from jointlab.robots import load_robot

FPS = 30.0
TICK = 2 * np.pi / 4096


def _trace(description, goal: np.ndarray, position: np.ndarray, source: str = "synthetic"):
    n = len(goal)
    return ServoTrace(
        source=source,
        joints=description.joint_names,
        fps=FPS,
        time=np.arange(n) / FPS,
        goal=goal,
        position=position,
    )


def _synthetic(description, params: np.ndarray, seconds: float = 6.0) -> ServoTrace:
    """A trace of the model with ``params`` (inputs along its own motion, quantised)."""
    goal = servo_excitation(
        description,
        FPS,
        seconds,
        amplitude=np.radians(8.0),
        centre=[0.0, 0.0, 1.2, 0.6, 0.0, 0.6],
        seed=5,
    )
    kp, kd = np.asarray(description.default_kp), np.asarray(description.default_kd)
    position = goal.copy()
    for _ in range(3):  # inertia and gravity along the motion the model predicts
        inputs = joint_inputs(description, _trace(description, goal, position))
        position = simulate(inputs, params[None], kp, kd)[0]
    return _trace(description, goal, np.round(position / TICK) * TICK)


def test_the_fit_recovers_the_parameters_of_its_own_model() -> None:
    description = load_robot("so101")
    nominal = file_values(description)
    truth = nominal.copy()
    truth[:, 0] = 0.7  # stiffness factor
    truth[:, 2] *= 2.0  # viscous friction
    truth[:, 4] = 0.015  # delay, s
    trace = _synthetic(description, truth)
    kp, kd = np.asarray(description.default_kp), np.asarray(description.default_kd)
    fit = fit_model([joint_inputs(description, trace)], nominal, kp, kd)
    for j, joint in enumerate(fit.joints):
        assert joint.identified[0] and joint.identified[2] and joint.identified[4]
        assert abs(joint.value("stiffness") / 0.7 - 1) < 0.1, joint
        assert abs(joint.value("viscous") / truth[j, 2] - 1) < 0.15, joint
        assert abs(joint.value("delay") - 0.015) < 0.003, joint
        assert joint.rms < 0.2 * joint.rms_start


def test_a_torque_limit_is_found_where_the_loop_reaches_it_and_only_there() -> None:
    description = load_robot("so101")
    nominal = file_values(description)
    truth = nominal.copy()
    truth[:, 5] = 1.2  # N·m: 8° steps at 15.3 N·m/rad ask for up to 2.1 N·m
    trace = _synthetic(description, truth, seconds=4.0)
    kp, kd = np.asarray(description.default_kp), np.asarray(description.default_kd)
    fit = fit_model([joint_inputs(description, trace)], nominal, kp, kd, iterations=15)
    lift = fit["shoulder_lift"]
    assert lift.identified[5] and abs(lift.value("torque_limit") / 1.2 - 1) < 0.1, lift
    fit_nominal = fit_model(
        [joint_inputs(description, _synthetic(description, nominal, 4.0))],
        nominal,
        kp,
        kd,
        iterations=2,
    )
    assert "never asked for it" in fit_nominal["wrist_roll"].reasons["torque_limit"]


def test_a_joint_that_does_not_move_is_not_identified_and_says_so() -> None:
    description = load_robot("so101")
    nominal = file_values(description)
    trace = _synthetic(description, nominal, seconds=3.0)
    goal = trace.goal.copy()
    goal[:, 4] = goal[0, 4]  # wrist_roll held still
    still = _trace(description, goal, trace.position)
    kp, kd = np.asarray(description.default_kp), np.asarray(description.default_kd)
    fit = fit_model([joint_inputs(description, still)], nominal, kp, kd, iterations=2)
    roll = fit["wrist_roll"]
    assert not roll.identified.any()
    assert "did not move" in roll.reasons["stiffness"]


def test_reversals_count_turns_of_at_least_the_threshold() -> None:
    assert reversals(np.array([0.0, 0.1, 0.2, 0.1, 0.0, 0.2]), threshold=0.05) == 2
    assert reversals(np.array([0.0, 0.01, 0.0, 0.01]), threshold=0.05) == 0
    assert reversals(np.linspace(0, 1, 10), threshold=0.05) == 0


def test_bad_recordings_are_refused_naming_the_recording_and_frame() -> None:
    description = load_robot("so101")
    n = 90
    goal = np.tile(description.home, (n, 1))
    moving = goal.copy()
    moving[:, 1] += np.radians(5) * np.sin(np.arange(n) / 10)
    with pytest.raises(IdentificationError, match="ep 7: no joint moved"):
        check_trace(_trace(description, goal, goal, source="ep 7"))
    with pytest.raises(IdentificationError, match="too short"):
        check_trace(_trace(description, moving[:20], moving[:20]))
    shuffled = _trace(description, moving, moving)
    time = shuffled.time.copy()
    time[40] = time[38]
    with pytest.raises(IdentificationError, match="not increasing at frame 40"):
        check_trace(ServoTrace("ep 2", description.joint_names, FPS, time, moving, moving))
    bad = moving.copy()
    bad[10, 2] = np.nan
    with pytest.raises(IdentificationError, match="joint 'elbow_flex' is not finite at frame 10"):
        check_trace(_trace(description, moving, bad))


def test_a_jointlab_log_gives_the_trace_of_goals_and_positions_before_them(tmp_path) -> None:
    from jointlab.identify.servo.traces import log_trace
    from jointlab.recording import Recorder

    description = load_robot("so101")
    goal = servo_excitation(description, 100.0, 3.0, amplitude=np.radians(8.0), seed=2)
    position = np.roll(goal, 3, axis=0)  # the arm follows three rows late
    path = tmp_path / "run.npz"
    with Recorder(path, description) as recorder:
        for k in range(len(goal)):  # apply goal k, step, log the state at the period's end
            recorder.log(
                (k + 1) * 0.01, desired={"position": goal[k]}, state={"position": position[k]}
            )
    trace = log_trace(path, description, fps=25.0)
    assert trace.fps == 25.0 and 70 <= len(trace) <= 76
    rows = np.rint(trace.time / 0.01).astype(int) - 1  # the logged row of each frame
    assert np.allclose(trace.goal, goal[rows])
    assert np.allclose(trace.position, position[rows - 1])  # the state before that goal


def test_the_gap_figure_of_a_joint_is_clean_and_names_the_share_closed() -> None:
    from figure_hygiene import figure_problems

    from jointlab.identify.servo.gap import GapReport, JointGap

    description = load_robot("so101")
    goal = servo_excitation(description, FPS, 3.0, seed=4)
    recorded = _trace(description, goal, np.roll(goal, 2, axis=0))
    nominal = _trace(description, goal, np.roll(goal, 4, axis=0))
    identified = _trace(description, goal, np.roll(goal, 2, axis=0) + 0.001)
    joints = tuple(
        JointGap(joint=j, nominal=0.02, identified=0.002) for j in description.joint_names
    )
    report = GapReport(
        robot="so101",
        joints=joints,
        recordings=(recorded,),
        nominal=(nominal,),
        identified=(identified,),
    )
    assert abs(report.closed - 0.9) < 1e-9
    fig = report.figure("elbow_flex")
    assert figure_problems(fig) == []
    assert "90 % closed" in fig.texts[0].get_text()
    assert "share of the gap closed: 90 %" in report.summary()
