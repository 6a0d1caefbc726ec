"""``jointlab view`` and ``--view``: the address is printed and the command ends cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from jointlab.cli import main

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = str(ROOT / "examples" / "programs" / "first_program.yaml")


@pytest.mark.parametrize("url", ["sim://arm6", "emulated://arm6?lockstep=1"])
def test_view_runs_a_program_while_serving_and_stops_after_seconds(url, capsys):
    assert main(["view", url, "--program", PROGRAM, "--seconds", "0.05", "--port", "0"]) == 0
    assert "live view: http://127.0.0.1:" in capsys.readouterr().out


def test_view_watches_a_servo_bus_arm_as_it_is(capsys):
    assert main(["view", "emulated://so101?lockstep=1", "--seconds", "0.05", "--port", "0"]) == 0
    assert "live view: http://127.0.0.1:" in capsys.readouterr().out


def test_run_with_view_shows_the_robot_it_runs(tmp_path, capsys):
    assert (
        main(["run", "arm6", PROGRAM, "--view", "0", "--linger", "0", "--out", str(tmp_path)]) == 0
    )
    out = capsys.readouterr().out
    assert "live view: http://127.0.0.1:" in out and "wrote" in out
