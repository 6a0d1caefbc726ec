"""LeRobotDataset v3 from JointLab robots: the features, the writer and the episode reader.

A dataset is written by LeRobot's own writer (``LeRobotDataset.create``, ``add_frame``,
``save_episode``, ``finalize``), so its layout is LeRobot's v3: ``data/`` parquet files,
``videos/`` MP4 files (AV1, encoded by PyAV) per camera, ``meta/info.json``,
``meta/episodes/`` parquet, ``meta/stats.json`` and ``meta/tasks.parquet``; LeRobot's
``LeRobotDataset(repo_id, root=FOLDER)`` loads it offline.

Features (names as LeRobot's SO-101 and Koch followers name theirs, values in **degrees** and
a gripper in 0-100, as those followers report them with ``use_degrees=True``;
:class:`~jointlab.interop.units.LeRobotUnits`):

* ``observation.state``: joint positions, ``(dof,)`` float32, names ``<joint>.pos``, deg;
* ``observation.velocity``: joint velocities, ``(dof,)``, deg/s;
* ``observation.effort``: applied joint torques, ``(dof,)``, N·m;
* ``action``: the joint position targets the robot was commanded, ``(dof,)``, deg;
* ``observation.environment_state`` (optional): the scene's state a task names (object poses,
  a goal), ``(k,)`` float32, SI units;
* ``observation.images.<camera>``: RGB video, ``(height, width, 3)`` (or PNG images in the
  parquet files with ``videos=False``, which LeRobot reads without a video decoder).

Beside LeRobot's files, ``meta/jointlab.json`` names the JointLab robot, its URL and the
control period, so :func:`load_episode` can check a dataset against the robot it replays on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError, JointLabError
from jointlab.interface import ArrayState
from jointlab.interop.lerobot_env import import_lerobot
from jointlab.interop.units import LeRobotUnits
from jointlab.robots import RobotDescription
from jointlab.scheduling import kept_scheduling

__all__ = [
    "ACTION",
    "EFFORT",
    "ENVIRONMENT",
    "JOINTLAB_META",
    "STATE",
    "VELOCITY",
    "DatasetError",
    "DatasetWriter",
    "Episode",
    "check_features",
    "check_new_folder",
    "dataset_info",
    "image_key",
    "load_episode",
    "open_dataset",
    "robot_features",
]

STATE = "observation.state"
ENVIRONMENT = "observation.environment_state"
VELOCITY = "observation.velocity"
EFFORT = "observation.effort"
ACTION = "action"
#: JointLab's own metadata beside LeRobot's (LeRobot ignores it).
JOINTLAB_META = "meta/jointlab.json"


class DatasetError(ConfigurationError):
    """A dataset folder or its features do not fit the request (the message says the fix)."""


def image_key(camera: str) -> str:
    """The feature of camera ``camera``: ``observation.images.<camera>``."""
    return f"observation.images.{camera}"


def robot_features(
    description: RobotDescription,
    cameras: Mapping[str, tuple[int, int]] | None = None,
    environment: Sequence[str] = (),
    videos: bool = True,
    dynamics: bool = True,
) -> dict[str, dict]:
    """LeRobot features of ``description``'s joints and ``cameras`` (name: (height, width)).

    Args:
        description: The robot.
        cameras: Camera name: (height, width), pixels.
        environment: Names of the ``observation.environment_state`` values (none: no such
            feature).
        videos: Cameras as MP4 videos (else PNG images in the parquet files).
        dynamics: With ``observation.velocity`` and ``observation.effort`` (a policy dataset
            for ``lerobot-eval`` has only what the environment observes: no).
    """
    names = [f"{joint}.pos" for joint in description.joint_names]
    vector = {"dtype": "float32", "shape": (description.dof,)}
    features: dict[str, dict] = {
        STATE: {**vector, "names": names},
        VELOCITY: {**vector, "names": [f"{joint}.vel" for joint in description.joint_names]},
        EFFORT: {**vector, "names": [f"{joint}.effort" for joint in description.joint_names]},
        ACTION: {**vector, "names": names},
    }
    if not dynamics:
        del features[VELOCITY], features[EFFORT]
    if environment:
        features[ENVIRONMENT] = {
            "dtype": "float32",
            "shape": (len(environment),),
            "names": list(environment),
        }
    for camera, (height, width) in (cameras or {}).items():
        features[image_key(camera)] = {
            "dtype": "video" if videos else "image",
            "shape": (int(height), int(width), 3),
            "names": ["height", "width", "channels"],
        }
    return features


def check_new_folder(root: Path) -> None:
    """Refuse a dataset folder that exists (nothing is ever overwritten).

    Raises:
        DatasetError: ``root`` exists (names it and the fix).
    """
    if root.exists():
        what = "a dataset" if (root / "meta" / "info.json").exists() else "a folder"
        raise DatasetError(
            f"dataset folder {root} exists ({what}); nothing was written: choose another "
            "--dataset folder, or move or delete that one first"
        )


class DatasetWriter:
    """Write episodes of one robot into a new LeRobotDataset folder (LeRobot's writer).

    Args:
        root: The dataset folder; it must not exist.
        description: The robot recorded.
        fps: Frames per second (the recording period is ``1 / fps``).
        cameras: Camera name: (height, width) in pixels.
        repo_id: LeRobot's dataset id (default ``local/<folder name>``).
        url: The robot's URL, kept in ``meta/jointlab.json``.
        environment: Names of the ``observation.environment_state`` values (none: no such
            feature; each frame then has none).
        videos: Cameras as MP4 videos (else PNG images in the parquet files).
        dynamics: With ``observation.velocity`` and ``observation.effort``.

    Raises:
        DatasetError: the folder exists, or ``fps`` is not positive.
    """

    def __init__(
        self,
        root: str | Path,
        description: RobotDescription,
        fps: float,
        cameras: Mapping[str, tuple[int, int]] | None = None,
        repo_id: str | None = None,
        url: str | None = None,
        environment: Sequence[str] = (),
        videos: bool = True,
        dynamics: bool = True,
    ) -> None:
        self.root = Path(root).expanduser()
        check_new_folder(self.root)
        if not (np.isfinite(fps) and fps > 0):
            raise DatasetError(f"fps must be a positive number of frames per second, got {fps!r}")
        dataset_module = import_lerobot("lerobot.datasets.lerobot_dataset")
        self.description = description
        self.cameras = dict(cameras or {})
        self.environment = tuple(environment)
        self.units = LeRobotUnits.of(description)
        self.features = robot_features(
            description, self.cameras, self.environment, videos, dynamics
        )
        self.fps = float(fps)
        self._dataset = dataset_module.LeRobotDataset.create(
            repo_id or f"local/{self.root.name}",
            fps=round(self.fps),
            root=self.root,
            robot_type=description.name,
            features=self.features,
            use_videos=videos,
            image_writer_threads=0,
        )
        units = {
            "pos": "deg",
            "vel": "deg/s",
            "effort": "N*m",
            "joints": dict(zip(self.units.keys, self.units.units, strict=True)),
        }
        meta = {
            "robot": description.name,
            "source": description.source,
            "url": url,
            "fps": self.fps,
            "units": units,
        }
        (self.root / JOINTLAB_META).write_text(json.dumps(meta, indent=2) + "\n")
        self.episodes = 0
        self._frames = 0
        self._closed = False

    def add_frame(
        self,
        state: ArrayState,
        target: np.ndarray,
        task: str,
        images: Mapping[str, np.ndarray] | None = None,
        environment: np.ndarray | None = None,
    ) -> None:
        """Add one frame: the state at its start, the commanded joint positions (rad), images.

        Args:
            state: The robot's state when the frame's action was decided.
            target: Joint position targets, shape ``(dof,)``, rad.
            task: What the episode does, in words ("pick the cube").
            images: Camera name: RGB image ``(height, width, 3)`` uint8, for every camera.
            environment: The ``observation.environment_state`` values (when the dataset has
                that feature).

        Raises:
            DatasetError: images of other cameras, or environment values that do not fit.
        """
        images = dict(images or {})
        if set(images) != set(self.cameras):
            raise DatasetError(
                f"{self.root}: frame images {sorted(images)} differ from the dataset's cameras "
                f"{sorted(self.cameras)}"
            )
        units = self.units
        frame: dict[str, Any] = {
            STATE: units.to_lerobot(state.position).astype(np.float32),
            VELOCITY: units.rate_to_lerobot(state.velocity).astype(np.float32),
            EFFORT: np.asarray(state.torque, dtype=np.float32),
            ACTION: units.to_lerobot(target).astype(np.float32),
            "task": str(task),
        }
        if VELOCITY not in self.features:
            del frame[VELOCITY], frame[EFFORT]
        if self.environment:
            values = np.asarray(environment if environment is not None else (), np.float32)
            if values.shape != (len(self.environment),):
                raise DatasetError(
                    f"{self.root}: frame environment state of shape {values.shape}; the "
                    f"dataset's {ENVIRONMENT} has {len(self.environment)} values "
                    f"{list(self.environment)}"
                )
            frame[ENVIRONMENT] = values
        elif environment is not None:
            raise DatasetError(
                f"{self.root}: a frame with environment state, but the dataset has no "
                f"{ENVIRONMENT} feature (create it with environment=[names])"
            )
        for camera, image in images.items():
            frame[image_key(camera)] = np.asarray(image, dtype=np.uint8)
        self._dataset.add_frame(frame)
        self._frames += 1

    def save_episode(self) -> int:
        """Close the episode: its parquet rows, videos and statistics; its index."""
        if self._frames == 0:
            raise DatasetError(f"{self.root}: an episode needs at least one frame")
        with kept_scheduling():  # LeRobot's AV1 encoder would leave this thread SCHED_FIFO 99
            self._dataset.save_episode()
        self._frames = 0
        self.episodes += 1
        return self.episodes - 1

    def discard_episode(self) -> None:
        """Drop the frames of the episode in progress (e.g. after an interruption)."""
        self._dataset.clear_episode_buffer()
        self._frames = 0

    def close(self) -> None:
        """Finish the files (LeRobot's ``finalize``); safe twice."""
        if self._closed:
            return
        self._closed = True
        if self._frames:
            self.discard_episode()
        with kept_scheduling():
            self._dataset.finalize()

    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def dataset_info(root: str | Path) -> dict[str, Any]:
    """``meta/info.json`` of the dataset at ``root``.

    Raises:
        DatasetError: ``root`` is not a LeRobot dataset folder.
    """
    path = Path(root).expanduser() / "meta" / "info.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise DatasetError(f"{Path(root)} is not a LeRobot dataset: no {path}") from None
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: cannot read it: {exc}") from None


def check_features(root: str | Path, description: RobotDescription) -> dict[str, Any]:
    """Check that the dataset at ``root`` has ``description``'s joints; its ``info``.

    Raises:
        DatasetError: a feature is missing, or its joint names differ from the robot's
            (names the feature, the joints and the fix).
    """
    info = dataset_info(root)
    features = info.get("features", {})
    expected = [f"{joint}.pos" for joint in description.joint_names]
    for key in (STATE, ACTION):
        if key not in features:
            raise DatasetError(f"{root}: feature {key!r} is missing (features: {sorted(features)})")
        names = list(features[key].get("names") or [])
        if isinstance(features[key].get("names"), dict):  # LeRobot's older {"motors": [...]}
            names = [n for group in features[key]["names"].values() for n in group]
        if names != expected:
            extra = sorted(set(names) - set(expected))
            missing = sorted(set(expected) - set(names))
            raise DatasetError(
                f"{root}: feature {key!r} has joints {names}; robot {description.name!r} has "
                f"{expected} (missing {missing}, unknown {extra}): replay it on the robot it was "
                f"recorded with ({info.get('robot_type')!r})"
            )
    return info


def open_dataset(root: str | Path, **options: Any) -> Any:
    """LeRobot's ``LeRobotDataset`` of the local folder ``root`` (no hub access)."""
    root = Path(root).expanduser()
    dataset_info(root)
    module = import_lerobot("lerobot.datasets.lerobot_dataset")
    return module.LeRobotDataset(f"local/{root.name}", root=root, **options)


def _units(root: Path, description: RobotDescription | None) -> Any:
    """The joint units of the dataset at ``root``: its robot's (degrees for unknown robots)."""
    if description is None:
        try:
            meta = json.loads((root / JOINTLAB_META).read_text())
            from jointlab.robots import load_robot

            description = load_robot(meta["robot"])
        except (OSError, ValueError, KeyError, JointLabError):
            description = None
    if description is None:
        return _Degrees()
    return LeRobotUnits.of(description)


class _Degrees:
    """Degrees for every joint (a dataset whose robot JointLab does not know)."""

    @staticmethod
    def from_lerobot(values: np.ndarray) -> np.ndarray:
        return np.radians(values)

    rate_from_lerobot = from_lerobot


@dataclass(frozen=True)
class Episode:
    """One episode's numeric columns, in JointLab units.

    Attributes:
        index: Episode index in the dataset.
        task: The episode's task text.
        fps: Frames per second.
        time: Frame timestamps, ``(n,)``, s.
        position: Joint positions, ``(n, dof)``, rad.
        velocity: Joint velocities, ``(n, dof)``, rad/s (NaN when the dataset has none).
        effort: Joint torques, ``(n, dof)``, N·m (NaN when the dataset has none).
        target: Commanded joint positions, ``(n, dof)``, rad.
    """

    index: int
    task: str
    fps: float
    time: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    target: np.ndarray

    def __len__(self) -> int:
        return len(self.time)


def load_episode(
    root: str | Path, episode: int, description: RobotDescription | None = None
) -> Episode:
    """Episode ``episode`` of the dataset at ``root`` (numeric columns, no video decoding).

    Args:
        root: A LeRobotDataset folder.
        episode: Episode index.
        description: When given, the dataset's joints must be this robot's.

    Raises:
        DatasetError: not a dataset, no such episode, or joints that differ from the robot's.
    """
    root = Path(root).expanduser()
    info = check_features(root, description) if description is not None else dataset_info(root)
    units = _units(root, description)
    total = int(info.get("total_episodes", 0))
    if not 0 <= int(episode) < total:
        raise DatasetError(f"{root}: no episode {episode}; it has episodes 0 to {total - 1}")
    dataset = open_dataset(root, episodes=[int(episode)])
    table = dataset.hf_dataset.with_format("numpy")
    features = info["features"]

    def column(key: str, scale: float = 1.0) -> np.ndarray:
        if key not in features:
            return np.full((len(table), features[STATE]["shape"][0]), np.nan)
        return np.stack(table[key]).astype(np.float64) * scale

    task_index = int(table["task_index"][0]) if len(table) else 0
    tasks = dataset.meta.tasks
    named = tasks.index[tasks["task_index"] == task_index] if len(tasks) else []
    task = str(named[0]) if len(named) else ""
    return Episode(
        index=int(episode),
        task=task,
        fps=float(info["fps"]),
        time=np.asarray(table["timestamp"], dtype=np.float64),
        position=units.from_lerobot(column(STATE)),
        velocity=units.rate_from_lerobot(column(VELOCITY)),
        effort=column(EFFORT),
        target=units.from_lerobot(column(ACTION)),
    )
