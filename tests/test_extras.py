"""A feature whose optional extra is missing says which extra to install, without a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from jointlab.errors import MissingExtraError
from jointlab.extras import require

#: Runs the CLI with torch and SB3 unimportable, as in the demo install (no `rl` extra).
WITHOUT_RL = (
    "import sys; sys.modules['torch'] = None; sys.modules['stable_baselines3'] = None; "
    "from jointlab.cli import main; sys.exit(main(sys.argv[1:]))"
)


def test_require_names_the_extra_and_the_command() -> None:
    with pytest.raises(MissingExtraError, match=r"no_such_module.*'rl' extra.*pip install"):
        require("rl", "training", "json", "no_such_module")
    (json,) = require("rl", "training", "json")
    assert json.dumps([1]) == "[1]"


def test_train_without_the_rl_extra_says_which_extra_to_install(tmp_path) -> None:
    command = ["train", "reach", "--steps", "8", "--out", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_RL, *command],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "'rl' extra" in done.stderr and 'pip install -e ".[rl]"' in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not any(tmp_path.iterdir())  # no half-made run folder


#: Gymnasium's check_env on every registered id, headless, with the live view's viser
#: unimportable, as in the demo install (no `view` extra): prints each id's declared modes.
CHECK_ENV_WITHOUT_VIEW = """
import os, sys, warnings
os.environ.pop("DISPLAY", None); os.environ.pop("WAYLAND_DISPLAY", None)
sys.modules["viser"] = None
import gymnasium
from gymnasium.utils.env_checker import check_env
import jointlab.envs
from jointlab.errors import MissingExtraError
for spec in jointlab.envs.ENV_SPECS:
    env = gymnasium.make(spec.id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)  # builds one environment per declared render mode
    print(spec.id, env.unwrapped.metadata["render_modes"])
    env.close()
try:
    gymnasium.make(spec.id, render_mode="human")
except MissingExtraError as error:
    print("human:", error)
"""


def test_check_env_passes_in_the_demo_install_headless() -> None:
    from jointlab.envs import ENV_SPECS

    done = subprocess.run(
        [sys.executable, "-c", CHECK_ENV_WITHOUT_VIEW], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[:-1] == [f"{spec.id} ['rgb_array']" for spec in ENV_SPECS]
    assert "'view' extra" in lines[-1] and "render_mode='human'" in lines[-1]


def test_human_is_declared_where_the_view_extra_is_installed(monkeypatch) -> None:
    pytest.importorskip("viser")
    from jointlab.envs.env import render_modes

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert render_modes(builds_sim=True) == ["human", "rgb_array"]
    assert render_modes(builds_sim=False) == ["human", "rgb_array"]


def _runtime_dependencies() -> set[str]:
    import re
    from pathlib import Path

    import tomllib

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    return {
        re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].lower()
        for d in project["project"]["dependencies"]
    }


def test_the_servo_vendor_sdks_are_runtime_dependencies() -> None:
    """The SO-101 and the Koch work in the install `make demo` makes (runtime deps only)."""
    from jointlab.hardware.vendors import VENDORS

    assert {vendor.sdk_package for vendor in VENDORS.values()} <= _runtime_dependencies()


#: Runs the CLI with both servo vendor SDKs unimportable (a partial install).
WITHOUT_SDKS = (
    "import sys; sys.modules['scservo_sdk'] = None; sys.modules['dynamixel_sdk'] = None; "
    "from jointlab.cli import main; sys.exit(main(sys.argv[1:]))"
)


@pytest.mark.parametrize(
    ("command", "package"),
    [
        (["run", "emulated://so101", "examples/programs/so101_wave.yaml"], "feetech-servo-sdk"),
        (["check", "emulated://koch"], "dynamixel-sdk"),
        (
            ["teleop", "--leader", "emulated://so101", "--follower", "sim://so101"],
            "feetech-servo-sdk",
        ),
        (
            ["run", "feetech:///dev/null?robot=so101", "examples/programs/so101_wave.yaml"],
            "feetech-servo-sdk",
        ),
    ],
)
def test_a_missing_vendor_sdk_is_one_line_before_anything_starts(
    tmp_path, command, package
) -> None:
    from pathlib import Path

    root = Path(__file__).parents[1]
    args = [a if not a.startswith("examples/") else str(root / a) for a in command]
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_SDKS,
            *args,
            *(["--out", str(tmp_path)] if command[0] == "run" else []),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and f"pip install {package}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not any(tmp_path.iterdir())  # no run folder, nothing written
