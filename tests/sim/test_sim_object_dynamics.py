"""Scene objects' mass and friction (``World.set_object_dynamics``) and their randomisation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointlab.errors import ConfigurationError, SimulationError
from jointlab.sim import ObjectDynamics, ObjectRandomization, World

HALF = (0.04, 0.04, 0.04)
#: Force on the box for the first 0.1 s, newtons along x.
PUSH = 2.5


def _slide(engine: str, mass: float | None = None, friction: float | None = None) -> float:
    """How far (m) a 0.2 kg box slides along x after the same 0.1 s push."""
    world = World(dt=0.002, engine=engine)
    try:
        box = world.add_box(HALF, (0.0, 0.0, HALF[2]), mass=0.2)
        world.set_object_dynamics(box, mass=mass, friction=friction)
        for _ in range(25):  # settle on the ground
            world.step()
        start = world.body_pose(box)[0][0]
        for step in range(500):
            force = (PUSH, 0.0, 0.0) if step < 50 else (0.0, 0.0, 0.0)
            _push(world, box, force)
            world.step()
        return float(world.body_pose(box)[0][0] - start)
    finally:
        world.close()


def _push(world: World, box: int, force: tuple[float, float, float]) -> None:
    """A world-frame force at the box's centre for the next step (each engine's own API)."""
    if world.engine == "pybullet":
        import pybullet

        position = world.body_pose(box)[0]
        pybullet.applyExternalForce(
            box, -1, force, position, pybullet.WORLD_FRAME, physicsClientId=world.client_id
        )
    else:
        world.data.xfrc_applied[world._body(box).id, :3] = force


def test_a_slipperier_box_slides_further_and_a_heavier_or_rougher_one_less(engine):
    nominal = _slide(engine)
    assert _slide(engine, friction=0.3) > nominal + 0.1
    assert _slide(engine, mass=1.0) < nominal
    assert _slide(engine, friction=2.0) < nominal


def test_both_engines_slide_a_slippery_box_alike():
    # Coulomb friction with the same coefficient: 0.1 s of 2.5 N against 0.3 * 0.2 kg * g.
    slides = [_slide(engine, friction=0.3) for engine in ("pybullet", "mujoco")]
    assert slides[0] == pytest.approx(slides[1], rel=0.1)


def test_mujoco_keeps_the_dynamics_when_the_model_is_recompiled():
    world = World(engine="mujoco")
    try:
        box = world.add_box(HALF, (0.0, 0.0, HALF[2]), mass=0.2)
        world.set_object_dynamics(box, mass=0.5, friction=0.4)
        world.add_sphere(0.05, (1.0, 0.0, 0.05), mass=0.1)  # recompiles the model
        body = world._body(box)
        assert world.model.body_mass[body.id] == pytest.approx(0.5)
        assert world.model.geom_friction[body.geomadr[0], 0] == pytest.approx(0.4)
    finally:
        world.close()


@pytest.mark.parametrize("field", ["mass", "friction"])
@pytest.mark.parametrize("value", [0.0, -1.0, float("nan"), float("inf"), "0.5", [0.5], 1j])
def test_bad_dynamics_are_refused_naming_the_field(engine, field, value):
    world = World(engine=engine)
    try:
        box = world.add_box(HALF, (0.0, 0.0, HALF[2]), mass=0.2)
        with pytest.raises(ConfigurationError, match=field):
            world.set_object_dynamics(box, **{field: value})
    finally:
        world.close()


def test_a_static_box_keeps_mass_zero(engine):
    world = World(engine=engine)
    try:
        box = world.add_box(HALF, (0.0, 0.0, HALF[2]))
        with pytest.raises(SimulationError, match="mass"):
            world.set_object_dynamics(box, mass=1.0)
    finally:
        world.close()


# ------------------------------------------------------------------ randomisation
positive = st.floats(1e-3, 1e3)


@given(low=positive, high=positive, field=st.sampled_from(["mass", "friction"]))
def test_reversed_ranges_are_refused_naming_the_field(low, high, field):
    ranges = {"mass": (0.1, 0.2), "friction": (0.5, 1.0)}
    ranges[field] = (max(low, high) * 2, min(low, high))
    with pytest.raises(ConfigurationError, match=f"ObjectRandomization.{field}"):
        ObjectRandomization(**ranges)


BAD_RANGES = [
    (0.0, 1.0),
    (-1.0, 1.0),
    (0.5, float("inf")),
    (float("nan"), 1.0),
    (1.0,),
    "light",
    None,
]


@given(bad=st.sampled_from(BAD_RANGES), field=st.sampled_from(["mass", "friction"]))
def test_non_positive_or_malformed_ranges_are_refused_naming_the_field(bad, field):
    ranges: dict = {"mass": (0.1, 0.2), "friction": (0.5, 1.0), field: bad}
    with pytest.raises(ConfigurationError, match=f"ObjectRandomization.{field}"):
        ObjectRandomization(**ranges)


@given(seed=st.integers(0, 2**32 - 1))
def test_draws_are_deterministic_and_inside_the_ranges(seed):
    randomization = ObjectRandomization(mass=(0.1, 0.6), friction=(0.3, 1.5))
    first = randomization.sample(np.random.default_rng(seed))
    assert first == randomization.sample(np.random.default_rng(seed))
    assert isinstance(first, ObjectDynamics)
    assert 0.1 <= first.mass <= 0.6
    assert 0.3 <= first.friction <= 1.5
