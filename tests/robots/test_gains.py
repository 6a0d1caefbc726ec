"""Default gains from the joints' inertia, and the explicit-PD bounds they are checked against."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jointlab.robots import RobotDescription, builtin_robots, description_from_dict, load_robot
from jointlab.robots.dynamics import DynamicsModel
from jointlab.robots.gains import (
    DEFAULT_BANDWIDTH,
    REFERENCE_DT,
    check_gains,
    critical_gains,
    effective_inertia,
)


def robot(*joints: dict[str, Any], **top: Any) -> RobotDescription:
    return description_from_dict({"name": "r", "actuators": list(joints), **top})


def joint(name: str = "j", **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "type": "rotary",
        "axis": [0, 0, 1],
        "min": -1.0,
        "max": 1.0,
        "length": 0.2,
        **fields,
    }


def home_inertia(description: RobotDescription) -> np.ndarray:
    model = DynamicsModel(description)
    return effective_inertia(
        description, model.joint_inertia(description.apply_coupling(description.home))
    )


def test_default_gains_make_a_critically_damped_joint_at_the_default_bandwidth() -> None:
    description = robot(joint(dynamics={"damping": 0.01}))
    inertia = home_inertia(description)[0]
    omega = DEFAULT_BANDWIDTH
    assert description.default_kp[0] == pytest.approx(inertia * omega**2, rel=1e-12)
    # the joint's own viscous damping counts towards critical damping
    assert description.default_kd[0] == pytest.approx(2 * inertia * omega - 0.01, rel=1e-12)
    # and at the reference step they sit well inside the bounds: a + 2b = 0.15² + 4·0.15
    a = description.default_kp[0] * REFERENCE_DT**2 / inertia
    b = (description.default_kd[0] + 0.01) * REFERENCE_DT / inertia
    assert a + 2 * b == pytest.approx(0.6225, rel=1e-9)


def test_a_given_gain_is_kept_and_the_other_chosen_for_critical_damping() -> None:
    inertia = home_inertia(robot(joint()))[0]
    only_kp = robot(joint(gains={"kp": 50.0}))
    assert only_kp.default_kp[0] == 50.0
    assert only_kp.default_kd[0] == pytest.approx(2 * np.sqrt(50.0 * inertia))
    only_kd = robot(joint(gains={"kd": 0.3}))
    assert only_kd.default_kd[0] == 0.3
    assert only_kd.default_kp[0] == pytest.approx(0.3**2 / (4 * inertia))
    both = robot(joint(gains={"kp": 7.0, "kd": 0.1}))
    assert (both.default_kp[0], both.default_kd[0]) == (7.0, 0.1)


def test_inertia_includes_children_armature_and_coupled_followers() -> None:
    lead = joint("lead", length=0.3)
    child = joint("child", length=0.2)
    description = robot(lead, child)
    bare = robot({**lead, "dynamics": {"armature": 0.0}}, {**child, "dynamics": {"armature": 0.0}})
    inertia, bare_inertia = home_inertia(description), home_inertia(bare)
    assert inertia[0] > inertia[1] > 0  # the lead joint also turns the child link
    # each armature adds to its own joint only (the exact model of a geared rotor)
    np.testing.assert_allclose(inertia - bare_inertia, description.armature, rtol=1e-9)
    # a follower coupled 1:1 adds its inertia to its leader's
    coupled = robot(
        joint("a", parent="base"), joint("b", parent="base", coupling={"alpha_leading": {"a": 1.0}})
    )
    separate = robot(joint("a", parent="base"), joint("b", parent="base"))
    assert home_inertia(coupled)[0] == pytest.approx(2 * home_inertia(separate)[0])


def test_a_floating_base_lowers_the_inertia_the_joints_drive() -> None:
    fixed = robot(
        joint(
            type="linear",
            axis=[1, 0, 0],
            min=-0.5,
            max=0.5,
            link={"mass": 2.0},
            dynamics={"armature": 0.0},
        )
    )
    floating = robot(
        joint(
            type="linear",
            axis=[1, 0, 0],
            min=-0.5,
            max=0.5,
            link={"mass": 2.0},
            dynamics={"armature": 0.0},
        ),
        base={"fixed": False, "mass": 1.0},
    )
    assert home_inertia(fixed)[0] == pytest.approx(2.0)
    assert home_inertia(floating)[0] == pytest.approx(2.0 * 1.0 / 3.0)  # the reduced mass
    assert floating.default_kp[0] == pytest.approx(home_inertia(floating)[0] * DEFAULT_BANDWIDTH**2)


def test_the_issue_example_fails_the_check_naming_joint_gain_and_bound() -> None:
    # the old default of a light geometry-only link: kp = effort/0.1 = 100, kd = 5
    description = robot(
        joint(
            "light",
            dynamics={"armature": 0.0},
            gains={"kp": 100.0, "kd": 5.0},
            link={"mass": 0.2, "radius": 0.01},
        )
    )
    inertia = home_inertia(description)
    problems = check_gains(description, 1e-3, inertia)
    assert len(problems) == 1
    problem = problems[0]
    assert (problem.name, problem.gain, problem.value) == ("light", "kd", 5.0)
    assert "(kd + d)·dt/I" in problem.message and "kd <=" in problem.message
    assert problem.bound < 5.0
    # the bound it gives passes
    fixed = robot(
        joint(
            "light",
            dynamics={"armature": 0.0},
            gains={"kp": 100.0, "kd": problem.bound * 0.999},
            link={"mass": 0.2, "radius": 0.01},
        )
    )
    assert check_gains(fixed, 1e-3, inertia) == []


def test_a_stiff_kp_is_named_as_kp() -> None:
    description = robot(joint(gains={"kp": 1e6, "kd": 0.0}))
    (problem,) = check_gains(description, 1e-3, home_inertia(description))
    assert problem.gain == "kp" and problem.value == 1e6 and "kp <=" in problem.message


def test_default_gains_pass_up_to_about_3_ms_and_fail_beyond() -> None:
    description = robot(joint())
    inertia = home_inertia(description)
    assert check_gains(description, 2.99e-3, inertia) == []
    assert check_gains(description, 3.01e-3, inertia) != []


@pytest.mark.parametrize("name", builtin_robots())
def test_builtin_gains_pass_at_the_reference_step(name: str) -> None:
    description = load_robot(name)
    assert check_gains(description, REFERENCE_DT, home_inertia(description)) == []


def test_critical_gains_is_vectorised() -> None:
    kp, kd = critical_gains(np.array([1.0, 2.0]), np.zeros(2), np.array([np.nan, 9.0]))
    np.testing.assert_allclose(kp, [DEFAULT_BANDWIDTH**2, 9.0])
    np.testing.assert_allclose(kd, [2 * DEFAULT_BANDWIDTH, 2 * np.sqrt(18.0)])
