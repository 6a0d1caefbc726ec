"""``dynamics.armature``: explicit, from ``motor.rotor_inertia``, or the size-class default."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pybullet
import pytest
from doc_robots import doc_robot_files
from hypothesis import given
from hypothesis import strategies as st
from pybullet_urdf import load_urdf

from jointlab.errors import DescriptionError
from jointlab.robots import (
    RobotDescription,
    builtin_robots,
    description_from_dict,
    description_from_urdf,
    description_to_urdf,
    dump_yaml,
    load_robot,
    parse_yaml,
)
from jointlab.robots.defaults import (
    LINEAR_ARMATURE_CLASSES,
    ROTARY_ARMATURE_CLASSES,
    default_armature,
)
from jointlab.robots.description import JointType
from jointlab.robots.urdf_io import realised_inertial


def inertia_in_pybullet(description: RobotDescription, name: str) -> float:
    """Smallest principal inertia PyBullet gives the link of ``name`` (0: it was rejected)."""
    client = pybullet.connect(pybullet.DIRECT)
    try:
        body = load_urdf(client, description, armature=True)
        names = [
            pybullet.getJointInfo(body, j, physicsClientId=client)[1].decode()
            for j in range(pybullet.getNumJoints(body, physicsClientId=client))
        ]
        info = pybullet.getDynamicsInfo(body, names.index(name), physicsClientId=client)
        return min(info[2])
    finally:
        pybullet.disconnect(client)


def robot(**joint: Any) -> RobotDescription:
    entry = {"name": "j", "type": "rotary", "min": -1.0, "max": 1.0, "length": 0.2, **joint}
    return description_from_dict({"name": "r", "actuators": [entry]})


def test_explicit_armature_is_kept() -> None:
    assert robot(dynamics={"armature": 0.02}).armature.tolist() == [0.02]
    assert robot(dynamics={"armature": 0.0}).armature.tolist() == [0.0]


def test_rotor_inertia_is_reflected_through_the_gearbox() -> None:
    description = robot(motor={"rotor_inertia": 2e-6, "gear_ratio": 100.0})
    assert description.armature[0] == pytest.approx(2e-6 * 100.0**2)
    # an explicit armature wins over the motor data (identification writes it back)
    explicit = robot(motor={"rotor_inertia": 2e-6, "gear_ratio": 100.0}, dynamics={"armature": 0.5})
    assert explicit.armature[0] == 0.5


@pytest.mark.parametrize(
    ("kind", "effort", "expected"),
    [
        ("rotary", 0.4, 5e-4),
        ("rotary", 1.0, 5e-4),
        ("rotary", 10.0, 5e-3),
        ("rotary", 60.0, 5e-2),
        ("rotary", 300.0, 0.5),
        ("linear", 40.0, 0.05),
        ("linear", 150.0, 0.5),
        ("linear", 5000.0, 5.0),
    ],
)
def test_size_class_default_from_the_effort_limit(
    kind: str, effort: float, expected: float
) -> None:
    description = robot(type=kind, limits={"effort": effort})
    assert description.armature[0] == expected


def test_geometry_only_defaults() -> None:
    assert robot().armature[0] == 5e-3  # rotary default effort 10 N·m: a small servo
    assert robot(type="linear").armature[0] == 0.05  # linear default 100 N


@given(effort=st.floats(1e-6, 1e6), linear=st.booleans())
def test_size_classes_cover_every_effort_and_grow_with_it(effort: float, linear: bool) -> None:
    value = default_armature(effort, linear)
    assert value > 0
    assert default_armature(effort * 10.0, linear) >= value
    classes = LINEAR_ARMATURE_CLASSES if linear else ROTARY_ARMATURE_CLASSES
    assert value in [armature for _, armature in classes]


@pytest.mark.parametrize(
    ("section", "value", "field"),
    [
        ("dynamics", {"armature": -0.1}, "dynamics.armature"),
        ("motor", {"rotor_inertia": -1e-6}, "motor.rotor_inertia"),
        ("dynamics", {"armature": "heavy"}, "dynamics.armature"),
    ],
)
def test_bad_armature_is_refused_naming_the_field(section: str, value: dict, field: str) -> None:
    with pytest.raises(DescriptionError, match=rf"actuator 'j': field '{field}'"):
        robot(**{section: value})


def test_armature_survives_yaml_and_urdf_round_trips(tmp_path: Path) -> None:
    description = robot(motor={"rotor_inertia": 3e-6, "gear_ratio": 80.0})
    again = load_robot_text(dump_yaml(description), tmp_path)
    assert again == description
    path = tmp_path / "r.urdf"
    path.write_text(description_to_urdf(description))
    assert description_from_urdf(str(path)).armature[0] == description.armature[0]


def load_robot_text(text: str, folder: Path) -> RobotDescription:
    path = folder / "r.yaml"
    path.write_text(text)
    return load_robot(path)


@pytest.mark.parametrize("name", [*builtin_robots(), *doc_robot_files()])
def test_realised_inertials_stay_physical(name: str) -> None:
    files = doc_robot_files()
    description = parse_yaml(files[name]) if name in files else load_robot(name)
    for spec in description.joints:
        mass, _, inertia = realised_inertial(spec)
        eigen = np.linalg.eigvalsh(inertia)
        # with a margin: PyBullet diagonalises to ~1e-6 and zeroes a non-physical tensor
        assert eigen[0] > 0 and eigen[0] + eigen[1] >= eigen[2] * (1 + 1e-5), spec.name
        axis = np.array(spec.axis)
        base = np.array(spec.link.inertia)
        if spec.type is JointType.ROTARY:
            assert mass == spec.link.mass
            extra = axis @ (inertia - base) @ axis
            assert extra == pytest.approx(spec.dynamics.armature, rel=1e-12), spec.name
            # PyBullet keeps the tensor (it zeroes non-physical ones, with a warning)
            assert inertia_in_pybullet(description, spec.name) > 0, spec.name
        else:
            assert mass == pytest.approx(spec.link.mass + spec.dynamics.armature)
            np.testing.assert_array_equal(inertia, base)


def test_thin_rod_gets_the_smallest_physical_correction() -> None:
    # A rod along x turning about z: adding A about z alone would break I1 + I2 >= I3.
    spec = robot(length=1.0, link={"mass": 1.0, "radius": 1e-3}, dynamics={"armature": 0.5}).joints[
        0
    ]
    _, _, inertia = realised_inertial(spec)
    eigen = np.linalg.eigvalsh(inertia)
    assert eigen[0] + eigen[1] == pytest.approx(eigen[2], rel=2e-4)  # just enough
    assert eigen[0] + eigen[1] > eigen[2] * (1 + 1e-5)  # with PyBullet's margin
    assert inertia[0, 0] - spec.link.inertia[0][0] <= 0.5 / 2 + 1e-4  # at most a disc's A/2


def test_arm6_declares_motor_data_instead_of_hand_made_inertia() -> None:
    arm6 = load_robot("arm6")
    for spec in arm6.joints:
        motor = spec.motor
        assert motor.rotor_inertia is not None, spec.name
        assert spec.dynamics.armature == pytest.approx(motor.rotor_inertia * motor.gear_ratio**2)
    assert math.isclose(arm6.armature[0], 0.15)
