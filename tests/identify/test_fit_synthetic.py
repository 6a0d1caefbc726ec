"""fit() on synthetic logs whose torques follow the model exactly: estimates, intervals, errors."""

from __future__ import annotations

import numpy as np
import pytest
from floating_robot import puck
from identify_helpers import DT, multisine_motion, synthetic_log, truth_for

from jointlab.identify import IdentificationError, fit
from jointlab.identify.regression import nominal_armature
from jointlab.recording import Log

DYNAMICS = ["static_friction", "damping", "armature"]


@pytest.fixture(scope="module")
def motion(arm6):
    return multisine_motion(arm6, 6.0)


def test_friction_damping_armature_and_torque_constant_are_recovered(arm6, motion):
    truth = truth_for(arm6)
    log = synthetic_log(arm6, truth, *motion)
    result = fit(log, arm6, parameters=[*DYNAMICS, "torque_constant"], cutoff=None)
    for name, expected in (
        ("static_friction", truth.static_friction),
        ("damping", truth.damping),
        ("armature", truth.armature),
        ("torque_constant", truth.torque_constant),
    ):
        got = np.array([result.estimate(name, j).value for j in arm6.joint_names])
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12, err_msg=name)
        for estimate, value in zip(
            (result.estimate(name, j) for j in arm6.joint_names), expected, strict=True
        ):
            assert estimate.low - 1e-9 <= value <= estimate.high + 1e-9
        if name == "armature":
            nominal = [result.estimate(name, j).nominal for j in arm6.joint_names]
            np.testing.assert_allclose(nominal, nominal_armature(arm6))
    assert all(r.rms < 1e-6 for r in result.residuals.values())


def test_intervals_cover_the_truth_under_noise(arm6, motion):
    truth = truth_for(arm6)
    log = synthetic_log(arm6, truth, *motion)
    rng = np.random.default_rng(7)
    noisy = np.array(log.data)
    torque = slice(2 * arm6.dof, 3 * arm6.dof)
    noisy[:, torque] += rng.normal(0.0, 0.02, size=noisy[:, torque].shape)
    log = Log(time=log.time, data=noisy, fields=log.fields, metadata=log.metadata)
    result = fit(log, arm6, parameters=DYNAMICS)
    covered = [
        result.estimate(name, j).low <= getattr(truth, name)[i] <= result.estimate(name, j).high
        for name in DYNAMICS
        for i, j in enumerate(arm6.joint_names)
    ]
    assert np.mean(covered) >= 0.8
    widths = [
        result.estimate("damping", j).high - result.estimate("damping", j).low
        for j in arm6.joint_names
    ]
    assert max(widths) < 0.2  # the noise is seen, not ignored


def test_unrequested_parameters_keep_their_nominal_values(arm6, motion):
    truth = truth_for(arm6)
    log = synthetic_log(arm6, truth, *motion)
    result = fit(log, arm6, joints=["elbow"], parameters=["damping"])
    assert result.parameters == ("damping",) and result.joints == ("elbow",)
    with pytest.raises(IdentificationError, match="no estimate of 'static_friction'"):
        result.estimate("static_friction", "elbow")


def _still_except(motion, joint: int, kind: str):
    t, q, qd, qdd = (np.array(a) for a in motion)
    for j in range(q.shape[1]):
        if j != joint:
            if kind == "steady":  # nothing else moves either: no link accelerates
                q[:, j], qd[:, j], qdd[:, j] = q[0, j], 0.0, 0.0
            continue
        if kind == "still":
            q[:, j], qd[:, j], qdd[:, j] = q[0, j], 0.0, 0.0
        elif kind == "one_way":
            qd[:, j] = 0.3 + 0.2 * np.sin(2 * np.pi * t)
            qdd[:, j] = 0.4 * np.pi * np.cos(2 * np.pi * t)
            q[:, j] = q[0, j] + np.cumsum(qd[:, j]) * DT
        elif kind == "one_speed":  # a triangle wave: +-0.4 rad/s, reversing in one step
            qd[:, j] = 0.4 * np.sign(np.sin(2 * np.pi * 0.5 * t) + 1e-9)
            qdd[:, j] = np.append(np.diff(qd[:, j]) / DT, 0.0)
            q[:, j] = q[0, j] + np.cumsum(qd[:, j]) * DT
        elif kind == "steady":  # constant speed, never accelerating, the arm still
            qd[:, j] = 0.4
            qdd[:, j] = 0.0
            q[:, j] = q[0, j] + np.cumsum(qd[:, j]) * DT
    return t, q, qd, qdd


@pytest.mark.parametrize(
    ("kind", "parameters", "expected"),
    [
        ("still", DYNAMICS, "static_friction, damping and armature (dynamics.*) of joint 'elbow'"),
        ("one_way", ["static_friction"], "static_friction (dynamics.static_friction) of joint"),
        (
            "one_speed",
            ["static_friction", "damping"],
            "damping (dynamics.damping) of joint 'elbow' cannot be told from",
        ),
        ("steady", ["armature"], "armature (dynamics.armature) of joint 'elbow' cannot be"),
    ],
)
def test_a_log_that_does_not_excite_a_parameter_names_it(arm6, motion, kind, parameters, expected):
    elbow = arm6.joint_index("elbow")
    log = synthetic_log(arm6, truth_for(arm6), *_still_except(motion, elbow, kind))
    joints = ["elbow"] if kind == "steady" else None  # the others are still too
    with pytest.raises(IdentificationError) as info:
        fit(log, arm6, joints=joints, parameters=parameters)
    message = str(info.value)
    assert expected in message
    assert "jointlab identify excite ROBOT URL --joints elbow" in message
    assert "excitation(description, joints=['elbow'])" in message
    assert message.count("\n  - ") == 1  # only the elbow is at fault


