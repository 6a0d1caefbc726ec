"""`jointlab export`: a real recording (a program run on sim://arm6) opened by the field's own
readers, MCAP's (`mcap.reader`) and Rerun's (`rerun.chunk.RrdReader`), with the recording's
values; bad recordings are one clear error naming the file."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlab.cli import main
from jointlab.recording import Field, Log, LogError, LogMetadata, load_log, save_log

mcap_reader = pytest.importorskip("mcap.reader")
rerun_chunk = pytest.importorskip("rerun.chunk")

PROGRAM = "- home: {}\n- set_position: {joint: 2, position: 0.6}\n- hold: {for: 0.05}\n"


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The log of a short program on sim://arm6 (virtual time: the same rows every run)."""
    folder = tmp_path_factory.mktemp("export")
    (folder / "program.yaml").write_text(PROGRAM)
    argv = [
        "run",
        "sim://arm6",
        str(folder / "program.yaml"),
        "--out",
        str(folder),
        "--name",
        "run",
    ]
    assert main(argv) == 0
    return folder / "run" / "log.npz"


def _logged(log: Log, channel: str) -> np.ndarray:
    """Rows in which ``channel`` has any number (the rows the MCAP export writes)."""
    block = np.column_stack([log[f.key] for f in log.fields if f.channel == channel])
    return ~np.isnan(block).all(axis=1)


def _messages(path: Path) -> list[tuple[str, dict, int, object]]:
    with path.open("rb") as stream:
        reader = mcap_reader.make_reader(stream)
        return [
            (channel.topic, json.loads(message.data), message.log_time, schema)
            for schema, channel, message in reader.iter_messages()
        ]


def _array(values: list) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in values], dtype=np.float64)


