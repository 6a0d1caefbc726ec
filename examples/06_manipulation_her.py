"""Train TQC + HER on a manipulation task and write its learning curve (docs/manipulation.md).

    python examples/06_manipulation_her.py jointlab/Lift-v0 runs/lift-tqc --steps 100000

Evaluates the greedy policy every --eval-every steps on 50 held-out seeds (success with its
95 % Wilson interval) and saves model.zip and curve.csv in the output folder. Needs the rl
extra; MuJoCo (--engine mujoco, the default here) needs the mujoco extra.
"""

import argparse

from jointlab.envs.manipulation.baseline import train_her


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env_id")
    parser.add_argument("folder")
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--algorithm", choices=["tqc", "sac"], default="tqc")
    parser.add_argument("--engine", default="mujoco")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-every", type=int, default=5000)
    parser.add_argument("--eval-episodes", type=int, default=50)
    args = parser.parse_args()
    result = train_her(
        args.env_id,
        args.folder,
        steps=args.steps,
        algorithm=args.algorithm,
        seed=args.seed,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        env_kwargs={"engine": args.engine},
    )
    print(f"{args.env_id}: {result.steps} steps in {result.seconds:.0f} s, success {result.final}")


if __name__ == "__main__":
    main()
