"""``jointlab record`` (leader and program modes), ``jointlab replay --episode`` and
``jointlab teleop`` end to end, on an emulated leader (lockstep) and sim://so101."""

from __future__ import annotations

import numpy as np

from jointlab.cli import main
from jointlab.interop.dataset import load_episode, open_dataset

LEADER = "emulated://so101?lockstep=1"


def test_record_a_dataset_from_a_leader_then_replay_it(tmp_path, capsys) -> None:
    folder = tmp_path / "pick"
    argv = [
        "record",
        "--leader",
        LEADER,
        "--follower",
        "sim://so101",
        "--task",
        "pick",
        "--episodes",
        "2",
        "--seconds",
        "0.4",
        "--dataset",
        str(folder),
        "--camera",
        "front=sim:32x24",
        "--max-step",
        "2",
    ]
    assert main(argv) == 0
    assert "wrote 2 episode(s) of 10 frames at 25 fps" in capsys.readouterr().out
    dataset = open_dataset(folder)
    assert (dataset.num_episodes, dataset.num_frames) == (2, 20)
    assert tuple(dataset[3]["observation.images.front"].shape) == (3, 24, 32)
    before = sorted(p.name for p in folder.rglob("*"))
    assert main(argv) == 2  # the folder exists: refused, nothing touched
    err = capsys.readouterr().err
    assert "exists (a dataset); nothing was written" in err
    assert sorted(p.name for p in folder.rglob("*")) == before
    assert main(["replay", str(folder), "--episode", "1", LEADER]) == 0
    out = capsys.readouterr().out
    assert "replayed 10 frames at 25 fps; largest tracking error" in out
    assert "shoulder_lift" in out


def test_record_a_program_and_teleoperate(tmp_path, capsys) -> None:
    program = tmp_path / "wave.yaml"
    program.write_text("- set_positions: {positions: [0.3, 0.6, 1.2, 0.7, 0.2, 0.1]}\n")
    folder = tmp_path / "wave"
    argv = [
        "record",
        "--program",
        str(program),
        "--follower",
        "sim://so101?control_dt=0.01",
        "--task",
        "wave",
        "--dataset",
        str(folder),
        "--fps",
        "50",
    ]
    assert main(argv) == 0
    episode = load_episode(folder, 0)
    assert episode.fps == 50 and np.allclose(episode.target[-1][0], 0.3, atol=0.02)
    capsys.readouterr()
    assert (
        main(
            [
                "teleop",
                "--leader",
                LEADER,
                "--follower",
                "sim://so101",
                "--seconds",
                "0.1",
                "--no-table",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "teleoperating at 200 Hz" in out and "done: 20 periods" in out
    assert "the follower held, then disarmed" in out
