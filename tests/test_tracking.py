"""Any robot a user describes moves as commanded, with the default gains.

Every built-in robot and every robot file the docs show runs one ``set_positions`` move (each
independent joint 15 % of its soft range away from home, at most 0.5 rad or 0.1 m) through the
Commander. The robot must reach the target within 2e-3 rad (or m); on a fixed base (every
built-in robot) it must also follow the planned motion within 2e-3 all the way (a floating base
moves in reaction, so such a robot is only held to the target). The geometry-only robot of
docs/robot-files.md reaches its targets through the emulated device too. ``pytest -s`` prints
the errors.

The servo arms (``so101``, ``koch``: robots with a ``bus`` section) have their servos' gains,
soft by design, and no friction compensation: a joint stops where Coulomb friction balances
``kp · error``, and positions are read in encoder ticks. They are held to the target within
``static_friction / kp`` plus two ticks (``position_resolution``), not to the motion.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from doc_robots import doc_robot_files, five_minute_robot

import jointlab
from jointlab.controllers import Commander, run
from jointlab.robots import RobotDescription, builtin_robots

TOLERANCE = 2e-3
#: Options that keep an emulated robot from declaring the link dead on a busy machine.
PATIENT = {"request_timeout": 1.0, "dead_ms": 5000, "connect_timeout": 10.0}


def move_targets(description: RobotDescription) -> np.ndarray:
    """A target per independent joint away from home towards its roomier side; NaN elsewhere."""
    home, lower, upper = description.home, description.soft_lower, description.soft_upper
    step = np.minimum(0.15 * (upper - lower), np.where(description.is_linear, 0.1, 0.5))
    up = upper - home >= home - lower
    target = np.where(up, np.minimum(home + step, upper), np.maximum(home - step, lower))
    return np.where(description.dependent, np.nan, target)


def track(url: str, **options: object) -> tuple[str, float, float, RobotDescription]:
    """Run the move on ``url``: status, largest final error, largest error during the move."""
    with jointlab.connect(url, **options) as robot:
        if not robot.read().armed:
            robot.arm()
            robot.step()
        commander = Commander(robot)
        description = robot.description
        target = move_targets(description)
        handle = commander.set_positions(target)
        summary = run(robot, commander, until=lambda _: handle.done)
        final = np.abs(robot.read().position - target)[~description.dependent].max()
        return handle.status.value, float(final), summary.max_tracking_error, description


def servo_tolerance(description: RobotDescription) -> float:
    """Where a servo arm's joints may stop: the friction band plus two encoder ticks."""
    band = description.static_friction / description.default_kp
    return float(np.max(band + 2 * description.position_resolution))


def check(url: str, *, during_motion: bool = True, **options: object) -> None:
    status, final, during, description = track(url, **options)
    print(f"\n{url}: {status}, {final:.1e} from the target, {during:.1e} off the motion")
    servo_arm = description.bus is not None
    tolerance = max(TOLERANCE, servo_tolerance(description)) if servo_arm else TOLERANCE
    assert final <= tolerance, f"{url}: {final:.2e} from the target ({status})"
    if description.base.fixed and during_motion and not servo_arm:
        assert status == "succeeded", url
        assert during <= TOLERANCE, f"{url}: {during:.2e} off the planned motion"


@pytest.mark.parametrize("name", builtin_robots())
def test_builtin_robot_tracks_with_default_gains(name: str) -> None:
    check(f"sim://{name}")


@pytest.mark.parametrize("name", list(doc_robot_files()))
def test_robot_file_in_the_docs_tracks_with_default_gains(name: str, tmp_path: Path) -> None:
    path = tmp_path / "robot.yaml"
    path.write_text(doc_robot_files()[name])
    check(f"sim://{path}")


def test_five_minute_robot_reaches_its_targets_on_the_emulated_device(tmp_path: Path) -> None:
    # the device runs the same PD; the host's references reach it a link delay late
    check(f"emulated://{five_minute_robot(tmp_path)}", during_motion=False, **PATIENT)


def test_five_minute_robot_reaches_each_target_alone(tmp_path: Path) -> None:
    # the scenario: set_position joint by joint, each ending where it was sent
    with jointlab.connect(f"sim://{five_minute_robot(tmp_path)}") as robot:
        commander = Commander(robot)
        targets = move_targets(robot.description)
        home = robot.description.home
        for joint, target in enumerate(targets):
            away = 2 * home[joint] - target  # the other side of home this time
            handle = commander.set_position(joint, away)
            assert commander.wait(handle, timeout=10.0) and handle.succeeded, joint
            assert abs(robot.read().position[joint] - away) <= TOLERANCE
            assert np.abs(robot.read().torque).max() < robot.description.effort_limit.min()
