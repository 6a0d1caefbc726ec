"""BatchStepper: robots stepped together are bit-identical to robots stepped alone."""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import one_joint

from jointlab.errors import ConfigurationError
from jointlab.interface import ActuatorState, NJointAction
from jointlab.sim import SensorModel, SimRobot
from jointlab.sim.batch import BatchStepper


def _pairs(name, count, **kwargs):
    together = [SimRobot(name, control_dt=0.005, **kwargs) for _ in range(count)]
    alone = [SimRobot(name, control_dt=0.005, **kwargs) for _ in range(count)]
    return together, alone


def _step_and_compare(stepper, together, alone):
    """One period of ``stepper`` and of each robot alone; their states must be equal."""
    result = stepper.step()
    for robot in alone:
        robot.step()
    for a, b in zip(together, alone, strict=True):
        assert a.read() == b.read()
    return result


@pytest.mark.parametrize("name", ["arm6", "planar2"])  # DC motors and friction; ideal motors
def test_batched_steps_equal_single_steps_bit_for_bit(name, engine):
    together, alone = _pairs(name, 3, engine=engine)
    stepper = BatchStepper(together)
    assert stepper.batchable()
    rng = np.random.default_rng(1)
    try:
        alone[2].disarm()  # a robot whose drive is off, beside driven ones
        together[2].disarm()
        for _ in range(12):
            dof = together[0].dof
            for i in range(2):
                action = NJointAction.Position(
                    together[i].description.home + 0.3 * rng.standard_normal(dof)
                )
                together[i].apply(action)
                alone[i].apply(action)
            # States read before a step, their fields derived only after it: the batched
            # law writes its arrays in place, but never those a previous period left
            held = [robot.read() for robot in together + alone]
            stepper.step()
            for robot in alone:
                robot.step()
            for a, b in zip(together, alone, strict=True):
                assert a.read() == b.read()
                assert a.time == b.time
            assert held[:3] == held[3:]
            torque = stepper.torque
            np.testing.assert_array_equal(torque, [robot.read().torque for robot in alone])
            assert not torque.flags.writeable
    finally:
        for robot in together + alone:
            robot.close()


def test_stall_timers_run_as_on_robots_stepped_alone():
    """Joints pushed into their stops stall, are released and stall again, as when alone."""
    description = one_joint(min=-0.1, max=0.1, limits={"effort": 2.0})

    def robots():
        return [SimRobot(description, stall_time=0.2, control_dt=0.01) for _ in range(3)]

    together, alone = robots(), robots()
    stepper = BatchStepper(together)
    assert stepper.batchable()
    # period -> targets of the three robots: 0 and 2 push into the stop, 1 moves freely;
    # 2 is released at period 30 and pushed again at 35 (its timer restarts from zero)
    plan = {0: [1.0, 0.05, 1.0], 30: [1.0, 0.05, 0.0], 35: [1.0, 0.05, 1.0]}
    stalled = []
    try:
        for period in range(70):
            for column, pair in enumerate(zip(together, alone, strict=True)):
                for robot in pair if period in plan else ():
                    robot.apply(NJointAction.Position([plan[period][column]]))
            _step_and_compare(stepper, together, alone)
            stalled.append(
                [bool(r.read().actuator_state[0] & ActuatorState.STALLED) for r in together]
            )
    finally:
        for robot in together + alone:
            robot.close()
    # each robot's report, period by period: 0 stalls after 0.2 s and stays stalled; 1 never;
    # 2 as 0 until released at 30, then again 0.2 s after the push at 35
    first = stalled.index([True, False, True])
    assert 19 <= first <= 22
    assert not any(row[1] for row in stalled)
    assert stalled[32] == [True, False, False]
    assert stalled[45] == [True, False, False] and stalled[69] == [True, False, True]


def test_robots_with_a_sensor_model_are_stepped_together_and_read_as_alone():
    """The law runs batched; each robot then draws its own sensor noise, as when alone."""
    sensors = SensorModel(velocity_noise=0.01)
    together, alone = (
        [SimRobot("arm6", control_dt=0.005, sensors=sensors, seed=i) for i in range(2)]
        for _ in range(2)
    )
    stepper = BatchStepper(together)
    assert stepper.batchable()
    rng = np.random.default_rng(3)
    try:
        for _ in range(6):
            for i in range(2):
                action = NJointAction.Position(
                    together[i].description.home + 0.3 * rng.standard_normal(6)
                )
                together[i].apply(action)
                alone[i].apply(action)
            assert _step_and_compare(stepper, together, alone) is None  # nothing stacked
    finally:
        for robot in together + alone:
            robot.close()


def test_robots_it_cannot_batch_are_stepped_one_by_one(engine):
    together, alone = _pairs("arm6", 2, engine=engine)
    stepper = BatchStepper(together)
    try:
        together[0].apply_external_force("base", [0.0, 0.0, 1.0], duration=0.01)
        alone[0].apply_external_force("base", [0.0, 0.0, 1.0], duration=0.01)
        assert not stepper.batchable()
        _step_and_compare(stepper, together, alone)
        assert stepper.torque is None  # stepped one by one: no stacked torques
    finally:
        for robot in together + alone:
            robot.close()


def test_robots_must_share_description_and_periods():
    with SimRobot("arm6") as a, SimRobot("planar2") as b, SimRobot("arm6", control_dt=0.002) as c:
        with pytest.raises(ConfigurationError, match="one description"):
            BatchStepper([a, b])
        with pytest.raises(ConfigurationError, match="control_dt"):
            BatchStepper([a, c])
    with pytest.raises(ConfigurationError, match="at least one"):
        BatchStepper([])


class _StepCounter:
    """A RobotListener that counts steps and keeps the state each step left."""

    def __init__(self):
        self.states = []

    def on_step(self, robot):
        self.states.append(robot.read())

    def on_refusal(self, robot, verb, reason):
        pass


@pytest.mark.parametrize("sensors", [None, SensorModel(position_noise=1e-4)])
def test_listeners_are_told_of_batched_steps_as_of_single_ones(sensors, engine):
    """One step path: a listener (the live view, a recorder) sees a batched step too."""
    together, alone = _pairs("planar2", 2, engine=engine, sensors=sensors, seed=3)
    counters = [_StepCounter() for _ in range(4)]
    for robot, counter in zip(together + alone, counters, strict=True):
        robot.listen(counter)
    stepper = BatchStepper(together)
    try:
        for _ in range(3):
            stepper.step()
            for robot in alone:
                robot.step()
        for batched, single in zip(counters[:2], counters[2:], strict=True):
            assert len(batched.states) == len(single.states) == 3
            assert batched.states == single.states
    finally:
        for robot in together + alone:
            robot.close()
