"""A real-time emulated bus lets a resting arm sleep: no physics until something changes.

Driven tick by tick in this process (no wall clock): an arm left alone settles, falls asleep
(its ticks then only count time), and wakes on a write, a fault or a hand moving it. Lockstep
emulators never sleep (their runs stay exact).
"""

from __future__ import annotations

import numpy as np

from jointlab.hardware.emulator.settle import REST_TICKS
from jointlab.hardware.servo_emulator.emulator import BusEmulator


def _settle(emulator: BusEmulator, ticks: int = 3000) -> None:
    for _ in range(ticks):
        emulator.tick()


def test_a_resting_arm_sleeps_and_wakes_on_a_write() -> None:
    with BusEmulator("so101") as emulator:
        servos = emulator.servos
        _settle(emulator)
        assert emulator.asleep()
        position = emulator.report().position
        ticks = servos.tick_count
        emulator.skip(500)
        _settle(emulator, 100)
        assert servos.tick_count == ticks + 600  # time passes ...
        assert emulator.report().position == position  # ... and nothing moves
        torque_enable = servos.models[0].table["torque_enable"].address
        servos.write_memory(0, torque_enable, b"\x01")  # a host's write wakes it
        assert not emulator.asleep()
        emulator.move(np.array(position) + 0.0)
        assert not emulator.asleep()
        _settle(emulator, REST_TICKS + 50)
        assert emulator.asleep()  # held still by its servos, it sleeps again
        emulator.inject(1, 0x20)  # a fault (torque off): awake, the arm may fall
        assert not emulator.asleep()


def test_a_lockstep_bus_never_sleeps() -> None:
    with BusEmulator("so101", lockstep=True) as emulator:
        _settle(emulator)
        assert not emulator.asleep()


def test_a_real_time_bus_starts_with_its_limp_arm_at_rest() -> None:
    for robot in ("so101", "koch"):
        with BusEmulator(robot) as emulator:
            assert emulator.servos.tick_count == 0  # the settling is before time starts
            start = np.array(emulator.report().position)
            _settle(emulator, 300)  # what a host connecting in real time would see
            moved = np.abs(np.array(emulator.report().position) - start).max()
            assert moved < 1e-3, (robot, moved)  # not falling: under a servo's encoder tick
