"""Fixtures of the simulation tests: the engine under test and a gravity-free world."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jointlab.sim import World
from jointlab.sim.engine import ENGINES


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """Each physics engine in turn: tests that take it run on PyBullet and on MuJoCo."""
    return request.param


@pytest.fixture
def zero_g(engine: str) -> Iterator[World]:
    """A world without gravity or ground, on each engine."""
    world = World(gravity=(0.0, 0.0, 0.0), ground=False, engine=engine)
    yield world
    world.close()
