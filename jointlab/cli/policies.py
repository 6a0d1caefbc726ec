"""What ``jointlab eval`` and ``jointlab record`` share: the POLICY argument and its env."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from jointlab.errors import ConfigurationError


def add_policy_arguments(parser: argparse.ArgumentParser) -> None:
    """POLICY, ``--env`` and ``--env-kwargs``."""
    parser.add_argument(
        "policy",
        metavar="POLICY",
        help="an SB3 model .zip, a 'jointlab train' folder, or an RLlib checkpoint folder",
    )
    parser.add_argument(
        "--env",
        metavar="ID",
        help="environment id (default: the checkpoint's, else jointlab/Reach-v0)",
    )
    parser.add_argument(
        "--env-kwargs",
        metavar="JSON",
        help='environment keywords as JSON, e.g. \'{"action_mode": "torque"}\' '
        "(default: the checkpoint's, else position mode)",
    )


def policy_path(text: str) -> Path:
    """The policy file: a ``jointlab train`` folder means its ``model.zip``."""
    from jointlab.envs.training import MODEL_NAME

    path = Path(text).expanduser()
    if path.is_dir() and (path / MODEL_NAME).is_file():
        return path / MODEL_NAME
    if not path.exists() and not path.with_name(path.name + ".zip").exists():
        raise ConfigurationError(f"{path}: no such policy file or checkpoint folder")
    return path


def env_settings(args: argparse.Namespace, policy: Any) -> tuple[str | None, dict | None]:
    """``env_id`` and ``env_kwargs`` for the evaluation helpers.

    An SB3 model does not record its environment: it gets position mode (what ``jointlab
    train`` uses) unless ``--env-kwargs`` says otherwise.
    """
    kwargs = None
    if args.env_kwargs is not None:
        try:
            kwargs = json.loads(args.env_kwargs)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"--env-kwargs is not JSON: {exc}") from exc
        if not isinstance(kwargs, dict):
            raise ConfigurationError(f"--env-kwargs must be a JSON object, got {args.env_kwargs}")
    elif policy.env_config is None:
        kwargs = {"action_mode": "position"}
    return args.env, kwargs


def open_policy(
    args: argparse.Namespace,
    prefix: str,
    suffix: str = "",
) -> tuple[Path, Path, Any, str | None, dict | None]:
    """Everything ``eval`` and ``record`` need before they run, checked in this order.

    Returns the policy file, the planned run folder (``PREFIX-POLICY-ROBOT[SUFFIX]``), the
    loaded policy, and the ``env_id`` and ``env_kwargs`` to run it with.
    """
    from jointlab.cli.common import planned_folder, robot_label
    from jointlab.envs.evaluation import load_policy

    path = policy_path(args.policy)
    label = path.parent.name if path.name == "model.zip" else path.stem
    folder = planned_folder(args, f"{prefix}-{label}-{robot_label(args.robot)}{suffix}")
    policy = load_policy(path)
    env_id, env_kwargs = env_settings(args, policy)
    return path, folder, policy, env_id, env_kwargs
