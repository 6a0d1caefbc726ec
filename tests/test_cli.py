"""The ``jointlab`` command, run as a user runs it (subprocesses) and, for the many bad
argument cases, in process (the same ``main``, much faster)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jointlab import __version__
from jointlab.cli import COMMANDS, main
from jointlab.recording import load_log

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = "- home: {}\n- set_position: {joint: x, position: 0.5}\n- hold: {for: 0.2}\n"


def jointlab(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jointlab", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        check=False,
    )


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gantry.yaml").write_text(PROGRAM)
    (tmp_path / "typo.yaml").write_text("- set_postion: {joint: x, position: 0.5}\n")
    return tmp_path


BAD_ARGUMENTS = [
    ([], "required: COMMAND"),
    (["rnu"], "did you mean 'run'?"),
    (["view"], "required: ROBOT"),
    (["view", "arm7"], "did you mean 'arm6'?"),
    (["view", "arm6", "--program", "missing.yaml"], "cannot read program"),
    (["describe"], "required: ROBOT"),
    (["describe", "arm7"], "did you mean 'arm6'?"),
    (["describe", "arm6", "--chek"], "did you mean '--check'?"),
    (["describe", "arm6", "--urdf", "a.urdf", "--yaml", "b.yaml"], "not allowed with"),
    (["demo", "arm7"], "did you mean 'arm6'?"),
    (["demo", "emulated://arm6"], "not the URL"),
    (["run", "gantry3"], "required: PROGRAM"),
    (["run", "gantry3", "missing.yaml"], "cannot read program"),
    (["run", "gantry3", "typo.yaml"], "did you mean 'set_position'?"),
    (["run", "emulated://gantry3", "gantry.yaml", "--gui"], "--gui needs a simulated robot"),
    (["run", "sim://gantry3?gui=0", "gantry.yaml", "--gui"], "conflicts with gui="),
    (["run", "gantry3", "gantry.yaml", "--name", "../up"], "plain folder name"),
    (["run", "gantry3", "gantry.yaml", "--out"], "expected one argument"),
    (["plot", "missing.npz"], "missing.npz"),
    (["export", "missing.npz", "--to", "mcap"], "no log at missing.npz"),
    (["export", "gantry.yaml", "out.txt"], "give --to mcap or --to rerun"),
    (["export", "gantry.yaml", "out.rrd", "--to", "mcap"], "--to mcap writes a .mcap file"),
    (["export", "gantry.yaml", "--to", "foxglove"], "invalid choice"),
    (["emulate", "arm7"], "did you mean 'arm6'?"),
    (["emulate", "arm6", "--rate", "0"], "whole number >= 1"),
    (["emulate", "so101", "--bus", "dynamixel"], "emulate it with --bus feetech"),
    (["calibrate", "feetech:///dev/ttyACM0"], "required: --robot"),
    (["calibrate", "sim://so101", "--robot", "so101"], "needs a servo bus"),
    (["calibrate", "emulated://so101", "--robot", "so101", "--torque", "0"], "> 0"),
    (["check", "sim://"], "no robot given"),
    (["check", "ftp://arm6"], "unknown scheme 'ftp'"),
    (["check", "arm6", "--pings", "-3"], "whole number >= 1"),
    (["train", "rech"], "did you mean 'reach'?"),
    (["train", "jointlab/Reach-v1"], "did you mean 'jointlab/Reach-v0'?"),
    (["train", "reach", "--steps", "0"], "whole number >= 1"),
    (["train", "reach", "--stpes", "10"], "did you mean '--steps'?"),
    (["train", "reach", "--engine", "bullet"], "did you mean 'pybullet'?"),
    (["train", "reach", "--eval-every", "0"], "whole number >= 1"),
    (["runs", "no-such-folder"], "no-such-folder is not a folder"),
    (["eval", "arm6", "missing.zip"], "no such policy"),
    (["eval", "arm6", "missing.zip", "--episodes", "0"], "whole number >= 1"),
    (["record", "arm6"], "required: POLICY"),
    (["record", "--leader", "emulated://so101"], "needs both --leader URL and --follower URL"),
    (
        ["record", "--program", "p.yaml", "--follower", "sim://so101", "--dataset", "d"],
        "needs --task TEXT",
    ),
    (["record", "--program", "p.yaml", "--follower", "sim://so101"], "give --dataset FOLDER"),
    (
        ["teleop", "--leader", "sim://planar2", "--follower", "sim://so101"],
        "the leader has 2 joints",
    ),
    (["teleop", "--leader", "koch", "--follower", "so101"], "--mapping range"),
    (["replay", "missing-dataset", "--episode", "0", "sim://so101"], "not a LeRobot dataset"),
    (["find-port", "--prots", "/dev/null"], "did you mean '--ports'?"),
    (["setup-motors", "dynamixel:///dev/null", "--robot", "so101"], "has a feetech bus"),
    (
        ["setup-motors", "feetech:///dev/null", "--robot", "so101", "--joints", "elbow"],
        "are not servos of 'so101'",
    ),
    (["replay", "arm6", "missing.npz"], "missing.npz"),
    (["list", "robts"], "did you mean 'robots'?"),
    (["identify"], "required: STEP"),
    (["identify", "excite", "arm7", "sim://arm6"], "did you mean 'arm6'?"),
    (["identify", "excite", "arm6", "sim://arm6", "--signal", "chrip"], "did you mean 'chirp'?"),
    (["identify", "fit", "arm6", "missing.npz"], "missing.npz: no such log file"),
    (["identify", "fit", "arm6", "gantry.yaml", "--parameters", "frction"], "'static_friction'"),
    (["ros2", "arm7"], "did you mean 'arm6'?"),
    (["ros2", "arm6", "--joint-states-topic", "joint states"], "is not a ROS name"),
    (["ros2", "sim://arm6?control_dt=0.001", "--rate", "300"], "give a rate that divides it"),
    (["identify", "fit", "so101", str(ROOT / "docs")], "is not a LeRobot dataset"),
    (["gap", "so101", "missing-dataset"], "missing-dataset: no such dataset folder or log file"),
    (["gap", "so101", str(ROOT / "docs"), "--p-register", "0"], "> 0"),
    (["acceptance", "emulated://so101"], "required: --robot"),
    (["acceptance", "emulated://so101", "--robot", "so101", "--step", "20"], "at most 10 degrees"),
    (["acceptance", "emulated://arm6", "--robot", "arm6"], "no bus section"),
    (["bench", "sim_overhed", "--folder", str(ROOT / "benchmarks")], "'sim_overhead'?"),
]


@pytest.mark.parametrize(
    ("argv", "expected"), BAD_ARGUMENTS, ids=[" ".join(a) or "(none)" for a, _ in BAD_ARGUMENTS]
)
def test_bad_arguments_exit_2_with_one_line(workdir, capsys, argv, expected) -> None:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2
    assert expected in err
    assert err.count("\n") == 1 and "Traceback" not in err, err


def test_every_subcommand_is_covered_by_the_bad_argument_table() -> None:
    import importlib

    names = {importlib.import_module(f"jointlab.cli.{m}").NAME for m in COMMANDS}
    tried = {argv[0] for argv, _ in BAD_ARGUMENTS if argv}
    assert names <= tried, names - tried


def test_user_errors_never_show_a_traceback_from_a_real_process(tmp_path) -> None:
    result = jointlab("train", "jointlab/Reach-v1", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("jointlab train: error: unknown task")
    example = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "01_sim_to_real.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert example.returncode == 0 and "usage:" in example.stdout


def test_version_help_defaults_and_the_robot_rule(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"jointlab {__version__}"
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "ROBOT     the first positional argument" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "(default: 300000)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["emulate", "--help"])
    text = capsys.readouterr().out
    assert text.startswith("usage: jointlab emulate") and "--watchdog-ms" in text


def test_list_shows_every_kind_of_name(capsys) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for word in ("arm6", "jointlab/Push-v0", "position_and_gains", "emulated", "follow_trajectory"):
        assert word in out


def test_describe_check_and_export_without_overwriting(workdir, capsys) -> None:
    assert main(["describe", "arm6", "--check"]) == 0
    assert "ok arm6: 6 joints" in capsys.readouterr().out
    assert main(["describe", "planar2", "--urdf", "p.urdf"]) == 0
    assert '<joint name="elbow" type="revolute">' in (workdir / "p.urdf").read_text()
    assert main(["describe", "planar2", "--urdf", "p.urdf"]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main(["describe", "planar2", "--urdf", "p.urdf", "--force"]) == 0


def test_describe_check_rejects_a_broken_file_naming_the_field(workdir, capsys) -> None:
    (workdir / "broken.yaml").write_text(
        "name: broken\nactuators:\n  - {name: j1, type: rotary, min: -1.0, max: 1.0, home: 2.0}\n"
    )
    assert main(["describe", "broken.yaml", "--check"]) == 2
    message = capsys.readouterr().err
    assert "broken.yaml" in message and "'j1'" in message and "'home'" in message


def test_run_writes_a_named_run_and_never_overwrites_it(workdir, capsys) -> None:
    assert main(["run", "gantry3", "gantry.yaml"]) == 0
    folder = workdir / "runs" / "run-gantry-gantry3"
    log = load_log(folder / "log.npz")
    assert abs(log["state.position"][-1, 0] - 0.5) < 1e-3
    assert [e.get("verb") for e in log.events_of("command")] == ["home", "set_position", "hold"]
    assert (folder / "plot.png").stat().st_size > 10_000
    before = (folder / "log.npz").read_bytes()
    assert main(["run", "gantry3", "gantry.yaml"]) == 2
    assert "holds a previous run; pass --force" in capsys.readouterr().err
    (workdir / "gantry.yaml").write_text("- set_position: {joint: x, position: 9.0}\n")
    assert main(["run", "gantry3", "gantry.yaml", "--force"]) == 2  # refused at run time
    assert (folder / "log.npz").read_bytes() == before  # the good run is untouched
    assert not (workdir / "runs" / "run-gantry-gantry3.failed").exists()  # never started


def test_check_reports_a_device_and_its_link(capsys, monkeypatch) -> None:
    monkeypatch.setenv("JOINTLAB_DEAD_MS", "10000")  # a wall-clock emulator, busy machine
    assert main(["check", "emulated://planar2", "--pings", "5"]) == 0
    out = capsys.readouterr().out
    for expected in ("protocol version", "HEARTBEAT round trip", "planar2: 2 joints"):
        assert expected in out


@pytest.mark.slow
def test_demo_is_quiet_and_writes_a_log_and_a_plot(tmp_path: Path) -> None:
    result = jointlab("demo", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" and "argv[0]" not in result.stdout
    for verb in ("home", "follow_trajectory", "set_positions", "hold", "stop"):
        assert verb in result.stdout
    log = load_log(tmp_path / "demo-arm6" / "log.npz")
    assert log["state.position"].shape[1] == 6 and len(log.time) > 1000
    assert np.isfinite(log["applied.torque"]).all()
    assert jointlab("demo", "--out", str(tmp_path)).returncode == 2
    assert jointlab("demo", "--out", str(tmp_path), "--force").returncode == 0


@pytest.mark.slow
def test_train_eval_record_replay(workdir, capsys) -> None:
    pytest.importorskip("stable_baselines3")
    pytest.importorskip("moviepy")
    assert main(["train", "reach", "--steps", "256", "--envs", "1"]) == 0
    model = workdir / "runs" / "train-reach" / "model.zip"
    assert model.stat().st_size > 10_000 and model.with_name("vecnormalize.pkl").exists()
    assert main(["eval", "arm6", "runs/train-reach", "--episodes", "2", "--video"]) == 0
    evaluation = workdir / "runs" / "eval-train-reach-arm6"
    summary = json.loads((evaluation / "summary.json").read_text())
    assert summary["env_id"] == "jointlab/Reach-v0" and len(summary["returns"]) == 2
    assert sorted(p.name for p in (evaluation / "video").iterdir()) == [
        "Reach-v0-episode-0.mp4",
        "Reach-v0-episode-1.mp4",
    ]
    assert main(["record", "arm6", str(model), "--seed", "3"]) == 0
    recorded = workdir / "runs" / "record-train-reach-arm6-3" / "log.npz"
    assert len(load_log(recorded)) == 50
    assert main(["replay", "arm6", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert "largest difference 0\n" in out  # the same simulator replays bit for bit
    assert main(["eval", "emulated://arm6", str(model), "--video"]) == 2
    assert "needs a simulated robot" in capsys.readouterr().err


SIM_TO_SIM = Path(__file__).resolve().parents[1] / "notebooks" / "models" / "sim_to_sim"


@pytest.mark.slow
def test_eval_tries_a_pybullet_policy_on_mujoco(workdir: Path) -> None:
    model = str(SIM_TO_SIM / "pybullet-nominal" / "model.zip")
    result = jointlab("eval", "sim://arm6?engine=mujoco", model, "--episodes", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "jointlab/Reach-v0 on sim://arm6?engine=mujoco: 2 episodes" in result.stdout
    bad = jointlab("eval", "sim://arm6?engine=bullet", model, "--episodes", "1", "--name", "x")
    assert bad.returncode == 2 and "did you mean 'pybullet'" in bad.stderr
