"""A recorder killed with SIGKILL leaves a readable file holding every flushed row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from jointlab.recording import Recorder, journal_path, load_log

ROOT = Path(__file__).resolve().parents[2]
DOF = 4

# The child logs row k with values row_values(k) (NaNs included) and an event every 10 rows,
# printing rows_written after each flush; with "stop" it then waits to be killed.
CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from jointlab.interface import NJointAction
    from jointlab.recording import LogMetadata, Recorder

    path, mode = sys.argv[1], sys.argv[2]

    def row_values(k):
        v = np.sin(np.arange({dof}) + 0.1 * k) * (k + 1)
        v[k % {dof}] = np.nan
        return v

    rec = Recorder(path, LogMetadata(robot="crash", dof={dof}), flush_every=25,
                   flush_interval=3600)
    reported = 0
    k = 0
    while True:
        torque = np.cos(np.arange({dof}) * k)
        rec.log(k * 0.001, desired=NJointAction.Position(row_values(k)),
                extra={{"k": float(k)}}, ff={{"torque": torque}})
        if k % 10 == 0:
            rec.event(k * 0.001, "begin_motion", command_id=k)
        k += 1
        if rec.rows_written != reported:
            reported = rec.rows_written
            print(reported, flush=True)
        if mode == "stop" and k == 110:
            time.sleep(120)
    """
).format(dof=DOF)


def row_values(k: np.ndarray) -> np.ndarray:
    v = np.sin(np.arange(DOF)[None, :] + 0.1 * k[:, None]) * (k[:, None] + 1)
    v[np.arange(len(k)), k % DOF] = np.nan
    return v


def start_child(path: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def kill_after(proc: subprocess.Popen[str], rows: int) -> int:
    """Read reports until ``rows`` were flushed, then SIGKILL; return the last report."""
    reported = 0
    try:
        while reported < rows:
            line = proc.stdout.readline()
            if not line:
                pytest.fail(f"recorder child died early: {proc.stderr.read()}")
            reported = int(line)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    return reported


def check_rows(path: Path, at_least: int) -> int:
    log = load_log(path)
    n = len(log)
    assert not log.finalised
    assert n >= at_least
    k = np.arange(n)
    assert np.array_equal(log["extra.k"], k.astype(float))
    assert np.array_equal(log.time, k * 0.001)
    assert np.array_equal(log["desired.position"], row_values(k), equal_nan=True)
    assert np.array_equal(log["ff.torque"], np.cos(np.arange(DOF)[None, :] * k[:, None]))
    assert np.isnan(log["desired.position_kp"]).all()
    assert log.metadata.robot == "crash"
    return n


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", ["csv", "npz"])
def test_killed_while_idle_keeps_exactly_the_flushed_rows(tmp_path, fmt):
    path = tmp_path / f"crash.{fmt}"
    proc = start_child(path, "stop")
    assert kill_after(proc, 100) == 100
    assert check_rows(path, 100) == 100  # 10 logged rows were not flushed yet: lost
    log = load_log(path)
    assert [e.get("command_id") for e in log.events] == list(range(0, 100, 10))
    if fmt == "npz":
        assert not path.exists() and journal_path(path).exists()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", ["csv", "npz"])
def test_killed_mid_logging_leaves_a_consistent_prefix(tmp_path, fmt):
    path = tmp_path / f"busy.{fmt}"
    reported = kill_after(start_child(path, "run"), 2000)
    check_rows(path, reported)


def record_and_keep_open(path: Path, n: int) -> Recorder:
    rec = Recorder(path, flush_every=5, flush_interval=3600)
    for k in range(n):
        rec.log(k * 0.5, x={"v": [k, -k, np.nan]})
        if k % 4 == 0:
            rec.event(k * 0.5, "stalled", joint=k)
    rec.flush()
    return rec


@pytest.mark.parametrize("fmt", ["csv", "npz"])
def test_torn_tail_is_dropped_at_every_cut(tmp_path, fmt):
    """Cut the file at every byte of its last 600: the loader returns a row prefix."""
    path = tmp_path / f"full.{fmt}"
    rec = record_and_keep_open(path, 30)
    source = path if fmt == "csv" else journal_path(path)
    blob = source.read_bytes()
    rec.close()
    cut_path = tmp_path / f"cut.{fmt}"
    target = cut_path if fmt == "csv" else journal_path(cut_path)
    previous = 0
    for cut in range(max(0, len(blob) - 600), len(blob) + 1):
        target.write_bytes(blob[:cut])
        log = load_log(cut_path)
        n = len(log)
        assert n >= previous  # more bytes never means fewer rows
        previous = n
        assert np.array_equal(log["x.v[0]"], np.arange(n, dtype=float))
        assert np.isnan(log["x.v[2]"]).all()
    assert previous == 30
