"""Plots of a recorded run: panels, lines, limits, state bands, saving and headless use."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure
from recording_helpers import DOF, Run, flags_at

from jointlab.errors import ConfigurationError
from jointlab.recording import LogError, LogMetadata, Recorder, load_log, plots

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def log_path(tmp_path, run: Run) -> Path:
    path = tmp_path / "run.npz"
    with Recorder(path, run.metadata) as rec:
        for k, t in enumerate(run.times):
            rec.log(t, desired=run.desired[k], applied=run.applied[k], state=run.states[k])
            if k in (5, 25):
                rec.event(t, "begin_motion" if k == 5 else "stalled", command_id=k)
    return path


def lines(ax, gid):
    return [line for line in ax.get_lines() if line.get_gid() == gid]


def axes():
    return Figure().subplots()


def test_positions_against_targets_and_limits(log_path, run):
    ax = plots.plot_positions(axes(), log_path)
    assert ax.get_title() == "Joint positions"
    assert "position" in ax.get_ylabel()
    measured, targets = lines(ax, "state"), lines(ax, "target")
    assert [line.get_label() for line in measured] == ["shoulder", "elbow", "wrist"]
    assert len(targets) == DOF
    assert len(lines(ax, "limit")) == 2 * DOF
    assert np.array_equal(measured[1].get_ydata(), run.stacked("state", "position")[:, 1])
    assert np.array_equal(
        targets[0].get_ydata(), run.stacked("desired", "position")[:, 0], equal_nan=True
    )
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["shoulder", "elbow", "wrist", "target", "limit"]


def test_joint_selection_by_name_and_index(log_path):
    ax = plots.plot_positions(axes(), log_path, joints=["wrist", 0], limits=False)
    assert [line.get_label() for line in lines(ax, "state")] == ["wrist", "shoulder"]
    assert lines(ax, "limit") == []
    with pytest.raises(ConfigurationError, match="no joint 'knee'"):
        plots.plot_positions(axes(), log_path, joints=["knee"])


@pytest.mark.parametrize(
    ("function", "title", "ylabel", "field", "limit"),
    [
        (plots.plot_velocities, "Joint velocities", "velocity", "velocity", (3.0, 3.0, 3.0)),
        (plots.plot_torques, "Applied torques", "torque", "torque", (1.0, 2.0, 1.5)),
        (plots.plot_currents, "Motor currents", "current [A]", "current", (5.0, 5.0, 5.0)),
    ],
)
def test_series_panels_draw_symmetric_limits(log_path, run, function, title, ylabel, field, limit):
    ax = function(axes(), log_path)
    assert ax.get_title() == title
    assert ylabel in ax.get_ylabel()
    measured = lines(ax, "state")
    assert len(measured) == DOF
    assert np.array_equal(measured[2].get_ydata(), run.stacked("state", field)[:, 2])
    levels = sorted(float(line.get_ydata()[0]) for line in lines(ax, "limit"))
    assert levels == sorted([*limit, *(-x for x in limit)])


def test_tracking_error_is_target_minus_position(log_path, run):
    ax = plots.plot_tracking_error(axes(), log_path)
    assert ax.get_title().startswith("Tracking error")
    error = run.stacked("desired", "position") - run.stacked("state", "position")
    measured = lines(ax, "state")
    assert len(measured) == DOF
    for j, line in enumerate(measured):
        assert np.array_equal(line.get_ydata(), error[:, j], equal_nan=True)
    rms = np.sqrt(np.nanmean(error[:, 1] ** 2))
    assert measured[1].get_label() == f"elbow (rms {rms:.3g})"


def test_actuator_state_bands(log_path, run):
    ax = plots.plot_actuator_states(axes(), log_path)
    assert ax.get_title() == "Actuator state"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["shoulder", "elbow", "wrist"]
    by_flag = {}
    for collection in ax.collections:
        by_flag.setdefault(collection.get_gid(), []).append(collection)
    assert sorted(by_flag) == ["BRAKED", "IDLE", "MOVING", "STALLED"]
    n = len(run.times)
    # Only joint 2 stalls, for 5 samples from n // 2: one band [t_a, t_a + 5 dt).
    (stalled,) = by_flag["STALLED"]
    (path,) = stalled.get_paths()
    x, y = path.vertices[:, 0], path.vertices[:, 1]
    assert x.min() == pytest.approx(run.times[n // 2])
    assert x.max() == pytest.approx(run.times[n // 2 + 5])
    assert 1.5 < y.min() < y.max() < 2.5  # the wrist's row
    # IDLE runs per joint: before MOVING and again while BRAKED|IDLE.
    flags = np.array([flags_at(k, n) for k in range(n)])
    idle_runs = sum(len(c.get_paths()) for c in by_flag["IDLE"])
    expected = sum(
        int(np.count_nonzero(np.diff(np.r_[0, (flags[:, j] & 1) != 0, 0]) == 1)) for j in range(DOF)
    )
    assert idle_runs == expected == 2 * DOF
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "IDLE", "MOVING", "BRAKED", "STALLED",
    ]  # fmt: skip


def test_plot_log_builds_every_panel(log_path):
    fig = plots.plot_log(log_path)
    assert isinstance(fig, Figure)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == [
        "Joint positions",
        "Joint velocities",
        "Applied torques",
        "Motor currents",
        "Tracking error (target − position)",
        "Actuator state",
    ]
    assert fig.axes[-1].get_xlabel() == "time [s]"
    assert fig.get_suptitle() == "testbot — run.npz"
    assert len(lines(fig.axes[-1], "event")) == 2
    shared = fig.axes[0].get_shared_x_axes()
    assert all(shared.joined(fig.axes[0], ax) for ax in fig.axes)


def test_plot_log_adapts_to_the_channels_present(tmp_path, run):
    path = tmp_path / "state_only.csv"
    with Recorder(path) as rec:
        for k, t in enumerate(run.times):
            rec.log(t, state=run.states[k])
    fig = plots.plot_log(load_log(path), panels=None)
    assert "Tracking error (target − position)" not in [ax.get_title() for ax in fig.axes]
    assert lines(fig.axes[0], "target") == []
    assert lines(fig.axes[0], "limit") == []  # no metadata, no limits
    assert lines(fig.axes[0], "state")[0].get_label() == "joint 0"
    with pytest.raises(LogError, match="needs the log fields"):
        plots.plot_log(path, panels=["tracking_error"])
    with pytest.raises(ConfigurationError, match="unknown plot panel"):
        plots.plot_log(path, panels=["spectrum"])


def test_save_writes_a_png(tmp_path, log_path):
    fig = plots.plot_log(log_path, panels=["positions", "actuator_states"])
    out = plots.save(fig, tmp_path / "figs" / "run.png")
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 10_000


def test_plots_leave_the_users_backend_alone(tmp_path, log_path):
    script = textwrap.dedent(
        f"""
        import sys
        import matplotlib
        matplotlib.use("pdf")
        from jointlab.recording import plot_log
        from jointlab.recording.plots import save
        save(plot_log({str(log_path)!r}), {str(tmp_path / "h.png")!r})
        assert matplotlib.get_backend() == "pdf", matplotlib.get_backend()
        assert "matplotlib.pyplot" not in sys.modules
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MPLBACKEND")}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "h.png").stat().st_size > 0


def test_metadata_for_other_joints_is_ignored(tmp_path, run):
    path = tmp_path / "mismatch.npz"
    with Recorder(path, LogMetadata(joint_names=list("abcdef"), effort_limit=[1.0] * 6)) as rec:
        for k, t in enumerate(run.times):
            rec.log(t, state=run.states[k])
    ax = plots.plot_torques(axes(), path)
    assert lines(ax, "limit") == []
    assert [line.get_label() for line in lines(ax, "state")] == ["joint 0", "joint 1", "joint 2"]
