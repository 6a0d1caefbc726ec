"""IdentificationResult: write-back of the fitted fields only, reporting, randomisation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import jointlab
from jointlab.identify import Estimate, IdentificationError, IdentificationResult
from jointlab.identify.parameters import FIELDS
from jointlab.identify.writeback import write_parameters
from jointlab.robots import description_from_dict, description_to_dict
from jointlab.sim import SimRobot


def leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every scalar of a robot-file mapping by its dotted path (actuators by name)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(leaves(item, f"{path}.{key}" if path else key))
        return out
    if isinstance(value, list) and value and isinstance(value[0], dict) and "name" in value[0]:
        out = {}
        for item in value:
            out.update(leaves(item, f"{path}[{item['name']}]"))
        return out
    return {path: value}


def make_result(
    description, parameters=("static_friction", "damping", "delay", "torque_constant")
) -> IdentificationResult:
    friction, damping = description.static_friction, description.damping
    values = {  # realistic changes: a fitted file must still pass the simulator's gain checks
        "static_friction": lambda j: tuple(friction[j] * np.array([1.1, 1.0, 1.2])),
        "damping": lambda j: tuple(damping[j] * np.array([1.2, 1.1, 1.3])),
        "armature": lambda j: (0.01, 0.009, 0.011),
        "delay": lambda j: (2, 1, 3),
        "torque_constant": lambda j: (0.07, 0.069, 0.071),
        "effort": lambda j: (5.0, 4.9, 5.0),
    }
    estimates = []
    for parameter in parameters:
        for j, name in enumerate(description.joint_names):
            value, low, high = values[parameter](j)
            estimates.append(Estimate(parameter, name, 0.0, value, low, high, "unit"))
    return IdentificationResult(description, tuple(estimates))


def test_only_the_fitted_fields_change(arm6):
    result = make_result(arm6)
    before = leaves(description_to_dict(arm6))
    after = leaves(description_to_dict(result.to_description()))
    assert set(before) == set(after)
    changed = {path for path in before if before[path] != after[path]}
    fitted = {
        f"actuators[{j}].{'.'.join(FIELDS[p])}" for p in result.written() for j in arm6.joint_names
    }
    assert changed == fitted
    for j, name in enumerate(arm6.joint_names):
        assert after[f"actuators[{name}].motor.delay"] == 2
        assert after[f"actuators[{name}].dynamics.damping"] == pytest.approx(1.2 * arm6.damping[j])


def test_the_written_file_loads_and_simulates(arm6, tmp_path):
    result = make_result(arm6)
    path = result.save(tmp_path / "sub" / "arm6_identified.yaml")
    loaded = jointlab.load_robot(path)
    assert loaded == result.to_description()
    with SimRobot(loaded) as robot:
        robot.step()


def test_armature_is_written_to_dynamics_armature(arm6):
    result = make_result(arm6, ("damping", "armature"))
    assert result.written() == ("damping", "armature")
    dynamics = result.to_description().joints[0].dynamics
    assert dynamics.armature == pytest.approx(0.01)
    assert dynamics.damping == pytest.approx(0.6)


def test_a_saturation_below_the_soft_effort_limit_is_refused():
    description = jointlab.load_robot("planar2")
    data = description_to_dict(description)
    data["actuators"][0]["soft_limits"] = {"effort": 8.0}
    description = description_from_dict(data)
    result = make_result(description, ("effort",))
    with pytest.raises(IdentificationError, match=r"below its soft_limits\.effort 8"):
        result.to_description()


def test_bad_write_requests_are_named(arm6):
    with pytest.raises(IdentificationError, match="unknown parameter 'friction'"):
        write_parameters(arm6, {"friction": {"elbow": 1.0}})
    with pytest.raises(IdentificationError, match="no joint 'knee'"):
        write_parameters(arm6, {"damping": {"knee": 1.0}})
    with pytest.raises(IdentificationError, match=r"dynamics\.damping"):
        write_parameters(arm6, {"damping": {"elbow": -1.0}})


def test_reporting_and_lookup(arm6):
    result = make_result(arm6)
    assert result.parameters == ("static_friction", "damping", "delay", "torque_constant")
    assert result.joints == arm6.joint_names
    assert result.estimate("delay", 2).joint == "elbow"
    assert result.values("damping")["wrist_yaw"] == pytest.approx(1.2 * arm6.damping[5])
    text = str(result)
    assert "dynamics.static_friction" in text and "motor.delay" in text and "[1, 3]" in text
    with pytest.raises(IdentificationError, match="no estimate of 'effort'"):
        result.estimate("effort", "elbow")


def test_randomization_is_centred_on_the_identified_robot(arm6):
    result = make_result(arm6)
    description, randomization = result.randomization()
    low, high = randomization.friction_scale
    assert low < 1.0 < high and high - 1.0 == pytest.approx(0.1 / 1.1, rel=1e-6)
    assert randomization.latency == (0, 2)
    assert [j.motor.delay for j in description.joints] == [1] * arm6.dof
    _, wide = result.randomization(widen=3.0)
    assert wide.damping_scale[1] > randomization.damping_scale[1]
    robot = SimRobot(description, randomization=randomization, seed=1)
    with robot:
        robot.reset(randomize=True)
        assert np.all(robot.episode.latency <= 2)
    with pytest.raises(IdentificationError, match="widen"):
        result.randomization(widen=0.0)
