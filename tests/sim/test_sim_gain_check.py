"""SimRobot refuses gains its explicit PD cannot integrate at its dt (or warns, when told)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from floating_robot import BASE_MASS, SLIDER_MASS, puck

import jointlab
from jointlab.errors import ConfigurationError, DescriptionError
from jointlab.interface import NJointAction
from jointlab.robots import description_from_dict
from jointlab.robots.dynamics import DynamicsModel
from jointlab.robots.gains import UnstableGainsWarning, effective_inertia
from jointlab.sim import SimRobot, World

# The light link of the issue, with the old default gains kp = effort/0.1, kd = 0.05·kp.
LIGHT = """
name: light
actuators:
  - name: flap
    type: rotary
    axis: [0, 0, 1]
    length: 0.1
    min: -1.0
    max: 1.0
    dynamics: {armature: 0.0}
    link: {mass: 0.2, radius: 0.01}
    gains: {kp: 100.0, kd: 5.0}
"""


@pytest.fixture
def light_file(tmp_path: Path) -> Path:
    path = tmp_path / "light.yaml"
    path.write_text(LIGHT)
    return path


def test_unstable_gains_are_refused_naming_file_joint_gain_and_bound(light_file: Path) -> None:
    with pytest.raises(DescriptionError) as caught:
        SimRobot(str(light_file))
    message = str(caught.value)
    for part in (
        str(light_file),
        "actuator 'flap'",
        "gains.kd = 5",
        "dt = 0.001 s",
        "kd <=",
        "gain_check='warn'",
    ):
        assert part in message, part


def test_warn_runs_anyway_and_the_pd_then_chatters(light_file: Path) -> None:
    with (
        pytest.warns(UnstableGainsWarning, match="flap"),
        jointlab.connect(f"sim://{light_file}?gain_check=warn") as robot,
    ):
        robot.apply(NJointAction.Position([0.3]))
        torques = []
        for _ in range(200):
            robot.step()
            torques.append(robot.read().torque[0])
    # what the issue saw: the torque flips between the effort limits every step
    tail = np.array(torques[-50:])
    assert np.mean(np.abs(tail) == 10.0) >= 0.8 and np.all(tail[1:] * tail[:-1] < 0)


def test_derived_gains_of_the_same_link_settle(light_file: Path, tmp_path: Path) -> None:
    path = tmp_path / "derived.yaml"
    path.write_text(LIGHT.replace("    gains: {kp: 100.0, kd: 5.0}\n", ""))
    with jointlab.connect(f"sim://{path}") as robot:
        robot.apply(NJointAction.Position([0.3]))
        for _ in range(200):
            robot.step()
        state = robot.read()
    assert abs(state.position[0] - 0.3) < 1e-6 and abs(state.velocity[0]) < 1e-4


def test_gain_check_takes_error_or_warn_only(light_file: Path) -> None:
    with pytest.raises(ConfigurationError, match="gain_check"):
        SimRobot(str(light_file), gain_check="ignore")


def test_the_check_uses_the_actual_dt() -> None:
    derived = description_from_dict(
        {
            "name": "d",
            "actuators": [{"name": "j", "type": "rotary", "min": -1.0, "max": 1.0, "length": 0.2}],
        }
    )
    with SimRobot(derived, dt=0.002):
        pass  # default gains (designed for 1 ms) still pass at 2 ms
    with pytest.raises(DescriptionError, match=r"dt = 0\.004 s"):
        SimRobot(derived, dt=0.004)


def test_a_closed_world_is_left_behind_by_a_refused_robot(light_file: Path) -> None:
    world = World(ground=False)
    with pytest.raises(DescriptionError):
        SimRobot(str(light_file), world=world)
    assert not world.closed and world._robots == []
    world.close()


def test_floating_base_inertia_matches_the_description_model() -> None:
    with SimRobot(puck()) as robot:
        description = robot.description
        home = description.apply_coupling(description.home)
        ours = effective_inertia(description, DynamicsModel(description).joint_inertia(home))
        engine = effective_inertia(description, robot._body.home_mass_matrix)
    # the engine's URDF adds a 0.1 g tool link; the free base makes both the reduced mass
    np.testing.assert_allclose(engine, ours, rtol=2e-3, atol=1e-6)
    assert ours[0] == pytest.approx(BASE_MASS * SLIDER_MASS / (BASE_MASS + SLIDER_MASS))
