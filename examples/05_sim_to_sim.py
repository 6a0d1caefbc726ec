"""Sim-to-sim: train Reach policies on one physics engine, evaluate them on both.

Trains PPO (Stable-Baselines3) on ``jointlab/Reach-v0`` (arm6, position mode) four times: on
PyBullet and on MuJoCo, each with the description's nominal physics and with domain
randomisation (masses, friction, damping, latency, gains). Then every policy runs on both
engines through :func:`jointlab.envs.evaluation.evaluate_policy` (what ``jointlab eval
POLICY URL`` runs) and the success rates are printed and saved::

    python examples/05_sim_to_sim.py --steps 300000 --out notebooks/models/sim_to_sim

(or train the four in parallel processes with ``--only NAME``, e.g. ``--only
mujoco-randomised``, then evaluate them with ``--evaluate-only``). Each policy is a small
network (``--net 64 64``) saved as ``<out>/<engine>-<physics>/model.zip`` with its
observation statistics (``vecnormalize.pkl``) beside it; notebook ``05_sim_to_sim`` loads the
four that this command made, and ``results.json`` holds the table. Needs the ``rl`` and
``mujoco`` extras.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs.evaluation import evaluate_policy
from jointlab.envs.training import make_ppo, make_training_env
from jointlab.sim import Randomization

ENV_ID = "jointlab/Reach-v0"
ENV_KWARGS = {"robot": "arm6", "action_mode": "position"}
ENGINES = ("pybullet", "mujoco")
#: Domain randomisation of the "randomised" policies: each episode draws new values.
RANDOMIZATION = Randomization(
    mass_scale=(0.7, 1.3), friction_scale=(0.5, 2.0), damping_scale=(0.5, 2.0),
    latency=(0, 2), kp_scale=(0.8, 1.2), kd_scale=(0.8, 1.2),
)  # fmt: skip
URLS = {engine: f"sim://arm6?engine={engine}" for engine in ENGINES}


def train(engine: str, randomized: bool, steps: int, net: tuple[int, ...], out: Path,
          seed: int = 0) -> Path:  # fmt: skip
    """Train one policy; returns its ``model.zip`` (``vecnormalize.pkl`` beside it)."""
    kwargs = {**ENV_KWARGS, "engine": engine}
    if randomized:
        kwargs["randomization"] = RANDOMIZATION
    env = make_training_env(ENV_ID, kwargs, envs=8, seed=seed)
    model = make_ppo(env, seed=seed, net_arch=net)
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "model")
    env.save(str(out / "vecnormalize.pkl"))
    env.close()
    print(f"trained {out.name}: {steps} steps in {(time.perf_counter() - start) / 60:.1f} min",
          flush=True)  # fmt: skip
    return out / "model.zip"


def success_table(models: dict[str, Path], episodes: int, seed: int = 1000) -> dict:
    """Success rate and mean return of every policy on every engine."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    for name, path in models.items():
        table[name] = {}
        for engine, url in URLS.items():
            result = evaluate_policy(path, url, env_id=ENV_ID, env_kwargs=ENV_KWARGS,
                                     episodes=episodes, seed=seed)  # fmt: skip
            table[name][engine] = {"success": result.success_rate, "return": result.mean_return}
            print(f"  {name:22s} on {engine:8s}: success {result.success_rate:4.0%}, "
                  f"return {result.mean_return:7.2f}", flush=True)  # fmt: skip
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300_000, help="training steps per policy")
    parser.add_argument("--net", type=int, nargs="+", default=[64, 64], help="hidden layers")
    parser.add_argument("--episodes", type=int, default=100, help="evaluation episodes")
    parser.add_argument("--out", type=Path, default=Path("/tmp/sim_to_sim"))
    parser.add_argument("--evaluate-only", action="store_true", help="skip training")
    parser.add_argument("--only", default=None, help="train just this policy (no evaluation), "
                        "e.g. mujoco-randomised: run the four in parallel")  # fmt: skip
    args = parser.parse_args()
    torch.set_num_threads(1)
    models = {}
    for engine in ENGINES:
        for randomized in (False, True):
            name = f"{engine}-{'randomised' if randomized else 'nominal'}"
            folder = args.out / name
            models[name] = folder / "model.zip"
            if not args.evaluate_only and args.only in (None, name):
                train(engine, randomized, args.steps, tuple(args.net), folder)
    if args.only is not None:
        return
    table = success_table(models, args.episodes)
    (args.out / "results.json").write_text(json.dumps(
        {"steps": args.steps, "net": args.net, "episodes": args.episodes, "table": table},
        indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
