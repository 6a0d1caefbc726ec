"""Record -> load round trips and what survives in each format."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from recording_helpers import Run, make_run

from jointlab.recording import (
    Event,
    EventKind,
    LogMetadata,
    Recorder,
    journal_path,
    load_log,
    recover_log,
    save_log,
)

HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None
FORMATS = [
    "csv",
    "npz",
    pytest.param(
        "parquet", marks=pytest.mark.skipif(not HAS_PYARROW, reason="pyarrow not installed")
    ),
]


def record(path, run: Run, **kwargs) -> None:
    with Recorder(path, run.metadata, **kwargs) as rec:
        for k, t in enumerate(run.times):
            rec.log(t, desired=run.desired[k], applied=run.applied[k], state=run.states[k])
            if k == 3:
                rec.event(t, EventKind.ACCEPTED, command_id=7, verb="set_position")
            if k == 20:
                rec.event(t, "clamped", joint=np.int64(1), torque=np.float64(2.5), where=[1, 2])


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal with NaN == NaN and the sign of zero kept (CSV keeps no NaN sign or payload)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    numbers = ~np.isnan(a)
    return (
        a.shape == b.shape
        and np.array_equal(a, b, equal_nan=True)
        and np.array_equal(np.signbit(a[numbers]), np.signbit(b[numbers]))
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_is_exact(tmp_path, run, fmt):
    path = tmp_path / f"run.{fmt}"
    record(path, run, flush_every=7)
    log = load_log(path)

    assert log.finalised
    assert len(log) == len(run.times)
    assert same_bits(log.time, run.times)
    assert log.channels == ("desired", "applied", "state")
    for channel in ("desired", "applied"):
        for field in ("torque", "position", "position_kp", "position_kd", "velocity"):
            assert same_bits(log[f"{channel}.{field}"], run.stacked(channel, field)), field
    for field in ("position", "velocity", "acceleration", "torque", "current", "actuator_state"):
        assert same_bits(log[f"state.{field}"], run.stacked("state", field)), field
    assert same_bits(log["state.armed"][:, 0], [float(s.armed) for s in run.states])
    assert np.isnan(log["desired.position[0]"][0])
    assert np.signbit(log["state.velocity[0]"]).all()
    assert log["state.velocity[2]"][0] == 1e-310
    assert log.metadata == run.metadata
    assert [e.kind for e in log.events] == ["accepted", "clamped"]
    assert log.events[0] == Event(
        run.times[3], "accepted", {"command_id": 7, "verb": "set_position"}
    )
    assert log.events[1].fields == {"joint": 1, "torque": 2.5, "where": [1, 2]}
    assert log.events_of(EventKind.CLAMPED)[0].get("joint") == 1


def test_column_names_and_channel_access(tmp_path, run):
    path = tmp_path / "run.npz"
    record(path, run)
    log = load_log(path)
    assert "state.position[2]" in log.columns
    assert log.columns[0] == "desired.torque[0]"
    assert log["state.position"].shape == (len(run.times), 3)
    assert same_bits(log["state.position[2]"], run.stacked("state", "position")[:, 2])
    assert set(log.channel("applied")) == {
        "torque",
        "position",
        "position_kp",
        "position_kd",
        "velocity",
    }
    assert log.field_names("state")[:2] == ("time", "position")
    with pytest.raises(KeyError):
        log["state.nope"]


@pytest.mark.parametrize("fmt", FORMATS)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=hnp.arrays(
        np.float64,
        st.tuples(st.integers(0, 12), st.integers(1, 4)),
        elements=st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
    ),
    scalar=st.floats(allow_nan=True, allow_infinity=True),
    times=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=12, max_size=12),
)
def test_any_floats_round_trip(tmp_path, fmt, data, scalar, times):
    path = tmp_path / f"h.{fmt}"
    with Recorder(path, flush_every=5) as rec:
        for k in range(data.shape[0]):
            rec.log(times[k], x={"v": data[k], "s": scalar})
    log = load_log(path)
    same = same_values if fmt == "csv" else same_bits
    assert same(log.time, times[: data.shape[0]])
    if data.shape[0]:
        assert same(log["x.v"], data)
        assert same(log["x.s"], np.full(data.shape[0], scalar))


def test_save_log_converts_between_formats(tmp_path, run):
    record(tmp_path / "run.csv", run)
    original = load_log(tmp_path / "run.csv")
    for name in ("copy.npz", "copy.csv"):
        copy = load_log(save_log(original, tmp_path / name))
        assert same_bits(copy.data, original.data)
        assert copy.fields == original.fields
        assert copy.events == original.events
        assert copy.metadata == original.metadata


def test_metadata_from_a_description_like_object():
    class Motor:
        max_current = 4.0

    class Joint:
        motor = Motor()

    class Description:
        name = "duck"
        dof = 2
        joints = (Joint(), Joint())
        joint_names = ("a", "b")
        effort_limit = np.array([1.0, 2.0])
        lower = np.array([-1.0, -2.0])
        upper = np.array([1.0, 2.0])
        velocity_limit = np.array([3.0, 4.0])

    meta = LogMetadata.from_description(Description(), dt=0.002, url="sim://duck")
    assert meta.dof == 2 and meta.robot == "duck" and meta.dt == 0.002
    assert meta.current_limit == (4.0, 4.0)
    assert meta.extra["url"] == "sim://duck"
    assert LogMetadata.from_json(meta.to_json()) == meta


@pytest.mark.parametrize("fmt", FORMATS[1:])
def test_unclosed_journal_is_readable_and_recoverable(tmp_path, fmt):
    run = make_run(n=30)
    path = tmp_path / f"open.{fmt}"
    rec = Recorder(path, run.metadata, flush_every=10, flush_interval=3600)
    for k, t in enumerate(run.times[:25]):
        rec.log(t, state=run.states[k])
    assert rec.rows_written == 20
    assert not path.exists() and journal_path(path).exists()
    partial = load_log(path)
    assert not partial.finalised
    assert len(partial) == 20
    assert same_bits(partial["state.position"], run.stacked("state", "position")[:20])

    # What a killed process leaves: recover it into the real file.
    leftover = journal_path(path).read_bytes()
    rec.close()
    assert path.exists() and not journal_path(path).exists()
    assert len(load_log(path)) == 25
    other = tmp_path / f"other.{fmt}"
    journal_path(other).write_bytes(leftover)
    assert recover_log(other) == other
    assert not journal_path(other).exists()
    recovered = load_log(other)
    assert recovered.finalised and len(recovered) == 20
    assert recovered.metadata == run.metadata


def test_csv_is_readable_while_recording(tmp_path, run):
    path = tmp_path / "live.csv"
    with Recorder(path, run.metadata, flush_every=10, flush_interval=3600) as rec:
        for k, t in enumerate(run.times[:15]):
            rec.log(t, state=run.states[k])
        live = load_log(path)
        assert not live.finalised
        assert len(live) == 10
    assert load_log(path).finalised
