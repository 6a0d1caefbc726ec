"""Each Commander verb moves the simulated robot as specified."""

import numpy as np
import pytest

from jointlab.controllers import Commander, CommandStatus, from_milliseconds, run
from jointlab.errors import ConfigurationError
from jointlab.robots.dynamics import DynamicsModel
from jointlab.sim.pybullet.dynamics import BulletDynamics


def drive(robot, commander, handle, seconds=5.0):
    """Tick until ``handle`` is done; return the states seen, shape (ticks,)."""
    states = []
    for _ in range(int(seconds / robot.control_dt)):
        commander.update()
        if handle.done:
            break
        robot.step()
        states.append(robot.read())
    assert handle.done, handle
    return states


def test_set_position_reaches_target_within_configured_speed(gantry):
    commander = Commander(gantry)
    handle = commander.set_position("x", 0.6)
    states = drive(gantry, commander, handle)
    assert handle.status is CommandStatus.SUCCEEDED
    assert abs(gantry.read().position[0] - 0.6) < 1e-3
    speed = max(abs(s.velocity[0]) for s in states)
    config_speed = gantry.description.config_speed[0]
    assert 0.9 * config_speed < speed <= 1.05 * config_speed
    elapsed = states[-1].time
    assert elapsed >= 0.2 / config_speed  # no faster than the configured speed allows


def test_configure_speed_and_accel_slow_the_next_move(gantry):
    commander = Commander(gantry)
    assert commander.configure_speed("y", 0.1).status is CommandStatus.SUCCEEDED
    commander.configure_accel("y", 1.0)
    assert commander.geometry().actuators[1].config_speed == pytest.approx(0.1)
    handle = commander.set_position(1, 0.35)
    states = drive(gantry, commander, handle)
    assert max(abs(s.velocity[1]) for s in states) <= 0.1 * 1.05
    assert abs(gantry.read().position[1] - 0.35) < 1e-3


def test_set_position_velocity_hint(gantry):
    commander = Commander(gantry)
    handle = commander.set_position("x", 0.5, velocity=0.1)
    states = drive(gantry, commander, handle)
    assert max(abs(s.velocity[0]) for s in states) <= 0.1 * 1.05
    assert handle.events[1].data["target_position"] == [pytest.approx(0.5)]


def test_set_positions_moves_arm6_joints_together(arm):
    commander = Commander(arm)
    home = arm.description.home
    target = np.r_[home[:3] + np.array([0.3, -0.2, 0.25]), np.nan, home[4] + 0.2, np.nan]
    handle = commander.set_positions(target)
    drive(arm, commander, handle)
    assert handle.succeeded
    reached = arm.read().position
    moved = ~np.isnan(target)
    np.testing.assert_allclose(reached[moved], target[moved], atol=1e-3)
    assert handle.joints == (0, 1, 2, 4)


def test_home_all_joints(gantry):
    gantry.reset(q=[0.6, 0.45, -0.3])
    commander = Commander(gantry)
    handle = commander.home(-1)
    assert handle.joints == (0, 1, 2)
    drive(gantry, commander, handle)
    np.testing.assert_allclose(gantry.read().position, gantry.description.home, atol=1e-3)


def test_home_one_joint_leaves_the_others(gantry):
    gantry.reset(q=[0.6, 0.45, -0.3])
    commander = Commander(gantry)
    drive(gantry, commander, commander.home("y"))
    np.testing.assert_allclose(gantry.read().position, [0.6, 0.3, -0.3], atol=1e-3)


def test_set_velocity_with_duration_stops_after_it(gantry):
    commander = Commander(gantry)
    handle = commander.set_velocity("y", 0.2, duration=0.5)
    states = drive(gantry, commander, handle)
    times = np.array([s.time for s in states])
    velocity = np.array([s.velocity[1] for s in states])
    cruising = (times > 0.25) & (times < 0.5)
    np.testing.assert_allclose(velocity[cruising], 0.2, atol=0.01)
    assert np.all(np.abs(velocity[times > 0.5 + 0.3]) < 0.02)  # stopped after the duration
    assert abs(gantry.read().velocity[1]) < 0.02
    assert 0.3 + 0.2 * 0.45 < gantry.read().position[1] < 0.3 + 0.2 * 0.6


def test_set_velocity_without_duration_stops_on_the_soft_limit(gantry):
    commander = Commander(gantry)
    handle = commander.set_velocity("x", -0.5)
    drive(gantry, commander, handle)
    clamped = [e for e in handle.events if e.kind.value == "clamped"]
    assert clamped and "soft limit" in clamped[0].message
    assert gantry.read().position[0] == pytest.approx(gantry.description.soft_lower[0], abs=1e-3)


