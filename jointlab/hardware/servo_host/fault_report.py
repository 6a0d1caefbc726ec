"""A servo's fault as the error a user reads: which servo, which joint, which bit, the fix.

:func:`hardware_fault` turns a servo's hardware-error bits into a
:class:`~jointlab.errors.DeviceFault` naming the servo id, the joint, the model, each bit (by
its vendor's name), what to do about each, and how the servo clears it (a Dynamixel only with
a reboot, a Feetech when its torque is enabled again). :func:`lost_servo` and
:func:`stalled` do the same for a servo that stopped answering and for the host's stall
guard.
"""

from __future__ import annotations

from jointlab.errors import DeviceFault, DeviceLost
from jointlab.hardware.servo.control_table import ServoModel
from jointlab.hardware.servo.vendor import Vendor

__all__ = ["FIXES", "hardware_fault", "lost_servo", "stalled"]

#: Words of an error bit's name -> what to do about it.
FIXES = {
    "overload": "lower the load: a blocked joint, or a gripper squeezing an object (open it, "
    "lower its goal, or limit its current)",
    "overheat": "let the servo cool down with its torque off (minutes) until its Present "
    "Temperature is well below its Temperature Limit",
    "voltage": "check the power supply: under load its voltage must stay within the servo's "
    "Min/Max Voltage Limit (a weak supply or thin cables sag)",
    "current": "lower the load (the current passed the servo's Protection Current)",
}
#: For the other bits (encoder, angle sensor, electrical shock).
HARDWARE_FIX = (
    "check the servo and its wiring; if the error returns after a power cycle the servo is damaged"
)


def _recovery(vendor: Vendor, joint: str) -> str:
    if "shutdown" in next(iter(vendor.models.values())).table:
        return (
            f"then reboot it (robot.reboot({joint!r}) or a power cycle: only a reboot "
            "clears a Dynamixel's Hardware Error Status) and arm again"
        )
    return "then arm again (enabling its torque clears a Feetech servo's Status bits)"


def hardware_fault(
    vendor: Vendor, servo_id: int, joint: str, model: ServoModel, bits: int, stopped: bool = True
) -> DeviceFault:
    """The error of servo ``servo_id`` reporting hardware-error ``bits``.

    ``stopped``: the robot was armed and has just stopped (else it stays disarmed).
    """
    names = vendor.error_names(bits) or (f"error bits {bits:#04x}",)
    fixes = []
    for name in names:
        fix = next((f for word, f in FIXES.items() if word in name), HARDWARE_FIX)
        if fix not in fixes:
            fixes.append(fix)
    message = (
        f"servo id {servo_id} ({joint}, {model.name}) reports {' and '.join(names)} "
        f"(hardware error bits {bits:#04x}): "
        + (
            "it stopped, so the other joints were held and the robot disarmed"
            if stopped
            else "the robot stays disarmed"
        )
        + f". Fix: {'; '.join(fixes)}; {_recovery(vendor, joint)}"
    )
    return DeviceFault(
        message, joint=joint, device=f"servo id {servo_id}", reasons=names, bits=bits
    )


def lost_servo(servo_id: int | None, joint: str | None, cycles: int, cause: str) -> DeviceLost:
    """The error of a servo silent for ``cycles`` bus cycles (``cause``: the bus's message)."""
    who = f"servo id {servo_id} ({joint})" if servo_id is not None else "a servo"
    message = (
        f"{who} stopped answering for {cycles} bus cycle(s), so the other joints were held "
        f"and the robot disarmed: {cause}. Fix: check its cable and power (a servo that lost "
        "power comes back limp, with its torque off), then arm again"
    )
    return DeviceLost(
        message,
        joint=joint,
        device="" if servo_id is None else f"servo id {servo_id}",
        reasons=("no reply",),
    )


def stalled(
    servo_id: int, joint: str, seconds: float, current: float, error_deg: float
) -> DeviceFault:
    """The error of the host's stall guard tripping on ``joint``."""
    message = (
        f"stall protection: servo id {servo_id} ({joint}) pushed at {current:.2f} A for "
        f"{seconds:.2f} s while {error_deg:.1f} degrees from its goal, so every torque was "
        "turned off (the robot is disarmed). Fix: lower the goal into reach or the grip force "
        "(a gripper closed on an object), then arm again; set stall_protection= to change "
        "the thresholds"
    )
    return DeviceFault(message, joint=joint, device=f"servo id {servo_id}", reasons=("stall",))
