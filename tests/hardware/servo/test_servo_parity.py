"""The same Commander program on sim://ARM and on the arm's emulated servo bus (lockstep).

The emulated servos run their own position loop (their gain registers through the documented
scaling) on the simulator's joints, the bus carries quantised ticks: the two backends differ by
that quantisation and by one bus period of delay, not by behaviour. Differences that are part
of the design are tested as such in test_servo_robot.py (no brakes, reset is a move, zero holds).
"""

from __future__ import annotations

import numpy as np
import pytest

import jointlab
from jointlab.program import ProgramStep, demo_program, run_program


def program(robot) -> list:
    """The demo program's trajectory (timed within the limits), then a short hold."""
    trajectory = demo_program(robot)[1]
    assert trajectory.verb == "follow_trajectory"
    return [trajectory, ProgramStep("hold", {}, duration=0.1)]


def trace(url: str) -> tuple[np.ndarray, float]:
    with jointlab.connect(url) as robot:
        results = run_program(robot, program(robot))
        final = robot.read().position.copy()
    return final, max(r.summary.max_tracking_error for r in results)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["so101", "koch"])
def test_the_demo_program_runs_alike_on_sim_and_on_the_emulated_bus(name, datasheet_arm) -> None:
    robot_file = datasheet_arm(name)  # datasheet servos: the simulator has no servo play
    sim_final, sim_error = trace(f"sim://{robot_file}?control_dt=0.005")
    bus_final, bus_error = trace(f"emulated://{robot_file}?lockstep=1")
    # Measured: within 2 mrad of each other (encoder ticks are 1.5 mrad).
    np.testing.assert_allclose(bus_final, sim_final, atol=0.01)
    assert bus_error == pytest.approx(sim_error, rel=0.1, abs=0.005)


@pytest.mark.slow
def test_the_built_in_so101s_backlash_is_its_difference_from_sim() -> None:
    """The built-in SO-101's servos have 1° of play, which sim:// (no servo loop) has not:
    the demo program ends within that play of the simulator's, and no closer than a tick on
    every joint (the play is there)."""
    play = np.array([s.backlash for s in jointlab.load_robot("so101").bus.servos])
    sim_final, _ = trace("sim://so101?control_dt=0.005")
    bus_final, _ = trace("emulated://so101?lockstep=1")
    difference = np.abs(bus_final - sim_final)
    print(f"built-in so101, bus - sim at the end (mrad): {np.round(difference * 1e3, 2)}")
    assert np.all(difference <= play), difference
    assert difference.max() > 0.25 * play.max()


def test_lockstep_emulation_is_deterministic() -> None:
    def run() -> np.ndarray:
        with jointlab.connect("emulated://so101?lockstep=1") as robot:
            robot.arm()
            target = robot.description.home + np.array([0.3, -0.2, 0.2, 0.1, 0.5, 0.3])
            states = []
            for _ in range(40):
                robot.apply(jointlab.NJointAction.Position(target))
                robot.step()
                states.append(robot.read().position)
        return np.array(states)

    first, second = run(), run()
    np.testing.assert_array_equal(first, second)
    assert np.abs(first[-1] - first[0]).max() > 0.1  # it moved
