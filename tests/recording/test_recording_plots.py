"""Plots of recorded runs: small multiples per joint, limits, saturation, events, overlays."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure
from recording_helpers import DOF, Run

from jointlab.errors import ConfigurationError
from jointlab.recording import LogError, Recorder, load_log, plots

ROOT = Path(__file__).resolve().parents[2]


def write(
    path: Path,
    run: Run,
    *,
    shift: float = 0.0,
    offset: float = 0.0,
    metadata=None,
    events: bool = True,
) -> Path:
    with Recorder(path, metadata or run.metadata) as rec:
        for k, t in enumerate(run.times):
            state = replace(run.states[k], position=run.states[k].position + offset)
            rec.log(t + shift, desired=run.desired[k], applied=run.applied[k], state=state)
            if events and k in (5, 25):
                rec.event(t + shift, "begin_motion" if k == 5 else "stalled", command_id=k)
            if events and k in (2, 20):
                rec.event(t + shift, "command", verb="set_position" if k == 2 else "hold")
    return path


@pytest.fixture
def log_path(tmp_path, run: Run) -> Path:
    return write(tmp_path / "run.npz", run)


def lines(ax, gid):
    return [line for line in ax.get_lines() if line.get_gid() == gid]


def legend_labels(fig: Figure) -> list[str]:
    return [text.get_text() for legend in fig.legends for text in legend.get_texts()]


def test_one_row_per_joint_and_one_column_per_quantity(log_path):
    fig = plots.plot_log(log_path)
    assert isinstance(fig, Figure) and len(fig.axes) == 3 * DOF
    titles = [ax.get_title() for ax in fig.axes[:3]]
    assert titles == [
        "position and target",
        "tracking error (target − position)",
        "torque / effort limit",
    ]
    assert [fig.axes[3 * j].get_ylabel() for j in range(DOF)] == [
        "shoulder\n[rad | m]",
        "elbow\n[rad | m]",
        "wrist\n[rad | m]",
    ]
    colours = {line.get_color() for ax in fig.axes[3:6] for line in lines(ax, "state")}
    assert colours == {"C1"}  # the elbow's row is the elbow's colour
    shared = fig.axes[0].get_shared_x_axes()
    assert all(shared.joined(fig.axes[0], ax) for ax in fig.axes)
    assert fig.get_suptitle() == "testbot — run.npz"


def test_target_is_drawn_over_the_measured_line(log_path, run):
    ax = plots.plot_log(log_path).axes[3]  # elbow position
    (measured,), (target,) = lines(ax, "state"), lines(ax, "target")
    assert target.get_zorder() > measured.get_zorder()
    assert np.array_equal(
        target.get_ydata(), run.stacked("desired", "position")[:, 1], equal_nan=True
    )


def test_limits_are_drawn_but_do_not_set_the_scale(log_path, run):
    fig = plots.plot_log(log_path)
    elbow = fig.axes[3]
    q = run.stacked("state", "position")[:, 1]
    low, high = elbow.get_ylim()
    assert low < q.min() and high > q.max()
    assert high - low < 1.2 * (q.max() - q.min())  # the ±2 rad limits would be 30x wider
    assert sorted(line.get_ydata()[0] for line in lines(elbow, "limit")) == [-2.0, 2.0]


def test_torque_is_a_share_of_its_limit_with_saturation_shaded(log_path, run):
    fig = plots.plot_log(log_path)
    shoulder, elbow = fig.axes[2], fig.axes[5]
    (share,) = lines(elbow, "state")
    assert np.allclose(share.get_ydata(), 100 * run.stacked("state", "torque")[:, 1] / 2.0)
    assert elbow.get_ylabel() == "[% of limit]"
    saturated = [p for p in shoulder.patches if p.get_gid() == "saturated"]
    assert saturated  # the shoulder's torque is clipped at its 1 N·m limit
    assert not [p for p in elbow.patches if p.get_gid() == "saturated"]  # 2 N·m never reached
    assert "torque saturated" in legend_labels(fig)


def test_tracking_error_in_milli_units_with_its_rms(log_path, run):
    ax = plots.plot_log(log_path).axes[4]
    error = 1e3 * (run.stacked("desired", "position") - run.stacked("state", "position"))[:, 1]
    (line,) = lines(ax, "state")
    assert np.allclose(line.get_ydata(), error, equal_nan=True)
    rms = np.sqrt(np.nanmean(error**2))
    (summary,) = [t for t in ax.texts if t.get_gid() == "error_summary"]
    assert summary.get_text().startswith(f"rms {rms:.3g}")


def test_commands_are_labelled_and_events_have_a_legend(log_path):
    fig = plots.plot_log(log_path)
    labels = [t.get_text() for t in fig.axes[0].texts if t.get_gid() == "command_label"]
    assert labels == ["set_position", "hold"]
    assert all(len(lines(ax, "command")) == 2 and len(lines(ax, "event")) == 2 for ax in fig.axes)
    assert legend_labels(fig) == [
        "measured",
        "target",
        "limit",
        "torque saturated",
        "command",
        "begin motion",
        "stalled",
    ]


def test_units_follow_the_joint_type(tmp_path, run):
    metadata = replace(run.metadata, joint_types=("rotary", "linear", "rotary"))
    fig = plots.plot_log(write(tmp_path / "typed.npz", run, metadata=metadata))
    assert fig.axes[3].get_ylabel() == "elbow\n[m]" and fig.axes[4].get_ylabel() == "[mm]"
    assert fig.axes[0].get_ylabel() == "shoulder\n[rad]" and fig.axes[1].get_ylabel() == "[mrad]"


def test_columns_and_joints_can_be_chosen(log_path):
    fig = plots.plot_log(log_path, columns=["velocity", "current"], joints=["wrist", 0])
    assert len(fig.axes) == 4 and fig.axes[0].get_ylabel() == "[rad | m/s]"
    assert {line.get_color() for line in lines(fig.axes[0], "state")} == {"C2"}
    with pytest.raises(ConfigurationError, match="no joint 'knee'"):
        plots.plot_log(log_path, joints=["knee"])
    with pytest.raises(ConfigurationError, match="unknown plot column 'spectrum'"):
        plots.plot_log(log_path, columns=["spectrum"])


def test_plot_log_adapts_to_the_channels_present(tmp_path, run):
    path = tmp_path / "state_only.csv"
    with Recorder(path) as rec:
        for k, t in enumerate(run.times):
            rec.log(t, state=run.states[k])
    fig = plots.plot_log(load_log(path))
    assert len(fig.axes) == 2 * DOF  # position and torque: no target, no tracking error
    assert lines(fig.axes[0], "target") == [] and lines(fig.axes[0], "limit") == []
    assert fig.axes[0].get_ylabel() == "joint 0\n[rad | m]"
    assert fig.axes[1].get_ylabel() == "[N·m | N]"  # no effort limit: absolute torque
    with pytest.raises(LogError, match="needs the log fields"):
        plots.plot_log(path, columns=["tracking_error"])


def test_comparison_aligns_runs_on_their_first_command(tmp_path, run):
    first = write(tmp_path / "sim.npz", run, events=False)
    later = write(tmp_path / "device.npz", run, shift=0.1, offset=0.002, events=False)
    fig = plots.plot_comparison({"sim": first, "device": later})
    assert len(fig.axes) == 2 * DOF
    overlay, difference = fig.axes[2], fig.axes[3]  # the elbow
    sim, device = lines(overlay, "sim")[0], lines(overlay, "device")[0]
    assert sim.get_color() == device.get_color() == "C1"  # same colour per joint
    assert np.allclose(sim.get_xdata(), device.get_xdata())  # 0.1 s offset removed
    delta = lines(difference, "device - sim")[0].get_ydata()
    assert np.allclose(delta[np.isfinite(delta)], 2.0)  # 2 mrad everywhere
    assert fig.get_label().startswith("largest difference 2")
    with pytest.raises(ConfigurationError, match="two runs or more"):
        plots.plot_comparison({"sim": first})


def test_episode_returns_bar_chart():
    fig = plots.plot_episodes([-3.0, -1.0, -2.0], [False, True, False])
    ax = fig.axes[0]
    assert len(ax.patches) == 3 and "33%" in ax.get_title()


def test_save_writes_a_png(tmp_path, log_path):
    out = plots.save(plots.plot_log(log_path), tmp_path / "figs" / "run.png")
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
