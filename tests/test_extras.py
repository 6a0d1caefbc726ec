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
    json, = require("rl", "training", "json")
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
