"""Fixtures of the simulation tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jointlab.sim import World


@pytest.fixture
def zero_g() -> Iterator[World]:
    """A world without gravity or ground."""
    world = World(gravity=(0.0, 0.0, 0.0), ground=False)
    yield world
    world.close()
