"""The ``dynamixel://`` and ``feetech://`` schemes, and ``emulated://`` for robots with a bus.

* ``dynamixel:///dev/ttyUSB0?robot=koch``, ``feetech:///dev/ttyACM0?robot=so101``: a
  :class:`~jointlab.hardware.servo_host.robot.ServoBusRobot`; servo ids, models and baud come from
  the robot file's ``bus`` section. Query keys: ``robot`` (required), ``baud``,
  ``calibration`` (a file; default: the one beside the robot file), ``control_dt``,
  ``retries``, ``watchdog_ms``, ``configure`` (write operating modes and return delay).
* ``emulated://so101`` (a robot with a ``bus`` section): starts a
  :class:`~jointlab.hardware.servo_emulator.emulator_process.BusEmulatorProcess` for the robot's bus
  and connects a ServoBusRobot to its pty (``bus=jointlab`` picks the JointLab device emulator
  instead). Keys: ``seed``, ``lockstep`` (1: deterministic virtual time), ``offset_error``
  (ticks: servos assembled with random offsets of up to that, seeded), ``calibrated`` (1, the
  default: a calibration matching the emulated assembly, as if ``jointlab calibrate`` had
  run; 0: none, or the file of ``calibration=``), ``baud`` (the host's line rate; the emulated
  servos keep the robot file's), ``control_dt``, ``retries``, ``watchdog_ms``, ``timeout_ms``
  (added to the SDK's status timeout; an emulated bus defaults to 500 ms and 4 retries,
  a real one to 0 ms and 2 retries), and the link and power faults and the supply of
  :mod:`.fault_urls` (``drop_status``, ``corrupt_status``, ``delay_ms``, ``unplug``,
  ``power_cut``, ``brownout``, ``supply``, ``supply_ohm``, ``ambient``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from jointlab.connection import query_bool, query_positive
from jointlab.errors import ConfigurationError
from jointlab.hardware.host.urls import merge_options
from jointlab.hardware.servo_emulator.emulator_process import BusEmulatorProcess
from jointlab.hardware.servo_host.calibration import Calibration, JointCalibration
from jointlab.hardware.servo_host.driver import check_sdk
from jointlab.hardware.servo_host.fault_urls import bus_ambient, bus_faults, bus_supply
from jointlab.hardware.servo_host.robot import ServoBusRobot
from jointlab.hardware.vendors import bus_models
from jointlab.robots import RobotDescription, load_robot

if TYPE_CHECKING:
    from jointlab.connection import RobotURL

#: Extra status-packet timeout of an emulated bus, ms: its servos are a process on a pty.
EMULATED_TIMEOUT_MS = 500.0
#: Retries of an emulated bus (its process may be descheduled on a shared machine).
EMULATED_RETRIES = 4

__all__ = [
    "EMULATED_TIMEOUT_MS",
    "EmulatedServoRobot",
    "connect_bus",
    "connect_emulated_bus",
    "emulated_calibration",
]


def _settings(url: RobotURL) -> dict[str, Any]:
    return {
        "baud": url.take("baud", int, None),
        "control_dt": url.take("control_dt", query_positive, None),
        "retries": url.take("retries", int, 2),
        "timeout_ms": url.take("timeout_ms", float, 0.0),
        "watchdog_ms": url.take("watchdog_ms", int, 100),
    }


def connect_bus(url: RobotURL, options: dict[str, Any]) -> ServoBusRobot:
    """Factory of ``dynamixel://`` and ``feetech://`` (see the module docstring)."""
    if not url.target:
        raise ConfigurationError(f"{url.url}: no port given; expected {url.scheme}:///dev/ttyUSB0")
    check_sdk(url.scheme, url.url)
    robot = url.take("robot", str, None)
    settings = _settings(url)
    settings["calibration"] = url.take("calibration", str, None)
    settings["configure"] = url.take("configure", query_bool, False)
    url.check_all_taken()
    if robot is None and "description" not in options:
        raise ConfigurationError(
            f"{url.url}: which robot? add ?robot=NAME_OR_PATH (its bus section names the servos)"
        )
    description = load_robot(options.pop("description", robot))
    if description.bus is None or description.bus.protocol.value != url.scheme:
        have = (
            "no bus section"
            if description.bus is None
            else f"a {description.bus.protocol.value} bus"
        )
        raise ConfigurationError(
            f"{url.url}: robot {description.name!r} has {have}, not a {url.scheme} bus"
        )
    return ServoBusRobot(url.target, description, **merge_options(url, settings, options))


