"""A MuJoCo render, then an SB3 model, in one process (as a notebook or a script does).

torch's CUDA build brings triton, whose bundled LLVM crashed the process (segmentation fault)
when it was imported after Mesa's, which MuJoCo's offscreen renderer loads; the Makefile
leaves triton out. The two steps run in a fresh interpreter, so the import order is real.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import gymnasium
import jointlab.envs
from stable_baselines3 import PPO
env = gymnasium.make("jointlab/Reach-v0", engine="mujoco", render_mode="rgb_array")
env.reset(seed=0)
assert env.render().shape[2] == 3
model = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0)
print("trained after a render:", type(model).__name__)
"""


@pytest.mark.slow
def test_an_sb3_model_after_a_mujoco_render_in_one_process() -> None:
    pytest.importorskip("mujoco")
    pytest.importorskip("stable_baselines3")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "trained after a render: PPO" in done.stdout
