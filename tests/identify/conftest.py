"""Fixtures of the identification tests."""

from __future__ import annotations

import pytest

from jointlab.robots import RobotDescription, load_robot


@pytest.fixture(scope="module")
def arm6() -> RobotDescription:
    return load_robot("arm6")