def emulated_calibration(description: RobotDescription, offsets: np.ndarray) -> Calibration:
    """The calibration of an emulated arm assembled with ``offsets`` (ticks at joint zero).

    The range is the joint limits' ticks: what a perfect calibration would record.
    """
    t = description.transmissions.with_offsets(offsets)
    ends = np.sort(np.rint(t.to_motor(np.stack([description.lower, description.upper]))), axis=0)
    joints = tuple(
        JointCalibration(
            joint=s.joint,
            id=s.id,
            offset=float(offsets[i]),
            direction=int(np.sign(t.scale[i])),
            min_ticks=int(ends[0, i]),
            max_ticks=int(ends[1, i]),
        )
        for i, s in enumerate(description.bus.servos)  # type: ignore[union-attr]
    )
    return Calibration(
        robot=description.name,
        protocol=description.bus.protocol.value,  # type: ignore[union-attr]
        method="emulated",
        joints=joints,
        created=Calibration.now(),
    )


class EmulatedServoRobot(ServoBusRobot):
    """A :class:`ServoBusRobot` on an emulated bus it owns; ``close()`` stops the emulator.

    Args:
        emulator: A started :class:`BusEmulatorProcess` (faults via ``.emulator``).
        description: The robot the emulator runs.
        **options: :class:`ServoBusRobot` keyword arguments.
    """

    def __init__(self, emulator: BusEmulatorProcess, description: Any, **options: Any) -> None:
        #: The emulated bus (``set_faults``, ``inject``, ``move``, ``report``).
        self.emulator = emulator
        if emulator.lockstep:
            options.setdefault("advance", emulator.advance)
        super().__init__(emulator.path, description, on_close=emulator.close, **options)


def connect_emulated_bus(
    url: RobotURL, description: RobotDescription, options: dict[str, Any]
) -> EmulatedServoRobot:
    """``emulated://NAME`` for a robot with a ``bus`` section (see the module docstring)."""
    check_sdk(description.bus.protocol.value, url.url)  # type: ignore[union-attr]
    seed = url.take("seed", int, 0)
    lockstep = url.take("lockstep", query_bool, False)
    offset_error = url.take("offset_error", query_positive, 0.0)
    calibrated = url.take("calibrated", query_bool, True)
    calibration_file = url.take("calibration", str, None)
    _, models = bus_models(description)
    faults = bus_faults(url, list(description.bus.ids), seed)  # type: ignore[union-attr]
    supply = bus_supply(url, models)
    ambient = bus_ambient(url, models)
    settings = _settings(url)
    if "timeout_ms" not in url.query:  # a pty on a busy machine: be patient
        settings["timeout_ms"] = EMULATED_TIMEOUT_MS
    if "retries" not in url.query:
        settings["retries"] = EMULATED_RETRIES
    url.check_all_taken()
    offsets = np.array(description.transmissions.offset)
    if offset_error:
        rng = np.random.default_rng(seed)
        offsets = offsets + np.rint(rng.uniform(-offset_error, offset_error, description.dof))
    emulator_options = {"seed": seed, "lockstep": lockstep, "offsets": offsets}
    if faults is not None:
        emulator_options["faults"] = faults
    if supply is not None:
        emulator_options["supply"] = supply
    if ambient is not None:
        emulator_options["ambient"] = ambient
    for key in ("faults", "supply", "ambient"):
        if key in options:
            emulator_options[key] = options.pop(key)
    if calibration_file is not None:
        settings["calibration"] = calibration_file
    elif calibrated:
        settings["calibration"] = emulated_calibration(description, offsets)
    else:
        settings["calibration"] = False
    settings = merge_options(url, settings, options)
    emulator = BusEmulatorProcess(description, **emulator_options)
    try:
        return EmulatedServoRobot(emulator, description, **settings)
    except BaseException:
        emulator.close()
        raise
