"""Replay and the validation report: a deterministic device replays exactly."""

from __future__ import annotations

import numpy as np
import pytest

import jointlab
from jointlab.identify import (
    IdentificationError,
    connect_planted,
    excitation,
    plant,
    record_excitation,
    validate,
)
from jointlab.recording import Log, load_log
from jointlab.robots import description_from_dict, description_to_dict


@pytest.fixture(scope="module")
def planted_log(tmp_path_factory, arm6):
    planted = plant(arm6, static_friction=2.0, damping=1.5)
    program = excitation(
        arm6, ["elbow", "wrist_pitch"], duration=2.5, ramp=0.5, band=(0.5, 1.5), hold=0.1
    )
    path = tmp_path_factory.mktemp("validation") / "planted.npz"
    with connect_planted(planted, arm6) as device:
        record_excitation(device, program, path)
    return path, planted


@pytest.fixture(scope="module")
def report(planted_log, arm6):
    path, planted = planted_log
    return validate(path, arm6, planted)


def test_the_true_robot_replays_the_log_exactly(report, arm6):
    assert np.all(report.identified_rms == 0.0) and np.all(report.identified_max == 0.0)
    moved = [arm6.joint_index("elbow"), arm6.joint_index("wrist_pitch")]
    assert np.all(report.nominal_rms[moved] > 1e-5)
    assert np.all(report.gap_closed[moved] == 1.0)
    assert report.total_gap_closed == 1.0
    text = report.summary()
    assert "gap closed over all joints: 100 %" in text and "elbow" in text


def test_the_same_robot_twice_closes_nothing(planted_log, arm6):
    path, _ = planted_log
    report = validate(path, arm6, arm6)
    np.testing.assert_array_equal(report.identified, report.nominal)
    assert report.total_gap_closed == 0.0


def test_the_plot_shows_measured_nominal_and_identified(report):
    figure = report.plot(["elbow", 4])
    axes = figure.get_axes()
    assert len(axes) == 4
    gids = {line.get_gid() for line in axes[0].get_lines()}
    assert gids == {"measured", "nominal", "identified"}
    assert {line.get_gid() for line in axes[1].get_lines()} >= {"nominal", "identified"}


def test_a_log_without_commands_cannot_be_replayed(planted_log, arm6):
    path, _ = planted_log
    log = load_log(path)
    keep = [f for f in log.fields if f.channel != "desired"]
    bare = Log(
        time=log.time,
        data=np.hstack([log[f.key].reshape(len(log), -1) for f in keep]),
        fields=tuple(keep),
        metadata=log.metadata,
    )
    with pytest.raises(IdentificationError, match="no desired channel"):
        validate(bare, arm6, arm6)


def test_descriptions_with_other_joints_are_refused(planted_log, arm6):
    path, _ = planted_log
    other = description_from_dict(
        {
            **description_to_dict(arm6),
            "actuators": [
                {
                    **a,
                    "name": f"x_{a['name']}",
                    "parent": "base" if a["parent"] == "base" else f"x_{a['parent']}",
                }
                for a in description_to_dict(arm6)["actuators"]
            ],
        }
    )
    with pytest.raises(IdentificationError, match="joints"):
        validate(path, arm6, other)
    with pytest.raises(IdentificationError, match="recorded on joints"):
        validate(path, other, other)
    assert jointlab.load_robot("arm6") == arm6
