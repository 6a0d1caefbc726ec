"""One contact dynamics on both engines: penetration recovery and a scripted push of Push-v0's box.

The rows are those of ``benchmarks/push_parity.py`` (loaded from there, so the test measures
what the benchmark prints). With MuJoCo's default soft contacts the pushed box toppled on
MuJoCo (80-95 degrees, 12-15 cm) in every row where it wedges against the arm on PyBullet,
and a box 3 mm deep left the ground at 0.055 m/s on MuJoCo against 0.24 on PyBullet.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("pybullet", "mujoco")


def _benchmark():
    spec = importlib.util.spec_from_file_location(
        "push_parity", ROOT / "benchmarks" / "push_parity.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


bench = _benchmark()


@pytest.mark.parametrize("depth", [0.001, 0.003, 0.006])
def test_a_penetration_is_recovered_at_the_same_speed_on_both_engines(depth) -> None:
    pybullet, mujoco = (bench.recovery(engine, depth) for engine in ENGINES)
    assert pybullet > 0.05 * depth / 0.001  # about 0.08 m/s per mm at dt = 1 ms
    assert mujoco == pytest.approx(pybullet, rel=0.05)  # measured: 3.4-3.6 % below


@pytest.mark.parametrize(
    "case", [bench.Push(1.0, 0.42), bench.Push(3.0, 0.5, elbow=0.4)], ids=lambda case: case.label
)
def test_a_box_hit_above_its_centre_wedges_alike_on_both_engines(case) -> None:
    """Face on, friction 1: the box tilts 15-25 degrees against the arm and stays there."""
    (travel_a, tilt_a), (travel_b, tilt_b) = (bench.push(engine, case) for engine in ENGINES)
    for travel, tilt in ((travel_a, tilt_a), (travel_b, tilt_b)):
        assert 5.0 < tilt < 35.0  # wedged, not toppled (MuJoCo's defaults: 80-95 degrees)
        assert travel < 0.06
    assert abs(tilt_b - tilt_a) < 6.0  # measured: 3.1 and 0.7 degrees
    assert abs(travel_b - travel_a) < 0.02  # measured: 5 and 8 mm


def test_every_mujoco_geom_and_friction_pair_gets_the_hard_contact_model() -> None:
    """Robots, objects added later and explicit friction pairs: ``solref`` 5 dt, elliptic cone."""
    import numpy as np

    from jointlab.sim import World
    from jointlab.sim.mujoco.mjcf import RIGID_SOLIMP
    from jointlab.sim.robot import SimRobot

    with World(engine="mujoco", dt=0.002) as world:
        SimRobot("planar2", world=world)
        world.add_box((0.2, 0.2, 0.02), (1.0, 0.0, 0.02), friction=0.8)  # a static slab
        world.add_box((0.04, 0.04, 0.04), (1.0, 0.0, 0.1), mass=0.2, friction=0.5)
        model = world.model
        assert model.npair > 0  # 0.5 on 0.8: the product needs explicit pairs
        assert model.opt.cone == 1  # mjCONE_ELLIPTIC
        for solref, solimp in (
            (model.geom_solref, model.geom_solimp),
            (model.pair_solref, model.pair_solimp),
        ):
            np.testing.assert_allclose(solref, np.tile([0.01, 1.0], (len(solref), 1)))
            np.testing.assert_allclose(solimp, np.tile(RIGID_SOLIMP, (len(solimp), 1)))
