"""Preconditions first: extras, display and inputs are checked before any work, and a run
that never started leaves no run folder (issue 41, item 11)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from jointlab.cli import main
from jointlab.cli.common import run_folder

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "notebooks" / "models" / "sim_to_sim" / "pybullet-nominal" / "model.zip"


def _without(*modules: str) -> str:
    """``python -c`` code: the CLI with ``modules`` unimportable (a missing extra)."""
    blocked = "; ".join(f"sys.modules[{m!r}] = None" for m in modules)
    return f"import sys; {blocked}; from jointlab.cli import main; sys.exit(main(sys.argv[1:]))"


def _folders(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())


@pytest.mark.parametrize(
    ("step", "says"),
    [
        ("set_position: {joint: nosuch, position: 0.3}", "has no joint 'nosuch'"),
        ("set_position: {joint: elbow, position: 9.0}", "outside [-2.4, 2.4]"),
    ],
)
def test_a_program_refused_before_the_robot_moves_leaves_no_run(
    tmp_path, monkeypatch, capsys, step, says
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(f"- {step}\n")
    assert main(["run", "arm6", "bad.yaml"]) == 2
    err = capsys.readouterr().err
    assert says in err and "partial outputs" not in err, err
    assert _folders(tmp_path) == []  # no runs/, no .failed, no log.npz


def test_a_run_that_fails_after_it_started_keeps_its_outputs(tmp_path) -> None:
    folder = tmp_path / "runs" / "x"
    with pytest.raises(RuntimeError), run_folder(folder) as work:
        (work / "log.npz").write_bytes(b"data")
        raise RuntimeError("fault after the start")
    assert (tmp_path / "runs" / "x.failed" / "log.npz").read_bytes() == b"data"
    with pytest.raises(RuntimeError), run_folder(tmp_path / "more" / "y"):
        raise RuntimeError("refused before the start")
    assert _folders(tmp_path) == ["runs", "runs/x.failed"]


def test_gui_without_a_display_is_said_before_the_previous_run(
    tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    (tmp_path / "runs" / "demo-arm6").mkdir(parents=True)
    (tmp_path / "runs" / "demo-arm6" / "log.npz").write_bytes(b"an old run")
    assert main(["demo", "--gui"]) == 2
    err = capsys.readouterr().err
    assert "needs a display" in err and "previous run" not in err, err
    assert main(["run", "sim://arm6?gui=1", str(ROOT / "examples/programs/arm6_tour.yaml")]) == 2
    assert "needs a display" in capsys.readouterr().err
    assert _folders(tmp_path) == ["runs", "runs/demo-arm6"]


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        (["eval", "arm6", str(MODEL), "--video"], "video"),
        (["run", "arm6", str(ROOT / "examples/programs/arm6_tour.yaml"), "--view"], "view"),
    ],
)
def test_a_missing_extra_is_said_before_any_work(tmp_path, command, extra) -> None:
    blocked = {"video": ("moviepy",), "view": ("viser",)}[extra]
    done = subprocess.run(
        [sys.executable, "-c", _without(*blocked), *command],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert f"'{extra}' extra" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "episodes" not in done.stdout  # nothing ran
    assert _folders(tmp_path) == []
