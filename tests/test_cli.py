"""The ``jointlab`` command, run as a user runs it (a subprocess)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jointlab.recording import load_log


def jointlab(
    *args: str, cwd: Path | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jointlab", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, check=False)  # fmt: skip


@pytest.mark.slow
def test_demo_writes_a_log_and_a_plot(tmp_path: Path) -> None:
    result = jointlab("demo", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    for verb in ("home", "follow_trajectory", "set_positions", "hold", "stop"):
        assert verb in result.stdout
    image = tmp_path / "out" / "demo.png"
    assert image.stat().st_size > 10_000
    log = load_log(tmp_path / "out" / "demo_log.npz")
    assert log["state.position"].shape[1] == 6 and len(log.time) > 1000
    assert np.isfinite(log["applied.torque"]).all()


def test_describe_check_accepts_a_builtin() -> None:
    result = jointlab("describe", "arm6", "--check")
    assert result.returncode == 0, result.stderr
    assert "ok" in result.stdout and "6 joints" in result.stdout


def test_describe_prints_a_table_and_exports() -> None:
    table = jointlab("describe", "trifinger")
    assert table.returncode == 0 and "finger2_lower" in table.stdout
    urdf = jointlab("describe", "planar2", "--urdf", "-")
    assert urdf.returncode == 0 and '<joint name="elbow" type="revolute">' in urdf.stdout


def test_describe_check_rejects_a_broken_file_naming_the_field(tmp_path: Path) -> None:
    robot = tmp_path / "broken.yaml"
    robot.write_text(
        "name: broken\nactuators:\n"
        "  - {name: j1, type: rotary, min: -1.0, max: 1.0, home: 2.0}\n"
    )
    result = jointlab("describe", str(robot), "--check")
    assert result.returncode != 0
    message = " ".join(result.stderr.split())
    assert "broken.yaml" in message and "'j1'" in message and "'home'" in message


def test_run_executes_a_program_file_in_simulation(tmp_path: Path) -> None:
    program = tmp_path / "program.yaml"
    program.write_text(
        "- home: {}\n"
        "- set_position: {joint: x, position: 0.5}\n"
        "- hold: {for: 0.2}\n"
        "- stop: {mode: decelerate}\n"
    )
    result = jointlab("run", "gantry3", str(program), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stdout + result.stderr
    log = load_log(tmp_path / "out" / "demo_log.npz")
    assert abs(log["state.position"][-1, 0] - 0.5) < 1e-3


def test_run_rejects_an_unknown_verb_with_a_hint(tmp_path: Path) -> None:
    program = tmp_path / "program.yaml"
    program.write_text("- set_postion: {joint: x, position: 0.5}\n")
    result = jointlab("run", "gantry3", str(program))
    assert result.returncode != 0
    assert "set_postion" in result.stderr and "set_position" in result.stderr


def test_plot_renders_a_recorded_log(tmp_path: Path) -> None:
    program = tmp_path / "program.yaml"
    program.write_text("- home: {}\n- hold: {for: 0.05}\n")
    assert jointlab("run", "planar2", str(program), "--out", str(tmp_path)).returncode == 0
    result = jointlab("plot", str(tmp_path / "demo_log.npz"), "--out", str(tmp_path / "p.png"))
    assert result.returncode == 0, result.stdout
    assert (tmp_path / "p.png").stat().st_size > 5_000


@pytest.mark.slow
def test_train_runs_ppo_and_saves_a_model(tmp_path: Path) -> None:
    result = jointlab("train", "reach", "--steps", "1024", "--envs", "2", "--out", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "ppo_reach.zip").stat().st_size > 10_000
    assert (tmp_path / "vecnormalize.pkl").exists()


def test_train_rejects_an_unknown_task() -> None:
    result = jointlab("train", "juggle", "--steps", "10")
    assert result.returncode != 0 and "juggle" in result.stderr
