"""Devices with planted actuator gaps: what identification is tested (and demonstrated) on.

:func:`plant` returns a copy of a robot description whose actuators differ from it by known
amounts (friction, damping, reflected inertia, latency, torque constant, saturation).
:func:`connect_planted` runs that planted robot as the "device" while the host, its
controllers and its logs see only the nominal description, as with a real robot whose
file is wrong:

* ``backend="sim"``: a :class:`~jointlab.sim.SimRobot` of the planted robot behind a
  :class:`NominalView` (deterministic: the same run gives the same log, bit for bit);
* ``backend="emulated"``: the device emulator runs the planted robot in its own process and a
  :class:`~jointlab.hardware.SerialRobot` talks to it over a pseudo-terminal with the
  nominal description (in lockstep, virtual time, where the emulator offers it; else in
  real time, like a device).

This module is the one place that knows how to start such a device; everything else in
:mod:`jointlab.identify` goes through the :class:`~jointlab.contract.Robot` interface.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError
from jointlab.robots import ArrayGeometry, RobotDescription, load_robot
from jointlab.robots.schema import description_from_dict
from jointlab.robots.serialize import description_to_dict

__all__ = ["NominalView", "connect_planted", "physics_dt", "plant"]


def _per_joint(name: str, value: float | Sequence[float], dof: int) -> np.ndarray:
    array = np.broadcast_to(np.asarray(value, dtype=np.float64), (dof,)).copy()
    if not np.all(np.isfinite(array)):
        raise ConfigurationError(f"plant: {name} must be finite, got {value!r}")
    return array


def plant(
    description: RobotDescription | str,
    *,
    static_friction: float | Sequence[float] = 1.0,
    damping: float | Sequence[float] = 1.0,
    armature: float | Sequence[float] = 0.0,
    delay: int | Sequence[int] = 0,
    torque_constant: float | Sequence[float] = 1.0,
    effort: float | Sequence[float] = 1.0,
) -> RobotDescription:
    """A copy of ``description`` with planted actuator gaps (scalars or one value per joint).

    Args:
        description: The nominal robot.
        static_friction: Factor on ``dynamics.static_friction`` (Coulomb, N·m or N).
        damping: Factor on ``dynamics.damping`` (viscous, N·m·s/rad or N·s/m).
        armature: Reflected inertia added to ``dynamics.armature``, kg·m² (kg for linear).
        delay: Physics steps added to ``motor.delay``.
        torque_constant: Factor on ``motor.torque_constant`` (N·m/A).
        effort: Factor on ``limits.effort`` (saturation, N·m or N).

    Returns:
        The planted description, validated like a robot file (dependent joints unchanged).

    Raises:
        ConfigurationError: a factor is not positive, a delay is not a whole number >= 0 or
            an armature is negative.
    """
    description = load_robot(description)
    dof = description.dof
    scales = {
        "static_friction": _per_joint("static_friction", static_friction, dof),
        "damping": _per_joint("damping", damping, dof),
        "torque_constant": _per_joint("torque_constant", torque_constant, dof),
        "effort": _per_joint("effort", effort, dof),
    }
    for name, array in scales.items():
        if np.any(array <= 0):
            raise ConfigurationError(f"plant: {name} factors must be > 0, got {array.tolist()}")
    extra_inertia = _per_joint("armature", armature, dof)
    if np.any(extra_inertia < 0):
        raise ConfigurationError(f"plant: armature must be >= 0, got {extra_inertia.tolist()}")
    steps = np.broadcast_to(np.asarray(delay), (dof,))
    if not np.all((steps >= 0) & (np.mod(steps, 1) == 0)):
        raise ConfigurationError(f"plant: delay must be whole physics steps >= 0, got {delay!r}")
    data = description_to_dict(description)
    joint_index = {name: i for i, name in enumerate(description.joint_names)}
    for entry in data["actuators"]:
        i = joint_index.get(entry["name"])
        if i is None or description.dependent[i]:
            continue
        dynamics, motor, limits = entry["dynamics"], entry["motor"], entry["limits"]
        dynamics["static_friction"] *= float(scales["static_friction"][i])
        dynamics["damping"] *= float(scales["damping"][i])
        if extra_inertia[i] > 0:
            dynamics["armature"] = float(dynamics.get("armature", 0.0) + extra_inertia[i])
        motor["delay"] = int(motor.get("delay", 0)) + int(steps[i])
        motor["torque_constant"] *= float(scales["torque_constant"][i])
        limits["effort"] *= float(scales["effort"][i])
    data["name"] = description.name
    return description_from_dict(data, source=f"<{description.name} with planted gaps>")


class NominalView:
    """A robot presented under another description of the same joints.

    Everything is delegated to ``robot`` except :attr:`description`, which is ``nominal``:
    controllers, environments and recorders see the nominal robot, the physics are the
    wrapped robot's. A transparent proxy, registered as a :class:`~jointlab.contract.Robot`
    (``isinstance(view, Robot)`` holds) without re-implementing the backend's checks: every
    call reaches the wrapped robot as it is. Closing the view closes the robot.

    Raises:
        ConfigurationError: ``nominal`` has other joints than ``robot``.
    """

    def __init__(self, robot: Robot, nominal: RobotDescription | str) -> None:
        nominal = load_robot(nominal)
        if nominal.joint_names != robot.description.joint_names:
            raise ConfigurationError(
                f"NominalView: {nominal.name!r} has joints {list(nominal.joint_names)}, the "
                f"robot has {list(robot.description.joint_names)}"
            )
        self.robot = robot
        self._nominal = nominal

    @property
    def description(self) -> RobotDescription:
        """The nominal description."""
        return self._nominal

    @property
    def dof(self) -> int:
        """Number of joints."""
        return self._nominal.dof

    def geometry(self) -> ArrayGeometry:
        """The nominal geometry with the wrapped robot's configured speeds."""
        return self._nominal.geometry(config_speed=self.robot.config_speed)

    def __getattr__(self, name: str) -> Any:
        # read, apply, step, time, arm... and backend extras (dt, device) are the robot's.
        if name == "robot":
            raise AttributeError(name)
        return getattr(self.robot, name)

    def __enter__(self) -> NominalView:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.robot.close()

    def __repr__(self) -> str:
        return f"NominalView({self.robot!r}, {self._nominal.name!r})"


