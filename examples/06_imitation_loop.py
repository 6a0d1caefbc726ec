"""The imitation loop through LeRobot's own console scripts, measured on this machine.

1. ``jointlab record so101 expert --env TASK``: N seeded expert demonstrations, a
   LeRobotDataset v3 with ``observation.state`` (degrees, gripper 0-100),
   ``observation.environment_state`` and the expert's joint targets;
2. ``lerobot-train --policy.type=act``: ACT on that dataset (state + environment state, no
   pretrained backbone, CPU), timed;
3. ``lerobot-eval --env.type=jointlab``: the checkpoint on 100 seeded episodes of JointLab's
   environment (seeds 1000..), success with its Wilson 95 % interval, beside the expert's own
   success on the same seeds and the paired difference (policy - expert, Newcombe's
   interval).

Every stage runs the installed console scripts as a user types them; each stage is skipped
when its output exists, so an interrupted run goes on where it stopped::

    python examples/06_imitation_loop.py --task Reach --demos 50 --steps 1500 --out /tmp/loop
    python examples/06_imitation_loop.py --demos 2 --steps 2 --eval-episodes 2 --tiny --out /tmp/t

``--checkpoint PATH`` evaluates another checkpoint (e.g. an earlier ``checkpoints/000500``)
on the same seeds; ``results.json`` in ``--out`` holds every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from jointlab.envs.evaluation import wilson_interval
from jointlab.envs.paired import lerobot_eval_successes, paired_difference
from jointlab.interop.demos import expert_successes

BIN = Path(sys.executable).parent
TINY = [
    "--policy.dim_model=16",
    "--policy.n_heads=2",
    "--policy.dim_feedforward=32",
    "--policy.n_encoder_layers=1",
    "--policy.n_decoder_layers=1",
    "--policy.chunk_size=5",
    "--policy.n_action_steps=5",
    "--policy.use_vae=false",
]
#: The measured model: ACT with a 64-wide transformer (2 encoder layers, 1 decoder, no VAE,
#: 172 k parameters), one second of actions per chunk at 25 fps, learning rate 3e-4 (ACT's
#: 1e-5 default is for its 52 M-parameter model with a pretrained backbone).
MEASURED = [
    "--policy.dim_model=64",
    "--policy.n_heads=4",
    "--policy.dim_feedforward=256",
    "--policy.n_encoder_layers=2",
    "--policy.use_vae=false",
    "--policy.optimizer_lr=3e-4",
    "--policy.chunk_size=25",
    "--policy.n_action_steps=25",
]


def run(*command: str) -> float:
    """Run a console script (HF_HUB_OFFLINE=1: everything is local); its wall time, s."""
    start = time.perf_counter()
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="Reach")
    parser.add_argument("--robot", default="so101")
    parser.add_argument("--demos", type=int, default=50, help="expert episodes to train on")
    parser.add_argument("--steps", type=int, default=1500, help="lerobot-train steps")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--eval-episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1000, help="first evaluation seed")
    parser.add_argument("--tiny", action="store_true", help="a tiny ACT (the smoke test's)")
    parser.add_argument("--checkpoint", type=Path, help="evaluate this checkpoint instead")
    parser.add_argument("--out", type=Path, default=Path("runs/imitation"))
    args = parser.parse_args()
    out = args.out.expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    demos, train = out / "demos", out / "train"
    if not demos.exists():
        results["record_s"] = run(
            str(BIN / "jointlab"),
            "record",
            args.robot,
            "expert",
            "--env",
            args.task,
            "--episodes",
            str(args.demos),
            "--dataset",
            str(demos),
        )
    checkpoint = args.checkpoint or train / "checkpoints" / "last" / "pretrained_model"
    if args.checkpoint is None and not checkpoint.exists():
        results["train_s"] = run(
            str(BIN / "lerobot-train"),
            f"--dataset.repo_id=local/{demos.name}",
            f"--dataset.root={demos}",
            "--policy.type=act",
            "--policy.device=cpu",
            "--policy.push_to_hub=false",
            *(TINY if args.tiny else MEASURED),
            f"--steps={args.steps}",
            f"--batch_size={args.batch_size}",
            f"--save_freq={max(1, args.steps // 6)}",
            "--log_freq=25",
            "--num_workers=0",
            "--wandb.enable=false",
            "--eval_freq=0",
            "--seed=1",
            f"--output_dir={train}",
        )
        results["train_steps"] = args.steps
        results["train_s_per_step"] = results["train_s"] / args.steps
    label = checkpoint.parent.name if args.checkpoint else "last"
    evaluation = out / f"eval-{label}"
    if not (evaluation / "eval_info.json").exists():
        results[f"eval_s_{label}"] = run(
            str(BIN / "lerobot-eval"),
            f"--policy.path={checkpoint}",
            "--policy.device=cpu",
            "--env.discover_packages_path=lerobot_env_jointlab",
            "--env.type=jointlab",
            f"--env.task={args.task}",
            f"--env.robot={args.robot}",
            f"--eval.n_episodes={args.eval_episodes}",
            "--eval.batch_size=1",
            f"--seed={args.seed}",
            f"--output_dir={evaluation}",
        )
    policy = lerobot_eval_successes(evaluation)
    seeds = range(args.seed, args.seed + len(policy))
    expert = expert_successes(args.task, args.robot, seeds)
    low, high = wilson_interval(sum(policy), len(policy))
    e_low, e_high = wilson_interval(sum(expert), len(expert))
    paired = paired_difference(policy, expert)
    results[f"policy_{label}"] = {
        "successes": sum(policy),
        "episodes": len(policy),
        "wilson95": [low, high],
    }
    results["expert"] = {
        "successes": sum(expert),
        "episodes": len(expert),
        "wilson95": [e_low, e_high],
    }
    results[f"paired_{label}_minus_expert"] = {
        "difference": paired.difference,
        "ci95": [paired.low, paired.high],
        "p_value": paired.p_value,
    }
    results_path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"policy ({label}): {sum(policy)}/{len(policy)} [{low:.1%}, {high:.1%}]")
    print(f"expert:          {sum(expert)}/{len(expert)} [{e_low:.1%}, {e_high:.1%}]")
    print(f"policy - expert: {paired}")


if __name__ == "__main__":
    main()
