"""LeRobot's joint units: degrees, a gripper 0-100 of its range."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from jointlab.interop.units import LeRobotUnits
from jointlab.robots import load_robot


def test_the_so101_gripper_spans_0_to_100_and_the_rest_is_degrees() -> None:
    so101 = load_robot("so101")
    units = LeRobotUnits.of(so101)
    assert units.keys[-1] == "gripper.pos" and units.units == ("deg",) * 5 + ("0-100",)
    np.testing.assert_allclose(units.to_lerobot(so101.lower)[-1], 0.0, atol=1e-9)
    np.testing.assert_allclose(units.to_lerobot(so101.upper)[-1], 100.0, atol=1e-9)
    np.testing.assert_allclose(units.to_lerobot(so101.home)[:5], np.degrees(so101.home[:5]))


def test_a_robot_without_a_gripper_is_degrees_throughout() -> None:
    units = LeRobotUnits.of(load_robot("arm6"))
    assert set(units.units) == {"deg"}


@given(st.lists(st.floats(-3.0, 3.0), min_size=6, max_size=6))
def test_units_round_trip(q) -> None:
    units = LeRobotUnits.of(load_robot("so101"))
    np.testing.assert_allclose(units.from_lerobot(units.to_lerobot(q)), q, atol=1e-12)
    np.testing.assert_allclose(units.rate_from_lerobot(units.rate_to_lerobot(q)), q, atol=1e-12)
