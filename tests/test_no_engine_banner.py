"""No PyBullet banner anywhere: a program run and the Commander's rigid-body model are quiet.

PyBullet writes its build banner (``pybullet build time: ...``, stderr) at import and
``argv[0]=...`` lines (stdout) at some connects, from C code that Python's ``sys.stdout``
cannot catch. Each case runs in a fresh interpreter so that the import really happens there,
and the process's own file descriptors 1 and 2 are read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BANNERS = ("pybullet build time", "argv[0]=")

MODEL = """
from jointlab.robots import load_robot
from jointlab.robots.dynamics import rigid_body_model
from jointlab.sim.pybullet import bullet_model
print(type(rigid_body_model(load_robot("arm6"), evaluator=bullet_model)).__name__)
"""


def _run(argv: list[str], cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "JOINTLAB_VERBOSE"}
    environment.update(env)
    return subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=300,
        check=False,
    )


def _no_banner(result: subprocess.CompletedProcess) -> None:
    for banner in BANNERS:
        assert banner not in result.stdout and banner not in result.stderr, banner


@pytest.mark.parametrize("robot", ["emulated://arm6?lockstep=1", "sim://arm6"])
def test_a_program_run_prints_no_engine_banner(robot: str, tmp_path: Path) -> None:
    (tmp_path / "short.yaml").write_text("- home: {}\n- hold: {for: 0.05}\n")
    result = _run(["-m", "jointlab", "run", robot, "short.yaml", "--out", "runs"], tmp_path)
    assert result.returncode == 0, result.stderr
    _no_banner(result)
    assert result.stderr == ""
    assert "wrote" in result.stdout and list((tmp_path / "runs").glob("*/log.npz"))


def test_the_commanders_bullet_model_loads_quietly() -> None:
    quiet = _run(["-c", MODEL])
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == "BulletDynamics\n" and quiet.stderr == ""
    # the same process asked to be verbose shows PyBullet's own output: it is seen when there
    loud = _run(["-c", MODEL], None, JOINTLAB_VERBOSE="1")
    assert "pybullet build time" in loud.stderr
