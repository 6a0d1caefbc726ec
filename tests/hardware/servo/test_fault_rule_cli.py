"""The command lines a user types meet a faulting servo bus: ``jointlab teleop`` and ``record``.

As ``jointlab run`` (tests/hardware/servo/test_fault_rule.py): the follower is an emulated
SO-101 bus in lockstep whose supply browns out to 3.0 V at a set bus time; its servos' input
voltage rule trips (Feetech's Status bit 0), the robot holds and disarms, and the command
exits non-zero with the message naming the servo, the joint, the bit and the fix. The
recording keeps the episodes saved before the fault and drops the one in progress. Every
figure is exact (lockstep).
"""

from __future__ import annotations

from jointlab.cli import main

LEADER = "emulated://so101?lockstep=1"
#: A supply that sags to 3.0 V from 0.4 s of bus time (for 5 s).
BROWNOUT_AT_0_4 = "emulated://so101?lockstep=1&brownout=0.4:5:3.0"
THE_FAULT = (
    "servo id 1 (shoulder_pan, sts3215) reports input voltage error (hardware error bits 0x01)"
)
THE_FIX = "Fix: check the power supply"


def _flat(text: str) -> str:
    return " ".join(text.split())  # rich wraps long lines


def test_jointlab_teleop_on_a_faulting_follower_exits_nonzero_with_the_fault(capsys) -> None:
    arms = ["--leader", LEADER, "--follower", BROWNOUT_AT_0_4]
    code = main(["teleop", *arms, "--seconds", "2", "--no-table"])
    out = _flat(capsys.readouterr().out)
    assert code == 1, out
    assert f"fault: {THE_FAULT}" in out and THE_FIX in out, out
    # 200 Hz: the fault is in the period that starts at 0.40 s; the follower held, disarmed
    assert "80 periods (0.40 s)" in out and "the follower held, then disarmed" in out, out


def test_jointlab_record_from_a_leader_keeps_the_saved_episode_and_drops_the_faulted_one(
    tmp_path, capsys
) -> None:
    from jointlab.interop.dataset import open_dataset

    dataset = tmp_path / "dataset"
    arms = ["--leader", LEADER, "--follower", BROWNOUT_AT_0_4]
    episodes = ["--episodes", "3", "--seconds", "0.3", "--fps", "20"]
    code = main(["record", *arms, "--task", "wave", "--dataset", str(dataset), *episodes])
    err = _flat(capsys.readouterr().err)
    assert code == 2, err
    assert f"jointlab record: error: {THE_FAULT}" in err and THE_FIX in err, err
    # episode 1: 0.3 s (6 frames) and its stop's hold, to 0.305 s; episode 2 faulted at 0.4 s
    saved = open_dataset(dataset)
    assert (saved.num_episodes, saved.num_frames) == (1, 6)


def test_jointlab_record_of_a_program_keeps_the_saved_episode_and_drops_the_faulted_one(
    tmp_path, capsys
) -> None:
    from jointlab.interop.dataset import open_dataset

    program = tmp_path / "wait.yaml"
    program.write_text("- wait: 1.0\n")  # 20 frames at 20 fps
    dataset = tmp_path / "dataset"
    # episode 1: a reset (the arm settles at home), 1 s of program; the supply sags at 1.5 s,
    # well inside episode 2's program whatever the reset takes (a fraction of a second)
    follower = "emulated://so101?lockstep=1&brownout=1.5:5:3.0"
    source = ["--follower", follower, "--program", str(program)]
    episodes = ["--episodes", "3", "--fps", "20"]
    code = main(["record", *source, "--task", "wait", "--dataset", str(dataset), *episodes])
    err = _flat(capsys.readouterr().err)
    assert code == 2, err
    assert f"jointlab record: error: program step 0 (wait): {THE_FAULT}" in err, err
    assert THE_FIX in err
    saved = open_dataset(dataset)
    assert (saved.num_episodes, saved.num_frames) == (1, 20)
