"""Run folders name the backend and any non-default engine, so no run overwrites another."""

from __future__ import annotations

import pytest

from jointlab.cli.common import robot_label


@pytest.mark.parametrize(
    ("robot", "label"),
    [
        ("arm6", "arm6"),
        ("sim://arm6", "arm6"),
        ("sim://arm6?engine=pybullet", "arm6"),
        ("sim://arm6?engine=mujoco&dt=0.001", "arm6-mujoco"),
        ("emulated://arm6?stream_period=4", "emulated-arm6"),
        ("emulated://arm6?engine=mujoco", "emulated-arm6-mujoco"),
        ("feetech:///dev/ttyACM0?robot=so101", "feetech-ttyACM0"),
        ("robots/my_arm.yaml", "my_arm"),
    ],
)
def test_labels_name_backend_and_engine(robot: str, label: str) -> None:
    assert robot_label(robot) == label


def test_one_program_on_two_engines_gets_two_folders() -> None:
    labels = {robot_label(f"sim://arm6?engine={e}") for e in ("pybullet", "mujoco")}
    labels |= {robot_label("emulated://arm6")}
    assert len(labels) == 3