def test_set_velocities_moves_every_joint(gantry):
    commander = Commander(gantry)
    handle = commander.set_velocities([0.1, -0.1, 0.05], duration=0.3)
    drive(gantry, commander, handle)
    moved = gantry.read().position - gantry.description.home
    assert np.all(np.sign(moved) == [1, -1, 1]) and np.all(np.abs(moved) > 0.01)


def test_set_effort_for_a_duration_then_holds(gantry):
    commander = Commander(gantry)
    handle = commander.set_effort("x", 40.0, duration=0.3)
    commander.update()
    gantry.step()
    assert gantry.read().torque[0] == pytest.approx(40.0)
    drive(gantry, commander, handle)
    assert gantry.read().position[0] > gantry.description.home[0] + 0.01
    assert handle.succeeded
    run(gantry, commander, duration=0.5)
    assert abs(gantry.read().velocity[0]) < 0.02  # held after the effort


def test_set_current_uses_the_motor_model(gantry):
    motor = gantry.description.joints[1].motor
    commander = Commander(gantry)
    handle = commander.set_current("y", 50.0)
    assert handle.open_ended
    commander.update()
    gantry.step()
    expected = 50.0 * motor.torque_constant * motor.gear_ratio
    assert gantry.read().torque[1] == pytest.approx(expected)
    commander.set_currents([0.0, 0.0, np.nan])
    commander.update()
    gantry.step()
    assert gantry.read().torque[1] == pytest.approx(0.0, abs=1e-9)


def test_hold_keeps_the_position_until_replaced(gantry):
    commander = Commander(gantry)
    handle = commander.hold()
    with pytest.raises(ConfigurationError, match="timeout"):
        commander.wait(handle)
    assert commander.wait(handle, timeout=0.3) is False  # still holding
    np.testing.assert_allclose(gantry.read().position, gantry.description.home, atol=1e-3)
    move = commander.set_position("x", 0.5)
    assert handle.status is CommandStatus.ACTIVE  # still holds y and z
    assert handle.events[-1].kind.value == "preempted" and handle.events[-1].joints == (0,)
    assert handle.events[-1].data["by"] == move.command_id
    commander.stop()
    assert handle.status is CommandStatus.PREEMPTED and move.status is CommandStatus.PREEMPTED


def test_stop_immediate_halts_a_move(gantry):
    commander = Commander(gantry)
    move = commander.set_position("x", 0.8)
    run(gantry, commander, duration=0.5)
    stop = commander.stop()
    assert move.status is CommandStatus.PREEMPTED
    assert commander.wait(stop, timeout=2.0)
    where = gantry.read().position[0]
    run(gantry, commander, duration=0.3)
    assert gantry.read().position[0] == pytest.approx(where, abs=1e-3)
    assert where < 0.75


def test_stop_decelerate_never_exceeds_the_acceleration_limit(gantry):
    commander = Commander(gantry)
    commander.set_velocity("x", 0.5)
    run(gantry, commander, duration=0.4)
    stop = commander.stop("decelerate")
    references = []
    while not stop.done:
        commander.update()
        references.append(commander.last_desired.velocity[0])
        gantry.step()
    dt = gantry.control_dt
    accel = np.abs(np.diff(references)) / dt
    assert accel.max() <= gantry.description.soft_acceleration_limit[0] * (1 + 1e-6)
    assert abs(gantry.read().velocity[0]) < 0.02
    assert stop.succeeded


def test_trajectory_tracks_within_a_hundredth_at_default_gains(gantry):
    commander = Commander(gantry)
    home = gantry.description.home
    waypoints = [
        {"position": home + np.array([0.15, 0.05, -0.05]), "time_from_start": 0.4},
        {"position": home - np.array([0.1, 0.05, 0.05]), "time_from_start": 0.9},
        {"position": home, "time_from_start": 1.2},
    ]
    handle = commander.follow_trajectory(waypoints)
    summary = run(gantry, commander)
    assert summary.stopped_by == "idle" and handle.succeeded
    assert summary.rms_tracking_error < 0.01
    np.testing.assert_allclose(gantry.read().position, home, atol=1e-3)


def test_trajectory_on_arm6_tracks_with_gravity(arm):
    commander = Commander(arm)
    home = arm.description.home
    waypoints = from_milliseconds(
        [
            {"position": home[:3] + np.array([0.3, 0.2, -0.3]), "time_from_start": 600},
            {"position": home[:3] - 0.2, "time_from_start": 1300},
            {"position": home[:3], "time_from_start": 1800},
        ]
    )
    handle = commander.follow_trajectory(waypoints, joints=["shoulder_pan", 1, "elbow"])
    errors = []
    while not handle.done:
        state = arm.read()
        action = commander.compute(state)
        arm.apply(action)
        arm.step()
        errors.append(action.position[:3] - state.position[:3])
    assert handle.succeeded
    assert np.sqrt(np.mean(np.square(errors))) < 0.01


