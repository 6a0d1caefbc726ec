"""Default gains checked on the coupled discrete loop (jointlab.robots.gain_design)."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

from jointlab.cli import main
from jointlab.interface import NJointAction
from jointlab.robots import (
    RobotDescription,
    builtin_path,
    builtin_robots,
    description_from_dict,
    load_robot,
)
from jointlab.robots.dynamics import DynamicsModel
from jointlab.robots.gain_design import (
    GAIN_MARGIN,
    coupled_plants,
    one_step_maps,
    spectral_radius,
)
from jointlab.robots.gain_hold import hold_problems
from jointlab.robots.gains import (
    REFERENCE_DT,
    UnstableGainsWarning,
    critical_gains,
    effective_inertia,
)
from jointlab.sim.robot import SimRobot

#: The issue's arm: base yaw, then three parallel pitch joints, from geometry only.
ARM4 = {
    "name": "arm4",
    "base": {"position": [0.0, 0.0, 0.05], "fixed": True},
    "actuators": [
        {
            "name": "yaw",
            "type": "rotary",
            "axis": [0, 0, 1],
            "length": 0.12,
            "orientation": [0, -1.5708, 0],
            "min": -3,
            "max": 3,
        },
        {
            "name": "shoulder",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.2,
            "orientation": [0, 1.5708, 0],
            "min": -2,
            "max": 2,
            "home": -0.5,
        },
        {
            "name": "elbow",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.18,
            "min": -2.5,
            "max": 2.5,
            "home": 0.6,
        },
        {
            "name": "wrist",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.12,
            "min": -2,
            "max": 2,
            "home": 0.4,
        },
    ],
}


def per_joint_gains(description: RobotDescription) -> tuple[np.ndarray, np.ndarray]:
    """The rule before the coupled check: the diagonal of M at home, every joint derived."""
    home = description.apply_coupling(description.home)
    inertia = effective_inertia(description, DynamicsModel(description).joint_inertia(home))
    return critical_gains(inertia, description.damping)


def test_the_per_joint_gains_of_the_four_joint_arm_are_unstable_and_the_defaults_are_not() -> None:
    arm = description_from_dict(ARM4)
    plants = coupled_plants(arm)
    kp, kd = per_joint_gains(arm)
    for plant in plants:
        assert spectral_radius(one_step_maps(plant, kp, kd, REFERENCE_DT)).max() > 1.2
        radius = spectral_radius(one_step_maps(plant, arm.default_kp, arm.default_kd, REFERENCE_DT))
        margin = spectral_radius(
            one_step_maps(
                plant, GAIN_MARGIN * arm.default_kp, GAIN_MARGIN * arm.default_kd, REFERENCE_DT
            )
        )
        assert radius.shape == (25,) and radius.max() < 1.0 and margin.max() <= 1.0 + 1e-9


@pytest.mark.parametrize("engine", ["pybullet", "mujoco"])
def test_the_one_step_map_predicts_one_physics_step_of_the_engine(engine: str) -> None:
    """From a small error and velocity at home, one engine step lands where the map says."""
    arm = description_from_dict(ARM4)
    plant = next(p for p in coupled_plants(arm, samples=0) if p.engine == engine)
    kp, kd = per_joint_gains(arm)  # stiff gains: the map's terms are large and checkable
    home = arm.home
    rng = np.random.default_rng(3)
    error, velocity = rng.normal(0, 1e-4, 4), rng.normal(0, 1e-3, 4)
    with SimRobot(arm, engine=engine, gain_check="warn") as robot:
        robot.reset(home + error, velocity)
        gravity = DynamicsModel(arm).gravity_torque(home)
        robot.apply(NJointAction.TorqueAndPosition(gravity, home, kp, kd))
        robot.step()
        state = robot.read()
    predicted = one_step_maps(plant, kp, kd, REFERENCE_DT)[0] @ np.concatenate([error, velocity])
    measured = np.concatenate([state.position - home, state.velocity])
    scale = np.abs(predicted).max()
    assert np.abs(measured - predicted).max() < 0.02 * scale, (measured, predicted)


def test_built_in_defaults_keep_the_per_joint_design_where_it_passes() -> None:
    """Only trifinger's per-joint gains fail the coupled check (unstable at poses on MuJoCo).

    Every built-in's defaults pass it, with the gain margin, at home and the samples.
    """
    import yaml

    changed = []
    for name in builtin_robots():
        description = load_robot(name)
        raw = yaml.safe_load(builtin_path(name).read_text())
        given = {a["name"]: a.get("gains", {}) for a in raw["actuators"]}
        names = description.joint_names
        home = description.apply_coupling(description.home)
        inertia = effective_inertia(description, DynamicsModel(description).joint_inertia(home))
        kp, _ = critical_gains(
            inertia,
            description.damping,
            np.array([given.get(n, {}).get("kp", np.nan) for n in names], dtype=float),
            np.array([given.get(n, {}).get("kd", np.nan) for n in names], dtype=float),
        )
        if not np.array_equal(kp, description.default_kp):
            changed.append(name)
        independent = ~description.dependent
        for plant in coupled_plants(description):
            margin = spectral_radius(
                one_step_maps(
                    plant,
                    GAIN_MARGIN * description.default_kp[independent],
                    GAIN_MARGIN * description.default_kd[independent],
                    REFERENCE_DT,
                )
            )
            assert margin.max() <= 1.0 + 1e-9, (name, plant.engine)
    assert changed == ["trifinger"]


def test_identical_fingers_get_identical_gains() -> None:
    trifinger = load_robot("trifinger")
    kp = trifinger.default_kp.reshape(3, 3)
    np.testing.assert_allclose(kp, kp[[0, 0, 0]], rtol=1e-12)


def test_given_gains_are_never_changed() -> None:
    data = copy.deepcopy(ARM4)
    data["actuators"][3]["gains"] = {"kp": 500.0}
    arm = description_from_dict(data)
    assert arm.default_kp[3] == 500.0 and arm.default_kd[3] > 0


HEAVY = {
    "name": "heavy",
    "base": {"position": [0, 0, 1.0], "fixed": True},
    "actuators": [
        {
            "name": "shoulder",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.5,
            "min": -2,
            "max": 2,
            "limits": {"effort": 0.5},
            "link": {"radius": 0.04},
        },
        {
            "name": "elbow",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.4,
            "min": -2,
            "max": 2,
            "limits": {"effort": 0.5},
        },
    ],
}


def test_a_robot_its_defaults_cannot_hold_warns_at_load_naming_the_joints() -> None:
    with pytest.warns(UnstableGainsWarning) as caught:
        heavy = description_from_dict(HEAVY, source="heavy.yaml")
    message = str(caught[0].message)
    assert "heavy.yaml" in message and "'shoulder'" in message and "'elbow'" in message
    assert "limits.effort >= 10.5" in message
    problems = hold_problems(heavy)
    assert [(p.name, p.gain) for p in problems] == [("shoulder", "effort"), ("elbow", "effort")]
    assert problems[0].needed == pytest.approx(10.5, abs=0.05)


def test_describe_check_refuses_it_and_passes_the_four_joint_arm(tmp_path, capsys) -> None:
    import yaml

    heavy, arm = tmp_path / "heavy.yaml", tmp_path / "arm4.yaml"
    heavy.write_text(yaml.safe_dump(HEAVY))
    arm.write_text(yaml.safe_dump(ARM4))
    assert main(["describe", str(heavy), "--check"]) == 1
    out = capsys.readouterr().out
    assert "'shoulder'" in out and "limits.effort" in out
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnstableGainsWarning)
        assert main(["describe", str(arm), "--check"]) == 0
    assert "ok arm4" in capsys.readouterr().out


def test_a_default_kp_softer_than_gravity_is_named_with_the_kp_it_needs() -> None:
    """An arm held straight up: gravity's stiffness pulls it away; kp must beat it twice."""
    upright = description_from_dict(
        {
            "name": "upright",
            "base": {"position": [0, 0, 0.1], "fixed": True},
            "actuators": [
                {
                    "name": "mast",
                    "type": "rotary",
                    "axis": [0, 1, 0],
                    "length": 0.5,
                    "orientation": [0, -1.5708, 0],
                    "min": -1,
                    "max": 1,
                    "gains": {"kp": 0.5, "kd": 0.01},
                }
            ],
        },
        source="upright.yaml",
    )
    problems = hold_problems(upright, derived=np.array([True]))
    weight = float(DynamicsModel(upright).mass[0]) * 9.81 * 0.25  # m·g·(l/2), N·m/rad
    assert [(p.name, p.gain) for p in problems] == [("mast", "kp")]
    assert problems[0].needed == pytest.approx(2 * weight, rel=1e-3)
    assert "upright.yaml" in problems[0].message and "gains.kp >=" in problems[0].message
    assert hold_problems(upright, derived=np.array([False])) == []  # given gains: the file's
