"""Recorder behaviour: rows, channels, flushing, validation and lifecycle."""

from __future__ import annotations

import numpy as np
import pytest

from jointlab.errors import ConfigurationError, JointLabError
from jointlab.interface import NJointAction
from jointlab.recording import LogError, LogMetadata, Recorder, load_log


def test_record_fills_one_row_per_time(tmp_path, run):
    path = tmp_path / "r.csv"
    with Recorder(path) as rec:
        rec.record("state", 0.0, run.states[0])
        rec.record("desired", 0.0, run.desired[0])
        rec.record("state", 0.1, run.states[1])  # new time: new row
        rec.record("state", 0.1, run.states[2])  # channel already set: new row, same time
        assert rec.rows_logged == 2  # the last row is still open
    log = load_log(path)
    assert list(log.time) == [0.0, 0.1, 0.1]
    assert np.isnan(log["desired.torque"][1:]).all()
    assert np.array_equal(log["desired.torque"][0], run.desired[0].torque)
    assert np.array_equal(log["state.position"][2], run.states[2].position)


def test_none_and_missing_channels_are_nan(tmp_path, run):
    path = tmp_path / "r.npz"
    with Recorder(path) as rec:
        rec.log(0.0, desired=run.desired[0], state=run.states[0])
        rec.log(0.1, desired=None, state=run.states[1])
        rec.log(0.2, state=run.states[2])
    log = load_log(path)
    assert np.isnan(log["desired.torque"][1:]).all()
    assert not np.isnan(log["state.position"]).any()


def test_channel_added_before_first_flush_pads_earlier_rows(tmp_path, run):
    path = tmp_path / "r.csv"
    with Recorder(path, flush_every=100) as rec:
        rec.log(0.0, state=run.states[0])
        rec.log(0.1, state=run.states[1], extra={"gain": 2.0, "v": [1.0, 2.0]})
    log = load_log(path)
    assert log.columns[-3:] == ("extra.gain", "extra.v[0]", "extra.v[1]")
    assert np.isnan(log["extra.gain"][0]) and log["extra.gain"][1] == 2.0
    assert log["extra.gain"].shape == (2,)


def test_new_channel_after_first_flush_is_refused(tmp_path, run):
    with Recorder(tmp_path / "r.csv", flush_every=1) as rec:
        rec.log(0.0, state=run.states[0])
        with pytest.raises(LogError, match="'desired' first appeared after"):
            rec.log(0.1, state=run.states[1], desired=run.desired[1])


def test_field_width_change_names_the_field(tmp_path, run):
    with Recorder(tmp_path / "r.npz") as rec:
        rec.log(0.0, desired=run.desired[0])
        with pytest.raises(LogError, match=r"field 'torque' of channel 'desired' has 2 values"):
            rec.log(0.1, desired=NJointAction.Zero(2))
        with pytest.raises(LogError, match="has fields"):
            rec.log(0.2, desired={"torque": [0.0, 0.0, 0.0]})


@pytest.mark.parametrize(
    ("channels", "message"),
    [
        ({"time": {"a": 1.0}}, "reserved"),
        ({"bad": object()}, "neither a Loggable"),
        ({"bad": {"a": "x"}}, "not numeric"),
        ({"bad": {"a": [[1.0]]}}, "expected a number or a 1-D list"),
        ({"bad": {"not ok": 1.0}}, "not a valid name"),
    ],
)
def test_invalid_values_raise_log_errors(tmp_path, channels, message):
    with Recorder(tmp_path / "r.csv") as rec, pytest.raises(LogError, match=message):
        rec.log(0.0, **channels)


def test_invalid_times_and_events(tmp_path):
    with Recorder(tmp_path / "r.csv") as rec:
        with pytest.raises(LogError, match="finite"):
            rec.log(float("nan"), x={"a": 1.0})
        with pytest.raises(LogError, match="non-empty"):
            rec.event(0.0, "")
        with pytest.raises(LogError, match="cannot be logged"):
            rec.event(0.0, "stalled", obj=object())


def test_options_are_validated(tmp_path):
    with pytest.raises(ConfigurationError, match="flush_every"):
        Recorder(tmp_path / "r.csv", flush_every=0)
    with pytest.raises(ConfigurationError, match="flush_interval"):
        Recorder(tmp_path / "r.csv", flush_interval=-1)
    with pytest.raises(ConfigurationError, match="suffix"):
        Recorder(tmp_path / "r.txt")
    with pytest.raises(ConfigurationError, match="metadata"):
        Recorder(tmp_path / "r.csv", metadata=42)
    with pytest.raises(LogError, match="effort_limit has 2 entries, expected 3"):
        LogMetadata(joint_names=("a", "b", "c"), effort_limit=(1.0, 2.0))


def test_overwrite_false_keeps_existing_files(tmp_path):
    path = tmp_path / "r.npz"
    Recorder(path).close()
    with pytest.raises(ConfigurationError, match="already exists"):
        Recorder(path, overwrite=False)
    assert load_log(path).finalised


def test_flush_every_and_flush_interval(tmp_path, run):
    with Recorder(tmp_path / "a.csv", flush_every=4, flush_interval=3600) as rec:
        written = []
        for k in range(10):
            rec.log(run.times[k], state=run.states[k])
            written.append(rec.rows_written)
        assert written == [0, 0, 0, 4, 4, 4, 4, 8, 8, 8]
        rec.flush()
        assert rec.rows_written == 10
    with Recorder(tmp_path / "b.csv", flush_every=1000, flush_interval=0) as rec:
        for k in range(3):
            rec.log(run.times[k], state=run.states[k])
            assert rec.rows_written == k + 1


def test_close_is_idempotent_and_final(tmp_path, run):
    rec = Recorder(tmp_path / "r.npz", run.metadata)
    rec.log(0.0, state=run.states[0])
    rec.close()
    rec.close()
    assert rec.closed
    with pytest.raises(LogError, match="closed"):
        rec.log(0.1, state=run.states[1])
    assert len(load_log(rec.path)) == 1


def test_context_manager_finalises_on_error(tmp_path, run):
    path = tmp_path / "r.npz"
    with pytest.raises(RuntimeError), Recorder(path) as rec:
        rec.log(0.0, state=run.states[0])
        raise RuntimeError("controller crashed")
    log = load_log(path)
    assert log.finalised and len(log) == 1


def test_events_only_log(tmp_path):
    for name in ("e.csv", "e.npz"):
        with Recorder(tmp_path / name, flush_interval=0) as rec:
            rec.event(1.5, "refused", command_id=2, reason="disarmed")
        log = load_log(tmp_path / name)
        assert len(log) == 0 and log.columns == ()
        assert log.events[0].get("reason") == "disarmed"


def test_load_errors_are_log_errors(tmp_path):
    with pytest.raises(LogError, match="no log"):
        load_log(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"\x00\x01 not a log")
    with pytest.raises(LogError, match="not a JointLab log"):
        load_log(junk)
    bad_zip = tmp_path / "bad.npz"
    bad_zip.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(JointLabError):
        load_log(bad_zip)