Robot.register(NominalView)


def connect_planted(
    planted: RobotDescription | str,
    nominal: RobotDescription | str,
    backend: str = "sim",
    **options: Any,
) -> Robot:
    """A device running ``planted`` that the host sees as ``nominal`` (module docstring).

    Args:
        planted: The robot the device really is (e.g. from :func:`plant`).
        nominal: The robot file the host believes in.
        backend: ``"sim"`` (deterministic) or ``"emulated"`` (the device emulator over the
            serial protocol; in lockstep, virtual time, where the emulator offers it).
        **options: ``SimRobot`` keywords for ``"sim"`` (``dt``, ``control_dt``, ``seed``,
            ``sensors``...); ``SerialRobot`` keywords for ``"emulated"``.

    Returns:
        A :class:`~jointlab.contract.Robot` whose ``description`` is ``nominal``. A
        simulated one starts armed; an emulated one starts disarmed, like a device.
    """
    planted, nominal = load_robot(planted), load_robot(nominal)
    if backend == "sim":
        from jointlab.sim import SimRobot

        return NominalView(SimRobot(planted, **options), nominal)
    if backend == "emulated":
        from jointlab.hardware import EmulatorProcess, SerialRobot

        device: dict[str, Any] = {}
        accepted = inspect.signature(SerialRobot).parameters
        if "lockstep" in accepted:  # virtual device time: the same run gives the same log
            options.setdefault("lockstep", True)
            device["lockstep"] = options["lockstep"]
        elif "dead_periods" in accepted:  # a real-time link: survive a busy host
            options.setdefault("dead_periods", 2000)
        emulator = EmulatorProcess(planted, **device)
        try:
            return SerialRobot(
                emulator.path,
                nominal,
                allow_digest_mismatch=True,
                on_close=emulator.close,
                **options,
            )
        except BaseException:
            emulator.close()
            raise
    raise ConfigurationError(
        f"connect_planted: backend must be 'sim' or 'emulated', got {backend!r}"
    )


def physics_dt(robot: Robot) -> float:
    """The physics step (simulation) or device tick (hardware) of ``robot``, seconds.

    ``motor.delay`` counts these. Falls back to the control period when the backend does
    not say.
    """
    dt = getattr(robot, "dt", None)
    if isinstance(dt, float) and dt > 0:
        return dt
    device = getattr(robot, "device", None)
    rate = getattr(device, "rate_hz", None)
    if isinstance(rate, int) and rate > 0:
        return 1.0 / rate
    return float(robot.control_dt)
