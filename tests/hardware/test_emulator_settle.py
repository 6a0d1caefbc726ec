"""A real-time emulated JointLab device is found at rest, as a real unpowered arm is.

The device emulator shares the servo bus emulator's criterion of rest
(:mod:`jointlab.hardware.emulator.settle`): its limp plant settles under gravity before it
serves. Lockstep twins keep the home pose (tests compare them state by state with sim).
Numbers are compared, never timings.
"""

from __future__ import annotations

import numpy as np

import jointlab
from jointlab.hardware.emulator import Device
from jointlab.hardware.emulator.settle import REST_DISTANCE, REST_TICKS, RestWatch, settle
from jointlab.sim import SimRobot


def test_rest_watch_counts_ticks_within_the_rest_distance() -> None:
    watch = RestWatch()
    q = np.zeros(2)
    for _ in range(REST_TICKS):
        watch.observe(q + 0.4 * REST_DISTANCE)
        assert not watch.at_rest
    watch.observe(q)
    assert watch.at_rest
    watch.observe(q + 1.5 * REST_DISTANCE)  # moved: counting starts again
    assert watch.ticks == 0 and not watch.at_rest
    watch.wake()
    assert watch.ticks == 0
    # settle stops as soon as the plant rests, and after its time budget otherwise
    calls: list[int] = []
    assert settle(lambda: calls.append(1), lambda: len(calls) >= 7, dt=0.001) == 7
    assert settle(lambda: None, lambda: False, dt=0.001, seconds=0.25) == 250


def test_a_settling_device_starts_its_plant_at_rest_and_a_lockstep_one_at_home() -> None:
    for settles in (False, True):
        plant = SimRobot("arm6", dt=1e-3, control_dt=1e-3)
        try:
            device = Device(plant, lockstep=not settles, settle=settles)
            state, home = plant.read(), plant.description.home
            assert device.tick_count == 0 and not device.armed
            if settles:  # sagged onto its stops under gravity, and still there
                assert np.abs(state.position - home).max() > 0.3
                assert np.abs(state.velocity).max() < 1e-3
                d = plant.description
                assert np.all(state.position >= d.lower - 1e-3)
                assert np.all(state.position <= d.upper + 1e-3)
            else:
                np.testing.assert_array_equal(state.position, home)
        finally:
            plant.close()


def test_a_real_time_emulated_arm_is_found_at_rest_by_the_host() -> None:
    with jointlab.connect("emulated://arm6") as robot:
        state = robot.read()  # the host's first state: the device's first tick
        assert not state.armed
        assert np.abs(state.velocity).max() < 1e-3, state.velocity
        assert np.abs(state.position - robot.description.home).max() > 0.3
