"""``jointlab identify excite`` and ``jointlab identify fit``, run as a user runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import jointlab
from jointlab.cli import main
from jointlab.identify import plant
from jointlab.recording import load_log


def jointlab_command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jointlab", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, check=False)  # fmt: skip


@pytest.mark.slow
def test_excite_then_fit_writes_the_identified_robot_file(tmp_path, monkeypatch, capsys):
    nominal = jointlab.load_robot("arm6")
    planted = tmp_path / "planted.yaml"
    planted.write_text(plant(nominal, damping=1.4, delay=1).to_yaml())
    excite = jointlab_command(
        "identify", "excite", "arm6", f"sim://{planted}", "--out", "excite.npz",
        "--joints", "wrist_pitch", "--duration", "2.5", "--band", "0.5", "1.5",
        "--program-out", "program.yaml", cwd=tmp_path,
    )  # fmt: skip
    assert excite.returncode == 0, excite.stderr + excite.stdout
    assert "multisine excitation of arm6" in excite.stdout
    assert next(iter(yaml.safe_load((tmp_path / "program.yaml").read_text())[0])) == (
        "set_positions"
    )
    log = load_log(tmp_path / "excite.npz")
    assert log.metadata.extra["url"] == f"sim://{planted}"
    assert log.metadata.robot == "arm6"

    monkeypatch.chdir(tmp_path)  # the fits run in this process: no second interpreter start
    assert main(["identify", "fit", "excite.npz", "arm6", "--out", "x.yaml"]) == 2
    assert "of joint 'elbow' cannot be identified" in capsys.readouterr().out
    assert not (tmp_path / "x.yaml").exists()

    assert main([
        "identify", "fit", "excite.npz", "arm6", "--out", "identified.yaml",
        "--joints", "wrist_pitch", "--parameters", "static_friction", "damping", "delay",
        "--validate", "excite.npz", "--plot", "report.png",
    ]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "dynamics.damping" in printed and "gap closed over all joints" in printed
    identified = jointlab.load_robot(tmp_path / "identified.yaml")
    pitch = identified.joint_index("wrist_pitch")
    assert identified.damping[pitch] == pytest.approx(1.4 * nominal.damping[pitch], rel=0.02)
    assert identified.joints[pitch].motor.delay == 1
    assert identified.damping[0] == nominal.damping[0]  # a joint not fitted is left alone
    assert (tmp_path / "report.png").stat().st_size > 10_000