def test_repeat_three_repeats(gantry):
    commander = Commander(gantry)
    x0 = gantry.description.home[0]
    waypoints = [
        {"position": x0 + 0.1, "time_from_start": 0.25},
        {"position": x0, "time_from_start": 0.5},
    ]
    handle = commander.follow_trajectory(waypoints, joints="x", repeat=3)
    states = drive(gantry, commander, handle)
    x = np.array([s.position[0] for s in states])
    above = x > x0 + 0.05
    passes = int(np.sum(above[1:] & ~above[:-1]))
    assert passes == 3
    assert states[-1].time == pytest.approx(1.5, abs=0.1)


def test_automatically_timed_trajectory_passes_every_waypoint(gantry):
    commander = Commander(gantry)
    home = gantry.description.home
    points = home + np.array([[0.1, 0.0, 0.0], [0.1, 0.1, 0.0], [0.0, 0.1, -0.05]])
    handle = commander.follow_trajectory([{"position": p} for p in points])
    states = drive(gantry, commander, handle)
    trace = np.array([s.position for s in states])
    for point in points:
        assert np.min(np.linalg.norm(trace - point, axis=1)) < 5e-3
    np.testing.assert_allclose(gantry.read().position, points[-1], atol=1e-3)


def test_dependent_joints_follow_their_leaders(gripper):
    description = gripper.description
    dependent = description.dependent
    commander = Commander(gripper)
    target = description.home.copy()
    target[1] = 0.025  # left_finger leads right_finger
    target[dependent] = np.nan
    handle = commander.set_positions(target)
    assert commander.wait(handle, timeout=3.0) and handle.joints == (0, 1)
    assert np.isnan(commander.last_desired.position[dependent]).all()
    expected = description.apply_coupling(np.nan_to_num(target))  # dependent from the leader
    np.testing.assert_allclose(gripper.read().position, expected, atol=1e-3)


class _CallLog:
    """Delegates to a DynamicsModel and records, per control tick, which parts it computed."""

    def __init__(self, model):
        self.model = model
        self.ticks = []

    def __getattr__(self, name):
        attribute = getattr(self.model, name)
        if not callable(attribute):
            return attribute

        def call(*args):
            result = attribute(*args)
            self.ticks[-1].append(
                (name, result)
                if name != "rigid_torque_at_rest"
                else (name, tuple(np.array(a) for a in args), result)
            )
            return result

        return call


def _model_calls(robot, ticks, **options):
    """The DynamicsModel calls of each of ``ticks`` Commander ticks toward home + 0.3 rad."""
    commander = Commander(
        robot, model_feedforward=True, dynamics=DynamicsModel(robot.description), **options
    )
    log = commander.dynamics = _CallLog(commander.dynamics)
    commander.set_positions(np.array(robot.description.home) + 0.3)
    for _ in range(ticks):
        log.ticks.append([])
        commander.update()
        robot.step()
    return [[name for name, _ in tick] for tick in log.ticks]


def test_model_feedforward_refreshes_the_inertia_every_period_at_that_ticks_position(arm):
    commander = Commander(
        arm, model_feedforward=True, inertia_period=0.01, dynamics=DynamicsModel(arm.description)
    )
    model = commander.dynamics
    log = commander.dynamics = _CallLog(model)
    handle = commander.set_positions(np.array(arm.description.home) + 0.3)
    positions = []
    for _ in range(40):
        log.ticks.append([])
        positions.append(arm.read().position)
        commander.update()
        arm.step()
    assert not handle.done
    names = [[name for name, _ in tick] for tick in log.ticks]
    refresh_ticks = [i for i, tick in enumerate(names) if tick == ["gravity_and_mass_matrix"]]
    # the first tick, then every inertia_period: 10 ticks of 1 ms (11 where the float sum of
    # times falls short); gravity alone on every other tick
    gaps = np.diff(refresh_ticks)
    assert refresh_ticks[0] == 0 and len(refresh_ticks) == 4, refresh_ticks
    assert ((gaps == 10) | (gaps == 11)).all(), refresh_ticks
    assert all(tick == ["gravity_torque"] for i, tick in enumerate(names) if i not in refresh_ticks)
    for i in refresh_ticks:
        gravity, mass = log.ticks[i][0][1]
        np.testing.assert_array_equal(mass, model.mass_matrix(positions[i]))
        np.testing.assert_array_equal(gravity, model.gravity_torque(positions[i]))


def test_model_feedforward_refreshes_the_inertia_every_tick_with_a_zero_period(arm):
    names = _model_calls(arm, 5, inertia_period=0.0)
    assert names == [["gravity_and_mass_matrix"]] * 5