def test_mcap_export_reads_back_with_mcaps_reader(recording, capsys) -> None:
    import jsonschema

    assert main(["export", str(recording), "--to", "mcap"]) == 0
    target = recording.with_suffix(".mcap")
    assert f"wrote {target}" in capsys.readouterr().out
    log = load_log(recording)
    assert {"commanded", "feedforward", "sent", "state"} <= set(log.channels)
    with target.open("rb") as stream:
        summary = mcap_reader.make_reader(stream).get_summary()
    topics = {
        c.topic: summary.statistics.channel_message_counts[i] for i, c in summary.channels.items()
    }
    expected = {f"/jointlab/{c}": int(_logged(log, c).sum()) for c in log.channels}
    expected["/jointlab/events"] = len(log.events)
    assert topics == expected and len(log.events) > 0
    assert summary.statistics.message_count == sum(expected.values())
    messages = _messages(target)
    stamps = [stamp for _, _, stamp, _ in messages]
    assert stamps == sorted(stamps)
    for channel in ("state", "commanded", "sent"):
        mine = [(m, stamp, s) for topic, m, stamp, s in messages if topic == f"/jointlab/{channel}"]
        schema = mine[0][2]
        assert (schema.name, schema.encoding) == (f"jointlab.{channel}", "jsonschema")
        validator = jsonschema.Draft202012Validator(json.loads(schema.data))
        rows = np.flatnonzero(_logged(log, channel))
        assert [stamp for _, stamp, _ in mine] == [round(t * 1e9) for t in log.time[rows]]
        for name in log.field_names(channel):
            column = log[f"{channel}.{name}"][rows]
            got = np.array([_array(np.atleast_1d(m[name]).tolist()) for m, _, _ in mine])
            np.testing.assert_array_equal(got.reshape(column.shape), column)
        for message, _, _ in mine[:: max(1, len(mine) // 20)]:
            validator.validate(message)
    events = [m for topic, m, _, _ in messages if topic == "/jointlab/events"]
    assert [e["kind"] for e in events] == [e.kind for e in log.events]


def test_rerun_export_reads_back_with_reruns_reader(recording, tmp_path) -> None:
    from jointlab.interop.rerun_export import entity_paths

    target = tmp_path / "run.rrd"
    assert main(["export", str(recording), str(target)]) == 0
    log = load_log(recording)
    reader = rerun_chunk.RrdReader(target)
    assert [r.application_id for r in reader.recordings()] == ["jointlab"]
    rows: Counter[str] = Counter()
    elbow = []
    for chunk in reader.stream().to_chunks():
        rows[chunk.entity_path] += chunk.num_rows
        if chunk.entity_path == "/state/position/elbow":
            batch = chunk.to_record_batch()
            elbow += list(
                zip(
                    batch.column("time").cast("int64").to_pylist(),
                    [v[0] for v in batch.column("Scalars:scalars").to_pylist()],
                    strict=True,
                )
            )
    expected = {
        path: int(np.count_nonzero(~np.isnan(log[column])))
        for path, column in entity_paths(log).items()
    }
    expected = {path: count for path, count in expected.items() if count}
    assert "/state/position/elbow" in expected and "/commanded/position/elbow" in expected
    assert {p: rows[p] for p in expected} == expected
    assert rows["/events"] == len(log.events) and rows["/robot"] == 1
    elbow.sort()
    assert [t for t, _ in elbow] == [round(t * 1e9) for t in log.time]
    np.testing.assert_array_equal([v for _, v in elbow], log["state.position[2]"])
    (blueprint,) = reader.blueprints()  # per joint target vs measured, and the events
    views = {
        c.entity_path
        for c in reader.stream(store=blueprint).to_chunks()
        if c.entity_path.startswith("/view/") and c.entity_path.count("/") == 2
    }
    assert len(views) == log["state.position"].shape[1] + 1


# ------------------------------------------------------------------- other recordings
def test_an_older_log_without_commanded_channels_or_joint_names_exports(tmp_path) -> None:
    """Logs of earlier JointLab versions had only desired/applied/state and no metadata."""
    fields = (Field("desired", "torque", 2), Field("state", "position", 2))
    data = np.array([[0.5, math.nan, 0.1, 0.2], [0.25, -1.0, 0.15, 0.25]])
    path = save_log(Log(np.array([0.0, 0.01]), data, fields), tmp_path / "old.csv")
    assert main(["export", str(path), "--to", "rerun"]) == 0
    paths = {
        c.entity_path for c in rerun_chunk.RrdReader(path.with_suffix(".rrd")).stream().to_chunks()
    }
    assert {"/state/position/joint0", "/desired/torque/joint1"} <= paths
    assert main(["export", str(path), "--to", "mcap"]) == 0
    messages = _messages(path.with_suffix(".mcap"))
    assert [m["torque"] for t, m, _, _ in messages if t == "/jointlab/desired"] == [
        [0.5, None],
        [0.25, -1.0],
    ]


@pytest.mark.parametrize("to", ["mcap", "rerun"])
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"PK\x03\x04 not really a zip", "cannot be read as an NPZ log"),
        (b"\x00\x01garbage", "is not a JointLab log"),
        (
            b'# jointlab-log {"format": "jointlab-log", "version": 99, "fields": []}\ntime\n',
            "is log format version 99; this JointLab reads up to 1",
        ),
    ],
)
def test_a_corrupt_or_newer_recording_is_one_line_naming_the_file(
    tmp_path, capsys, to, content, expected
) -> None:
    path = tmp_path / ("bad.npz" if content.startswith(b"PK") else "bad.csv")
    path.write_bytes(content)
    assert main(["export", str(path), "--to", to]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and expected in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == [path]  # nothing half-written


def test_export_never_replaces_a_file_without_force(recording, tmp_path, capsys) -> None:
    target = tmp_path / "taken.mcap"
    target.write_text("mine")
    assert main(["export", str(recording), str(target), "--to", "mcap"]) == 2
    assert "exists; pass --force" in capsys.readouterr().err and target.read_text() == "mine"
    assert main(["export", str(recording), str(target), "--force"]) == 0


def test_out_may_follow_the_options(recording, tmp_path, capsys) -> None:
    target = tmp_path / "after.rrd"
    assert main(["export", str(recording), "--to", "rerun", str(target)]) == 0
    assert target.stat().st_size > 0
    with pytest.raises(SystemExit):  # a third word is still refused, by name
        main(["export", str(recording), "--to", "rerun", str(target), "surplus"])
    assert "unrecognized arguments: surplus" in capsys.readouterr().err


def test_a_negative_time_cannot_be_an_mcap_time(tmp_path) -> None:
    from jointlab.interop.mcap_export import export_mcap

    log = Log(np.array([-0.5, 0.0]), np.zeros((2, 1)), (Field("state", "armed", 1, False),))
    with pytest.raises(LogError, match=r"time -0.5 s at row 0 cannot be an MCAP time"):
        export_mcap(save_log(log, tmp_path / "early.npz"), tmp_path / "early.mcap")


CELLS = st.floats(allow_nan=True, allow_infinity=False, width=64)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), rows=st.integers(1, 6), width=st.integers(1, 3))
def test_any_log_round_trips_through_mcap(tmp_path_factory, data, rows, width) -> None:
    from jointlab.interop.mcap_export import export_mcap

    fields = (
        Field("state", "position", width),
        Field("state", "armed", 1, False),
        Field("sent", "torque", width),
    )
    table = np.array(
        data.draw(
            st.lists(
                st.lists(CELLS, min_size=2 * width + 1, max_size=2 * width + 1),
                min_size=rows,
                max_size=rows,
            )
        )
    )
    times = np.cumsum(data.draw(st.lists(st.floats(0, 10), min_size=rows, max_size=rows)))
    log = Log(times, table, fields, LogMetadata(joint_names=[f"j{i}" for i in range(width)]))
    target = export_mcap(log, tmp_path_factory.mktemp("rt") / "log.mcap")
    messages = _messages(target)
    for channel in ("state", "sent"):
        rows_ = np.flatnonzero(_logged(log, channel))
        mine = [m for t, m, _, _ in messages if t == f"/jointlab/{channel}"]
        assert len(mine) == len(rows_)
        for name in log.field_names(channel):
            got = np.array([_array(np.atleast_1d(m[name]).tolist()) for m in mine])
            np.testing.assert_array_equal(
                got.reshape(log[f"{channel}.{name}"][rows_].shape), log[f"{channel}.{name}"][rows_]
            )
