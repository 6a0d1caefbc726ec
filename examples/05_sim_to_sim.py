"""Sim-to-sim: train policies on one physics engine, evaluate them on both.

Two experiments (``--experiment``):

* ``reach`` (default): PPO (Stable-Baselines3) on ``jointlab/Reach-v0`` (arm6, position
  mode), trained four times: on PyBullet and on MuJoCo, each with the description's nominal
  physics and with domain randomisation (masses, friction, damping, latency, gains). The
  engines agree on Reach, so there is no gap to narrow.
* ``push``: ``jointlab/Push-v0`` on planar2 (success: the box within 10 cm of its goal),
  trained on MuJoCo with the nominal box and with its mass and friction randomised per
  episode (``Push(box_randomization=...)``). The policies of notebook ``05_sim_to_sim`` (3 M
  steps each) were trained while MuJoCo's contacts were soft and scored less on PyBullet;
  with one contact model on both engines the nominal one scores the same on both (see the
  notebook's 1,000-episode table).

Every policy then runs on both engines through :func:`jointlab.envs.evaluation.evaluate_policy`
(what ``jointlab eval POLICY URL`` runs); success rates with Wilson 95 % intervals are
printed and saved in ``<out>/results.json``::

    python examples/05_sim_to_sim.py --steps 300000 --out notebooks/models/sim_to_sim

Train policies in parallel processes with ``--only NAME`` (e.g. ``--only mujoco-randomised``),
then evaluate them with ``--evaluate-only``. ``--max-minutes`` and ``--stop-at`` end a training
early (the learning rate still decays over ``--steps``); the steps and minutes it took are
saved in ``<out>/<name>/training.json``. Each policy is a small network (``--net 64 64``)
saved as ``<out>/<engine>-<physics>/model.zip`` with its observation statistics
(``vecnormalize.pkl``) beside it; notebook ``05_sim_to_sim`` loads those in
``notebooks/models/sim_to_sim`` (reach) and ``notebooks/models/sim_to_sim_push`` (push).
Needs the ``rl`` and ``mujoco`` extras.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs.evaluation import evaluate_policy
from jointlab.envs.training import GAMMA, make_ppo, make_training_env
from jointlab.sim import ObjectRandomization, Randomization

ENGINES = ("pybullet", "mujoco")


@dataclass(frozen=True)
class Experiment:
    """One task trained on some engines, nominal and randomised, evaluated on all engines."""

    env_id: str
    #: Keywords of the environment, in training and in evaluation.
    env_kwargs: dict[str, Any]
    #: Extra keywords of the randomised policies' training environments.
    randomised_kwargs: dict[str, Any]
    #: Engines policies are trained on (all of ENGINES are evaluated).
    train_engines: tuple[str, ...] = ENGINES
    gamma: float = GAMMA
    log_std_init: float = -2.0
    steps: int = 300_000
    #: Default evaluation episodes.
    episodes: int = 100
    urls: dict[str, str] = field(default_factory=dict)


EXPERIMENTS = {
    "reach": Experiment(
        env_id="jointlab/Reach-v0",
        env_kwargs={"robot": "arm6", "action_mode": "position"},
        randomised_kwargs={
            "randomization": Randomization(
                mass_scale=(0.7, 1.3),
                friction_scale=(0.5, 2.0),
                damping_scale=(0.5, 2.0),
                latency=(0, 2),
                kp_scale=(0.8, 1.2),
                kd_scale=(0.8, 1.2),
            )
        },
        urls={engine: f"sim://arm6?engine={engine}" for engine in ENGINES},
    ),
    "push": Experiment(
        env_id="jointlab/Push-v0",
        env_kwargs={"robot": "planar2", "action_mode": "position", "success_threshold": 0.10},
        randomised_kwargs={
            "box_randomization": ObjectRandomization(mass=(0.1, 0.6), friction=(0.3, 1.5))
        },
        train_engines=("mujoco",),
        gamma=0.95,
        log_std_init=-1.5,
        steps=3_000_000,
        urls={engine: f"sim://planar2?engine={engine}" for engine in ENGINES},
    ),
}


def policy_names(experiment: Experiment) -> list[str]:
    """``<engine>-nominal`` and ``<engine>-randomised`` for each training engine."""
    return [
        f"{engine}-{physics}"
        for engine in experiment.train_engines
        for physics in ("nominal", "randomised")
    ]


def train(
    experiment: Experiment,
    name: str,
    steps: int,
    net: tuple[int, ...],
    out: Path,
    *,
    max_minutes: float | None = None,
    stop_at: int | None = None,
    seed: int = 0,
) -> Path:
    """Train policy ``name`` (``<engine>-<physics>``); returns its ``model.zip``.

    ``steps`` sets the learning-rate schedule; training stops there, at ``stop_at`` steps or
    after ``max_minutes``, whichever comes first. Saves ``vecnormalize.pkl`` and
    ``training.json`` (steps, minutes, settings) beside the model.
    """
    from stable_baselines3.common.callbacks import BaseCallback

    engine, physics = name.split("-")
    kwargs = {**experiment.env_kwargs, "engine": engine}
    if physics == "randomised":
        kwargs.update(experiment.randomised_kwargs)
    # The settings the saved policies were trained with (SB3's DummyVecEnv, 10 epochs per
    # rollout), not the newer training defaults, so that this command reproduces them.
    env = make_training_env(
        experiment.env_id, kwargs, envs=8, seed=seed, vector="dummy", gamma=experiment.gamma
    )
    model = make_ppo(
        env,
        seed=seed,
        net_arch=net,
        n_epochs=10,
        gamma=experiment.gamma,
        log_std_init=experiment.log_std_init,
    )
    start = time.perf_counter()
    limit = min(steps, stop_at) if stop_at is not None else steps

    class _Stop(BaseCallback):
        """Stops at the step or time limit; prints the recent success rate now and then."""

        successes: list[bool] = []  # noqa: RUF012  (one instance)
        printed = 0

        def _on_step(self) -> bool:
            for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
                if done:
                    self.successes.append(bool(info.get("is_success", False)))
            minutes = (time.perf_counter() - start) / 60
            if self.num_timesteps - self.printed >= 50_000:
                self.printed = self.num_timesteps
                recent = self.successes[-200:]
                print(
                    f"{name}: {self.num_timesteps} steps, {minutes:.1f} min, success (last "
                    f"{len(recent)} episodes) {np.mean(recent) if recent else 0:.0%}",
                    flush=True,
                )
            too_long = max_minutes is not None and minutes >= max_minutes
            return self.num_timesteps < limit and not too_long

    model.learn(total_timesteps=steps, callback=_Stop())
    minutes = (time.perf_counter() - start) / 60
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "model")
    env.save(str(out / "vecnormalize.pkl"))
    env.close()
    info = {
        "steps": int(model.num_timesteps),
        "minutes": round(minutes, 1),
        "schedule_steps": steps,
        "net": list(net),
        "gamma": experiment.gamma,
        "log_std_init": experiment.log_std_init,
    }
    (out / "training.json").write_text(json.dumps(info, indent=2))
    print(f"trained {name}: {model.num_timesteps} steps in {minutes:.1f} min", flush=True)
    return out / "model.zip"


def success_table(
    experiment: Experiment, models: dict[str, Path], episodes: int, seed: int = 1000
) -> dict:
    """Success rate, its Wilson 95 % interval and returns of each policy on each engine.

    Every cell also keeps its episodes' returns and successes: the engines see the same
    starts and goals (the same ``seed``), so the gap can be taken episode by episode.
    """
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for name, path in models.items():
        table[name] = {}
        for engine, url in experiment.urls.items():
            result = evaluate_policy(
                path,
                url,
                env_id=experiment.env_id,
                env_kwargs=experiment.env_kwargs,
                episodes=episodes,
                seed=seed,
            )
            low, high = result.success_interval
            table[name][engine] = {
                "success": result.success_rate,
                "interval": [round(low, 4), round(high, 4)],
                "return": result.mean_return,
                "returns": [round(float(r), 3) for r in result.returns],
                "successes": result.successes.astype(int).tolist(),
            }
            print(
                f"  {name:22s} on {engine:8s}: success {result.success_rate:4.0%} "
                f"[{low:.0%}-{high:.0%}], return {result.mean_return:7.2f}",
                flush=True,
            )
    return table


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line arguments; ``--steps``/``--episodes`` default to the experiment's."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", choices=sorted(EXPERIMENTS), default="reach")
    parser.add_argument(
        "--steps",
        type=int,
        default=None,
        help="training steps per policy (the learning-rate schedule)",
    )
    parser.add_argument(
        "--stop-at",
        type=int,
        default=None,
        metavar="STEPS",
        help="stop training after this many steps",
    )
    parser.add_argument(
        "--max-minutes", type=float, default=None, help="stop training after this many minutes"
    )
    parser.add_argument(
        "--gamma", type=float, default=None, help="discount (default: the experiment's)"
    )
    parser.add_argument(
        "--log-std-init", type=float, default=None, help="initial log std of the exploration noise"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override an environment keyword (JSON value), e.g. "
        "reach_weight=1.0; training and evaluation",
    )
    parser.add_argument("--net", type=int, nargs="+", default=[64, 64], help="hidden layers")
    parser.add_argument("--episodes", type=int, default=None, help="evaluation episodes")
    parser.add_argument(
        "--out", type=Path, default=None, help="output folder (default /tmp/sim_to_sim[_push])"
    )
    parser.add_argument("--evaluate-only", action="store_true", help="skip training")
    parser.add_argument(
        "--only",
        default=None,
        help="train just this policy (no evaluation), e.g. mujoco-randomised: run them in parallel",
    )
    args = parser.parse_args(argv)
    experiment = EXPERIMENTS[args.experiment]
    names = policy_names(experiment)
    if args.only is not None and args.only not in names:
        parser.error(f"--only {args.only!r}: the {args.experiment} policies are {names}")
    for flag in ("steps", "stop_at", "episodes"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1, got {value}")
    if args.max_minutes is not None and not args.max_minutes > 0:
        parser.error(f"--max-minutes must be > 0, got {args.max_minutes}")
    args.overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        try:
            args.overrides[key] = json.loads(value)
        except json.JSONDecodeError:
            sep = ""
        if not (sep and key):
            parser.error(f"--set {item!r}: expected KEY=VALUE with a JSON value")
    args.steps = args.steps or experiment.steps
    args.episodes = args.episodes or experiment.episodes
    suffix = "" if args.experiment == "reach" else f"_{args.experiment}"
    args.out = args.out or Path(f"/tmp/sim_to_sim{suffix}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    experiment = EXPERIMENTS[args.experiment]
    if args.gamma is not None:
        experiment = replace(experiment, gamma=args.gamma)
    if args.log_std_init is not None:
        experiment = replace(experiment, log_std_init=args.log_std_init)
    if args.overrides:
        experiment = replace(experiment, env_kwargs={**experiment.env_kwargs, **args.overrides})
    torch.set_num_threads(1)
    models = {}
    for name in policy_names(experiment):
        folder = args.out / name
        models[name] = folder / "model.zip"
        if not args.evaluate_only and args.only in (None, name):
            train(
                experiment,
                name,
                args.steps,
                tuple(args.net),
                folder,
                max_minutes=args.max_minutes,
                stop_at=args.stop_at,
            )
    if args.only is not None:
        return
    table = success_table(experiment, models, args.episodes)
    training = {}
    for name, path in models.items():
        info = path.parent / "training.json"
        if info.exists():
            training[name] = json.loads(info.read_text())
    (args.out / "results.json").write_text(
        json.dumps(
            {
                "experiment": args.experiment,
                "steps": args.steps,
                "net": args.net,
                "episodes": args.episodes,
                "training": training,
                "table": table,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