def test_model_feedforward_refreshes_every_period_on_slower_ticks():
    sim = pytest.importorskip("jointlab.sim")
    with sim.SimRobot("arm6", dt=0.001, control_dt=0.005, seed=0) as robot:
        names = _model_calls(robot, 9, inertia_period=0.02)
    assert names[0::4] == [["gravity_and_mass_matrix"]] * 3  # every 4 ticks of 5 ms
    assert all(tick == ["gravity_torque"] for i, tick in enumerate(names) if i % 4)


def test_model_feedforward_refreshes_at_once_after_the_robot_is_reset(arm):
    commander = Commander(
        arm, model_feedforward=True, inertia_period=0.01, dynamics=DynamicsModel(arm.description)
    )
    log = commander.dynamics = _CallLog(commander.dynamics)
    commander.set_positions(np.array(arm.description.home) + 0.3)
    for _ in range(11):  # the last refresh was on tick 10
        log.ticks.append([])
        commander.update()
        arm.step()
    arm.reset(np.array(arm.description.home) - 0.2)  # time back to 0, q jumps
    for _ in range(4):
        log.ticks.append([])
        commander.update()
        arm.step()
    names = [[name for name, _ in tick] for tick in log.ticks[-4:]]
    assert names[0] == ["gravity_and_mass_matrix"]  # at once, at the new q
    assert names[1:] == [["gravity_torque"]] * 3


def test_bullet_models_feedforward_is_one_inverse_dynamics_at_every_ticks_position(arm):
    """g(q) + M(q)·q̈_ref at each tick's own q (no period), plus the viscous term."""
    commander = Commander(arm, model_feedforward=True, inertia_period=0.5)
    model = commander.dynamics
    assert isinstance(model, BulletDynamics)
    log = commander.dynamics = _CallLog(model)
    commander.set_positions(np.array(arm.description.home) + 0.3)
    damping = np.asarray(arm.description.damping)
    peak = 0.0
    for _ in range(30):
        log.ticks.append([])
        state = arm.read()
        action = commander.update()
        arm.step()
        ((name, (q, acceleration), _),) = log.ticks[-1]
        assert name == "rigid_torque_at_rest"
        np.testing.assert_array_equal(q, state.position)
        peak = max(peak, np.abs(acceleration).max())
        gravity, mass = model.gravity_and_mass_matrix(state.position)  # armature included
        expected = gravity + mass @ acceleration + damping * action.velocity  # v: the reference
        np.testing.assert_allclose(action.torque, expected, rtol=1e-9, atol=1e-12)
    assert peak > 1.0  # rad/s²: the move's jerk-limited start, from 0


def test_a_servo_arm_reaches_its_targets_within_its_friction_deadband():
    """koch's shoulder servos stop within static_friction / kp (3.9 mrad) of a goal.

    Two encoder ticks (3.1 mrad) were the reach tolerance, so every such move ended
    ``stalled``; the tolerance now covers the deadband plus a tick.
    """
    sim = pytest.importorskip("jointlab.sim")
    with sim.SimRobot("koch", control_dt=0.005) as robot:
        robot.arm()
        commander = Commander(robot)
        d = robot.description
        deadband = d.static_friction[1] / d.default_kp[1]
        tick = robot.position_resolution[1]
        assert commander.tolerances.position == pytest.approx(deadband + tick)
        target = d.home[1] - 0.2  # up, away from the table
        handle = commander.set_position(1, target)
        assert commander.wait(handle, timeout=5)
        assert handle.status is CommandStatus.SUCCEEDED
        error = abs(robot.read().position[1] - target)
        assert 2 * tick < error <= deadband + tick  # stopped in the deadband, beyond 2 ticks


def test_a_model_assigned_while_running_drives_the_feedforward_from_the_next_tick(arm):
    """Bullet's model, then the numpy one (M at once, then every period), then Bullet's."""
    commander = Commander(arm, model_feedforward=True, inertia_period=0.005)
    bullet = commander.dynamics
    commander.set_positions(np.array(arm.description.home) + 0.3)
    calls = []
    for model in (bullet, DynamicsModel(arm.description), bullet):
        log = commander.dynamics = _CallLog(model)
        for _ in range(8):
            log.ticks.append([])
            commander.update()
            arm.step()
        calls.append([[name for name, *_ in tick] for tick in log.ticks])
    assert calls[0] == calls[2] == [["rigid_torque_at_rest"]] * 8
    refreshes = [i for i, tick in enumerate(calls[1]) if tick == ["gravity_and_mass_matrix"]]
    assert refreshes[:2] in ([0, 5], [0, 6])  # 5 ms of 1 ms ticks (6 where the sum rounds)
    assert all(tick == ["gravity_torque"] for i, tick in enumerate(calls[1]) if i not in refreshes)