def test_every_problem_is_listed_at_once(arm6, motion):
    t, q, qd, qdd = (np.array(a) for a in motion)
    q[:, 1:] = q[0, 1:]
    qd[:, 1:] = 0.0
    qdd[:, 1:] = 0.0
    log = synthetic_log(arm6, truth_for(arm6), t, q, qd, qdd, with_current=False)
    with pytest.raises(IdentificationError) as info:
        fit(log, arm6, parameters=[*DYNAMICS, "torque_constant", "delay"])
    message = str(info.value)
    assert message.count("\n  - ") == 5 + 1 + 1  # 5 still joints, no current, no commands
    assert "no state.current column" in message and "no desired channel" in message


def test_columns_the_fit_needs_are_named(arm6, motion):
    log = synthetic_log(arm6, truth_for(arm6), *motion)
    keep = [f for f in log.fields if f.key != "state.velocity"]
    columns = np.hstack([log[f.key] for f in keep])
    bare = Log(time=log.time, data=columns, fields=tuple(keep), metadata=log.metadata)
    with pytest.raises(IdentificationError, match=r"no column 'state\.velocity'"):
        fit(bare, arm6, parameters=DYNAMICS)


def test_a_log_of_another_robot_is_refused(arm6, motion):
    names = tuple(f"j{i}" for i in range(arm6.dof))
    log = synthetic_log(arm6, truth_for(arm6), *motion, joint_names=names)
    with pytest.raises(IdentificationError, match="recorded on joints"):
        fit(log, arm6, parameters=DYNAMICS)


def test_short_logs_resets_and_uneven_rows_are_refused(arm6, motion):
    log = synthetic_log(arm6, truth_for(arm6), *motion)

    def variant(time):
        return Log(
            time=time, data=log.data[: time.shape[0]], fields=log.fields, metadata=log.metadata
        )

    with pytest.raises(IdentificationError, match="fewer than the 200"):
        fit(variant(log.time[:150]), arm6, parameters=DYNAMICS)
    reset = np.array(log.time)
    reset[3000:] -= reset[3000]
    with pytest.raises(IdentificationError, match=r"at row 3000 .* identify one run at a time"):
        fit(variant(reset), arm6, parameters=DYNAMICS)
    uneven = np.array(log.time)
    uneven[2000:] += 0.4 * DT
    with pytest.raises(IdentificationError, match="not a whole number of control periods"):
        fit(variant(uneven), arm6, parameters=DYNAMICS)


def test_missed_periods_are_skipped_not_refused(arm6, motion):
    truth = truth_for(arm6)
    log = synthetic_log(arm6, truth, *motion)
    keep = np.ones(len(log), dtype=bool)
    keep[1000:4000:50] = False  # a host that missed some states
    gappy = Log(time=log.time[keep], data=log.data[keep], fields=log.fields, metadata=log.metadata)
    result = fit(gappy, arm6, parameters=DYNAMICS, cutoff=None)
    np.testing.assert_allclose(list(result.values("damping").values()), truth.damping, rtol=1e-6)


def test_a_host_late_in_most_periods_is_read_at_the_logs_own_period(arm6, motion):
    """A real-time run on a busy machine: most rows two periods apart, some an odd number.

    The typical step is then twice the control period; the log's own period (metadata.dt)
    counts the periods (the median made a 3-period gap "not a whole number" of 2).
    """
    truth = truth_for(arm6)
    log = synthetic_log(arm6, truth, *motion)
    keep = np.zeros(len(log), dtype=bool)
    keep[::2] = True  # every other state missed...
    keep[1001:3000:6] = True  # ... and some odd gaps
    keep[1002:3000:6] = False
    late = Log(time=log.time[keep], data=log.data[keep], fields=log.fields, metadata=log.metadata)
    assert np.median(np.diff(late.time)) == pytest.approx(2 * log.metadata.dt)
    result = fit(late, arm6, parameters=DYNAMICS, cutoff=None)
    np.testing.assert_allclose(list(result.values("damping").values()), truth.damping, rtol=1e-5)


def test_bad_arguments_are_named(arm6, motion):
    log = synthetic_log(arm6, truth_for(arm6), *motion)
    with pytest.raises(IdentificationError, match="unknown parameter 'friction'"):
        fit(log, arm6, parameters=["friction"])
    with pytest.raises(IdentificationError, match="no joint 'knee'"):
        fit(log, arm6, joints=["knee"])
    with pytest.raises(IdentificationError, match="max_delay"):
        fit(log, arm6, max_delay=-1)
    with pytest.raises(IdentificationError, match="cutoff"):
        fit(log, arm6, parameters=DYNAMICS, cutoff=900.0)
    with pytest.raises(IdentificationError, match="dependent"):
        fit(log, "coupled_gripper", joints=["right_finger"])
    with pytest.raises(IdentificationError, match="floating base"):
        fit(log, puck())
