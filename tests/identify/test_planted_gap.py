"""The planted-gap test: a device whose actuators differ from its robot file by known amounts.

The device is the planted robot simulated deterministically, seen by the host through the
nominal robot file (``connect_planted(..., backend="sim")``): the same run gives the same
log, so the tolerances below are properties of the method, not of the machine's load.
Excite, record, fit; the fitted parameters must lie within the documented tolerance of the
planted ones, and the identified simulation must close at least 80 % of the nominal
simulation's tracking gap on a held-out trajectory (docs/identification.md lists the figures).

Parametrised by robot: arm6 (torque-controlled joints) and so101, a servo-bus arm whose six
Feetech servos run in position mode (the Commander turns its gravity feed-forward into target
offsets; the simulated servos report their current, as the STS3215 does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import jointlab
from jointlab.identify import connect_planted, excitation, fit, plant, record_excitation, validate
from jointlab.program import demo_program
from jointlab.robots import RobotDescription, description_from_dict, description_to_dict
from jointlab.sim import SensorModel

#: Largest relative error of each fitted parameter (``delay``: exact, in physics steps).
TOLERANCE = {"static_friction": 0.10, "damping": 0.10, "armature": 0.20, "torque_constant": 0.05}
#: Share of the nominal simulation's tracking gap the identified one must close.
GAP_CLOSED = 0.80


@dataclass(frozen=True)
class Case:
    robot: str
    #: :func:`plant` keyword arguments.
    gaps: dict[str, Any]
    #: :func:`excitation` keyword arguments of the identification run.
    excite: dict[str, Any] = field(default_factory=dict)
    #: Device options (:class:`SimRobot` keywords: its sensors, their seed).
    device: dict[str, Any] = field(default_factory=dict)


CASES = {
    # arm6's stiff default gains leave room for one physics step of latency: with two, the
    # wrists fall into a saturated limit cycle (which fit(parameters=["effort"]) reports).
    # Armature is planted on the base joint: the simulator adds a joint's armature to the
    # link it moves, which the joint's ancestors feel too, and the base joint has none.
    "arm6": Case(
        "arm6",
        {
            "static_friction": 1.5,
            "damping": 1.4,
            "delay": 1,
            "torque_constant": 1.15,
            "armature": [0.05, 0, 0, 0, 0, 0],
        },
        {"duration": 8.0, "sequential": False},
        # a 17-bit encoder and a 2 mrad/s velocity noise: what the default low-pass is for
        {
            "sensors": SensorModel(position_resolution=2 * np.pi / 2**17, velocity_noise=0.002),
            "seed": 3,
        },
    ),
    # so101 rests folded over the floor (home): the excitation moves about a raised pose, or
    # the floor check would cut every amplitude to 4 %. The gripper, at 0.8 rad, swings
    # freely between its limits. Armature is planted on the base joint, as on arm6.
    "so101": Case(
        "so101",
        {
            "static_friction": 1.5,
            "damping": 1.4,
            "delay": 1,
            "torque_constant": 1.15,
            "armature": [0.003, 0, 0, 0, 0, 0],
        },
        {"duration": 8.0, "sequential": False, "centre": [0.0, 0.0, 0.8, 0.6, 0.0, 0.8]},
        # the STS3215's 12-bit magnetic encoder
        {
            "sensors": SensorModel(position_resolution=2 * np.pi / 4096, velocity_noise=0.002),
            "seed": 3,
        },
    ),
}


def planted_value(planted: RobotDescription, parameter: str, joint: int) -> float:
    spec = planted.joints[joint]
    return float(
        {
            "static_friction": spec.dynamics.static_friction,
            "damping": spec.dynamics.damping,
            "armature": spec.dynamics.armature,
            "delay": spec.motor.delay,
            "torque_constant": spec.motor.torque_constant,
        }[parameter]
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_planted_gaps_are_found_and_close_the_tracking_gap(name, tmp_path):
    case = CASES[name]
    nominal = jointlab.load_robot(case.robot)
    planted = plant(nominal, **case.gaps)
    with connect_planted(planted, nominal, **case.device) as device:
        excite_log = record_excitation(
            device, excitation(nominal, **case.excite), tmp_path / "excite.npz"
        )
    with connect_planted(planted, nominal, **case.device) as device:
        held_out = record_excitation(device, demo_program(device), tmp_path / "held_out.npz")

    result = fit(excite_log, nominal)
    print(f"\n{result}")
    for estimate in result.estimates:
        j = nominal.joint_index(estimate.joint)
        truth = planted_value(planted, estimate.parameter, j)
        if estimate.parameter == "delay":
            assert estimate.value == truth, estimate
            continue
        if truth == 0.0:  # nothing in the file nor planted: the estimate must be tiny
            assert estimate.value <= 1e-3, estimate
            continue
        assert estimate.value == pytest.approx(truth, rel=TOLERANCE[estimate.parameter]), estimate

    report = validate(held_out, nominal, result.to_description())
    print(report)
    assert report.total_gap_closed >= GAP_CLOSED
    significant = report.nominal_rms > 1e-6
    assert np.all(report.gap_closed[significant] >= GAP_CLOSED), report.summary()


def test_reflected_inertia_of_the_base_joint_is_found(tmp_path):
    """Extra inertia about the base joint's axis is exactly armature: planted via the link.

    (The base joint's link turns about that axis only, so its inertia about it adds to the
    joint's mass-matrix entry alone, as a reflected rotor inertia does.)
    """
    nominal = jointlab.load_robot("arm6")
    data = description_to_dict(nominal)
    link = data["actuators"][0]["link"]
    link["inertia"] = (np.array(link["inertia"]) + 0.05 * np.eye(3)).tolist()
    planted = description_from_dict(data)
    program = excitation(nominal, ["shoulder_pan"], duration=4.0, band=(0.5, 1.5), ramp=0.5)
    with connect_planted(planted, nominal) as device:
        path = record_excitation(device, program, tmp_path / "base.npz")
    result = fit(
        path,
        nominal,
        joints=["shoulder_pan"],
        parameters=["static_friction", "damping", "armature"],
    )
    armature = result.estimate("armature", "shoulder_pan")
    expected = armature.nominal + 0.05
    assert armature.value == pytest.approx(expected, rel=TOLERANCE["armature"] / 4)
    assert armature.high - armature.low < 0.01 * armature.value
    assert result.estimate("damping", 0).value == pytest.approx(nominal.damping[0], rel=0.02)
