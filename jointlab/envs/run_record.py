"""What a training run leaves besides its model: ``run.json``, read back by ``jointlab runs``.

A run folder of ``jointlab train`` holds ``model.zip`` and ``vecnormalize.pkl`` (the policy
and its observation statistics), ``run.json`` (this module: the settings and every
evaluation made during training), ``learning_curve.png`` (evaluation success against
environment steps) and ``tensorboard/`` (event files for ``tensorboard --logdir``).

``run.json`` is ``{"format": "jointlab-run", "version": 1, ...}`` with the fields of
:class:`TrainingRun`; a file without that header (an older or a foreign file) or with a
field missing is a :class:`RunError` naming the file and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jointlab.errors import JointLabError

__all__ = [
    "CURVE_FILE",
    "RUN_FILE",
    "RUN_FORMAT",
    "RUN_VERSION",
    "TENSORBOARD_FOLDER",
    "Evaluation",
    "RunError",
    "TrainingRun",
    "read_run",
    "write_run",
]

#: The run's record, in the run folder.
RUN_FILE = "run.json"
#: The learning curve, in the run folder.
CURVE_FILE = "learning_curve.png"
#: TensorBoard's event files, in the run folder.
TENSORBOARD_FOLDER = "tensorboard"
RUN_FORMAT = "jointlab-run"
RUN_VERSION = 1


class RunError(JointLabError, ValueError):
    """A run folder or its ``run.json`` cannot be read."""


@dataclass(frozen=True)
class Evaluation:
    """Deterministic-policy episodes on a separate environment, at one point of training."""

    #: Environment steps trained when evaluated (all environment copies together).
    steps: int
    #: Number of episodes.
    episodes: int
    #: Fraction of episodes that ended with ``info["is_success"]``, 0..1.
    success_rate: float
    #: Mean undiscounted return per episode (the environment's own reward, not normalised).
    mean_reward: float
    #: Mean episode length, environment steps.
    mean_length: float


@dataclass(frozen=True)
class TrainingRun:
    """The settings and the evaluations of one ``jointlab train`` run."""

    #: Task name or environment id given to ``jointlab train``.
    task: str
    #: Gymnasium id of the environment.
    env_id: str
    #: Physics engine of the training environments (``pybullet`` or ``mujoco``).
    engine: str
    #: Seed of the environments and of the policy.
    seed: int
    #: Environment copies stepped together.
    envs: int
    #: Environment steps trained (a whole number of rollouts, so at least those asked for).
    steps: int
    #: Wall-clock duration of the training (evaluations included), seconds.
    wall_time: float
    #: Keywords of every environment.
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    #: Evaluations in training order (the last one after the last step).
    evaluations: tuple[Evaluation, ...] = ()

    @property
    def final(self) -> Evaluation | None:
        """The last evaluation, or None when there was none."""
        return self.evaluations[-1] if self.evaluations else None

    def to_json(self) -> dict[str, Any]:
        """The content of ``run.json``."""
        body = asdict(self)
        body["env_kwargs"] = dict(self.env_kwargs)
        body["evaluations"] = [asdict(e) for e in self.evaluations]
        return {"format": RUN_FORMAT, "version": RUN_VERSION, **body}

    @classmethod
    def from_json(cls, value: Any, where: str = RUN_FILE) -> TrainingRun:
        """Inverse of :meth:`to_json`; ``where`` names the file in errors.

        Raises:
            RunError: no ``jointlab-run`` header, a newer version, a missing or mistyped
                field.
        """
        if not isinstance(value, dict) or value.get("format") != RUN_FORMAT:
            raise RunError(f"{where} is not a JointLab run record (no {RUN_FORMAT!r} header)")
        version = value.get("version")
        if not isinstance(version, int) or not 1 <= version <= RUN_VERSION:
            raise RunError(
                f"{where} is run record version {version!r}; this JointLab reads 1 to {RUN_VERSION}"
            )
        try:
            evaluations = tuple(
                Evaluation(
                    int(e["steps"]),
                    int(e["episodes"]),
                    float(e["success_rate"]),
                    float(e["mean_reward"]),
                    float(e["mean_length"]),
                )
                for e in value.get("evaluations", [])
            )
            run = cls(
                task=str(value["task"]),
                env_id=str(value["env_id"]),
                engine=str(value["engine"]),
                seed=int(value["seed"]),
                envs=int(value["envs"]),
                steps=int(value["steps"]),
                wall_time=float(value["wall_time"]),
                env_kwargs=dict(value.get("env_kwargs", {})),
                evaluations=evaluations,
            )
        except KeyError as exc:
            raise RunError(f"{where}: field {exc.args[0]!r} is missing") from None
        except (TypeError, ValueError, OverflowError) as exc:
            raise RunError(f"{where}: a field has the wrong type ({exc})") from None
        if not math.isfinite(run.wall_time) or run.wall_time < 0:
            raise RunError(f"{where}: wall_time must be seconds >= 0, got {run.wall_time}")
        for i, e in enumerate(evaluations):
            if not (
                0.0 <= e.success_rate <= 1.0
                and math.isfinite(e.mean_reward)
                and math.isfinite(e.mean_length)
            ):
                raise RunError(
                    f"{where}: evaluations[{i}] needs a success_rate in 0..1 and a finite "
                    f"mean_reward and mean_length, got {e}"
                )
        return run


def write_run(run: TrainingRun, folder: str | Path) -> Path:
    """Write ``folder/run.json``; returns its path."""
    path = Path(folder) / RUN_FILE
    path.write_text(json.dumps(run.to_json(), indent=2) + "\n")
    return path


def read_run(folder: str | Path) -> TrainingRun:
    """Read ``folder/run.json`` (or the file itself when given one).

    Raises:
        RunError: no such file, not JSON, or not a run record this JointLab reads.
    """
    path = Path(folder)
    if path.is_dir():
        path = path / RUN_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise RunError(
            f"{path}: no run record (not a training run, or one trained by an "
            "older JointLab, which wrote none)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RunError(f"{path}: cannot be read ({exc})") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise RunError(f"{path} is not valid JSON: {exc}") from None
    return TrainingRun.from_json(value, str(path))
