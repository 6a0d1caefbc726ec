"""ROBOTIS Dynamixel X-series control tables (Protocol 2.0): XL430-W250, XL330-M288, XL330-M077.

Addresses, sizes, access, initial values and units are the ROBOTIS e-Manual's control tables
(https://emanual.robotis.com/docs/en/dxl/x/xl430-w250/, .../xl330-m288/, .../xl330-m077/),
including Backup Ready and the Indirect Address/Data blocks; motor figures are the same pages'
specifications. ``tests/hardware/servo/test_control_tables_vs_vendor.py`` checks every register
of the published tables (address, size, access, initial value) against these, and
``tests/hardware/servo/test_tables.py`` every address and size against the ``.model`` files that
ROBOTIS ships inside the ``dynamixel-sdk`` package. One
:class:`~jointlab.hardware.servo.control_table.ServoModel` per model, in :data:`MODELS`.
"""

from __future__ import annotations

import math

from jointlab.hardware.servo.control_table import (
    Access,
    ControlTable,
    Encoding,
    Register,
    ServoModel,
)

__all__ = [
    "BAUD_RATES",
    "HARDWARE_ERROR_BITS",
    "MODELS",
    "XL330_M077",
    "XL330_M288",
    "XL430_W250",
]

R, RW, S = Access.READ, Access.READ_WRITE, Encoding.SIGNED
PULSE = 2.0 * math.pi / 4096  # rad per encoder pulse
RPM_UNIT = 0.229 * 2.0 * math.pi / 60.0  # rad/s per 0.229 rev/min
ACCEL_UNIT = 214.577 * 2.0 * math.pi / 3600.0  # rad/s² per 214.577 rev/min²

#: Baud Rate (8) register value -> line rate, bit/s (X series, e-Manual; factory setting 1).
#: The XL330 has values 0 to 6 (no 4.5 Mbit/s): :data:`XL330_BAUD_RATES`.
BAUD_RATES = {
    0: 9_600,
    1: 57_600,
    2: 115_200,
    3: 1_000_000,
    4: 2_000_000,
    5: 3_000_000,
    6: 4_000_000,
    7: 4_500_000,
}
XL330_BAUD_RATES = {code: rate for code, rate in BAUD_RATES.items() if code <= 6}

#: Hardware Error Status (70) bits, e-Manual "Hardware Error Status".
HARDWARE_ERROR_BITS = {
    0: "input voltage error",
    2: "overheating error",
    3: "motor encoder error",
    4: "electrical shock error",
    5: "overload error",
}


# fmt: off
def _limits(temperature: int, max_voltage: int, min_voltage: int, velocity: int, shutdown: int,
            current: bool) -> list[Register]:
    """The EEPROM limits: the same addresses on both models, other initial values.

    ``current`` adds the XL330's Current Limit and PWM Slope.
    """
    registers = [
        Register("temperature_limit", "Temperature Limit", 31, 1, RW, temperature, eeprom=True),
        Register("max_voltage_limit", "Max Voltage Limit", 32, 2, RW, max_voltage, unit=0.1,
                 unit_name="V", eeprom=True),
        Register("min_voltage_limit", "Min Voltage Limit", 34, 2, RW, min_voltage, unit=0.1,
                 unit_name="V", eeprom=True),
        Register("pwm_limit", "PWM Limit", 36, 2, RW, 885, eeprom=True),
        Register("velocity_limit", "Velocity Limit", 44, 4, RW, velocity, unit=RPM_UNIT,
                 unit_name="rad/s", eeprom=True),
        Register("shutdown", "Shutdown", 63, 1, RW, shutdown, eeprom=True),
    ]
    if current:
        registers += [
            Register("current_limit", "Current Limit", 38, 2, RW, 1750, unit=1e-3,
                     unit_name="A", eeprom=True),
            Register("pwm_slope", "PWM Slope", 62, 1, RW, 140, eeprom=True),
        ]
    return registers


def _indirect(blocks: list[tuple[int, int, int, int]]) -> list[Register]:
    """Indirect Address/Data registers of ``blocks``.

    Each block is ``(first number, count, address of its first Indirect Address, address of its
    first Indirect Data)``. Indirect Address ``i`` holds the address that Indirect Data ``i``
    reads and writes; initially Indirect Data ``i`` itself.
    """
    registers = []
    for first, count, address, data in blocks:
        for i in range(count):
            registers.append(Register(f"indirect_address_{first + i}",
                                      f"Indirect Address {first + i}", address + 2 * i, 2, RW,
                                      data + i))
            registers.append(Register(f"indirect_data_{first + i}", f"Indirect Data {first + i}",
                                      data + i, 1, RW, 0))
    return registers


def _table(gains: list[Register], load: Register, limits: list[Register], model_number: int,
           indirect: list[Register], position_i_gain: int = 0) -> ControlTable:
    """The X-series layout shared by the models, with their differing registers spliced in."""
    eeprom = [
        Register("model_number", "Model Number", 0, 2, R, model_number, eeprom=True),
        Register("model_information", "Model Information", 2, 4, R, eeprom=True),
        Register("firmware_version", "Firmware Version", 6, 1, R, 52, eeprom=True),
        Register("id", "ID", 7, 1, RW, 1, eeprom=True),
        Register("baud_rate", "Baud Rate", 8, 1, RW, 1, eeprom=True),
        Register("return_delay_time", "Return Delay Time", 9, 1, RW, 250, unit=2e-6,
                 unit_name="s", eeprom=True),
        Register("drive_mode", "Drive Mode", 10, 1, RW, 0, eeprom=True),
        Register("operating_mode", "Operating Mode", 11, 1, RW, 3, eeprom=True),
        Register("secondary_id", "Secondary(Shadow) ID", 12, 1, RW, 255, eeprom=True),
        Register("protocol_type", "Protocol Type", 13, 1, RW, 2, eeprom=True),
        Register("homing_offset", "Homing Offset", 20, 4, RW, 0, S, unit=PULSE, unit_name="rad",
                 eeprom=True),
        Register("moving_threshold", "Moving Threshold", 24, 4, RW, 10, unit=RPM_UNIT,
                 unit_name="rad/s", eeprom=True),
        *limits,
        Register("max_position_limit", "Max Position Limit", 48, 4, RW, 4095, unit=PULSE,
                 unit_name="rad", eeprom=True),
        Register("min_position_limit", "Min Position Limit", 52, 4, RW, 0, unit=PULSE,
                 unit_name="rad", eeprom=True),
        Register("startup_configuration", "Startup Configuration", 60, 1, RW, 0, eeprom=True),
    ]
    ram = [
        Register("torque_enable", "Torque Enable", 64, 1, RW, 0),
        Register("led", "LED", 65, 1, RW, 0),
        Register("status_return_level", "Status Return Level", 68, 1, RW, 2),
        Register("registered_instruction", "Registered Instruction", 69, 1, R, 0),
        Register("hardware_error_status", "Hardware Error Status", 70, 1, R, 0),
        *gains,
        Register("position_i_gain", "Position I Gain", 82, 2, RW, position_i_gain),
        Register("feedforward_2nd_gain", "Feedforward 2nd Gain", 88, 2, RW, 0),
        Register("feedforward_1st_gain", "Feedforward 1st Gain", 90, 2, RW, 0),
        Register("bus_watchdog", "Bus Watchdog", 98, 1, RW, 0, S, unit=0.02, unit_name="s"),
        Register("goal_pwm", "Goal PWM", 100, 2, RW, None, S, unit=1.0 / 885.0,
                 unit_name="duty"),
        Register("goal_velocity", "Goal Velocity", 104, 4, RW, 0, S, unit=RPM_UNIT,
                 unit_name="rad/s"),
        Register("profile_acceleration", "Profile Acceleration", 108, 4, RW, 0, unit=ACCEL_UNIT,
                 unit_name="rad/s²"),
        Register("profile_velocity", "Profile Velocity", 112, 4, RW, 0, unit=RPM_UNIT,
                 unit_name="rad/s"),
        Register("goal_position", "Goal Position", 116, 4, RW, None, S, unit=PULSE,
                 unit_name="rad"),
        Register("realtime_tick", "Realtime Tick", 120, 2, R, None, unit=1e-3, unit_name="s"),
        Register("moving", "Moving", 122, 1, R, 0),
        Register("moving_status", "Moving Status", 123, 1, R, 0),
        Register("present_pwm", "Present PWM", 124, 2, R, None, S, unit=1.0 / 885.0,
                 unit_name="duty"),
        load,
        Register("present_velocity", "Present Velocity", 128, 4, R, None, S, unit=RPM_UNIT,
                 unit_name="rad/s"),
        Register("present_position", "Present Position", 132, 4, R, None, S, unit=PULSE,
                 unit_name="rad"),
        Register("velocity_trajectory", "Velocity Trajectory", 136, 4, R, None, S,
                 unit=RPM_UNIT, unit_name="rad/s"),
        Register("position_trajectory", "Position Trajectory", 140, 4, R, None, S, unit=PULSE,
                 unit_name="rad"),
        Register("present_input_voltage", "Present Input Voltage", 144, 2, R, None, unit=0.1,
                 unit_name="V"),
        Register("present_temperature", "Present Temperature", 146, 1, R, None, unit=1.0,
                 unit_name="°C"),
        Register("backup_ready", "Backup Ready", 147, 1, R, None),
        *indirect,
    ]
    return ControlTable(tuple(sorted([*eeprom, *ram], key=lambda r: r.address)))


XL430_W250 = ServoModel(
    vendor="dynamixel",
    name="xl430-w250",
    model_number=1060,
    table=_table(
        gains=[
            Register("velocity_i_gain", "Velocity I Gain", 76, 2, RW, 1000),
            Register("velocity_p_gain", "Velocity P Gain", 78, 2, RW, 100),
            Register("position_d_gain", "Position D Gain", 80, 2, RW, 4000),
            Register("position_p_gain", "Position P Gain", 84, 2, RW, 640),
        ],
        load=Register("present_load", "Present Load", 126, 2, R, None, S, unit=1e-3,
                      unit_name="fraction of stall torque"),
        limits=_limits(72, 140, 60, 265, 52, current=False),
        model_number=1060,
        indirect=_indirect([(1, 28, 168, 224), (29, 28, 578, 634)]),
    ),
    resolution=4096,
    modes={"position": 3},
    other_modes={"velocity": 1, "extended_position": 4, "pwm": 16},
    stall_torque=1.4,
    no_load_speed=57 * 2.0 * math.pi / 60.0,
    stall_current=1.3,
    gear_ratio=258.5,
    voltage=11.1,
    source="ROBOTIS e-Manual, XL430-W250-T specifications (11.1 V column)",
    pwm_full_scale=885,
    baud_rates=BAUD_RATES,
)

XL330_M288 = ServoModel(
    vendor="dynamixel",
    name="xl330-m288",
    model_number=1200,
    table=_table(
        gains=[
            Register("velocity_i_gain", "Velocity I Gain", 76, 2, RW, 1600),
            Register("velocity_p_gain", "Velocity P Gain", 78, 2, RW, 180),
            Register("position_d_gain", "Position D Gain", 80, 2, RW, 0),
            Register("position_p_gain", "Position P Gain", 84, 2, RW, 400),
            Register("goal_current", "Goal Current", 102, 2, RW, None, S, unit=1e-3,
                     unit_name="A"),
        ],
        load=Register("present_current", "Present Current", 126, 2, R, None, S, unit=1e-3,
                      unit_name="A"),
        limits=_limits(70, 70, 35, 445, 53, current=True),
        model_number=1200,
        indirect=_indirect([(1, 20, 168, 208)]),
    ),
    resolution=4096,
    modes={"position": 3, "current": 0},
    other_modes={"velocity": 1, "extended_position": 4, "current_based_position": 5, "pwm": 16},
    stall_torque=0.52,
    no_load_speed=103 * 2.0 * math.pi / 60.0,
    stall_current=1.47,
    gear_ratio=288.4,
    voltage=5.0,
    source="ROBOTIS e-Manual, XL330-M288-T specifications (5.0 V column)",
    pwm_full_scale=885,
    baud_rates=XL330_BAUD_RATES,
)

XL330_M077 = ServoModel(
    vendor="dynamixel",
    name="xl330-m077",
    model_number=1190,
    table=_table(
        gains=[
            Register("velocity_i_gain", "Velocity I Gain", 76, 2, RW, 400),
            Register("velocity_p_gain", "Velocity P Gain", 78, 2, RW, 40),
            Register("position_d_gain", "Position D Gain", 80, 2, RW, 0),
            Register("position_p_gain", "Position P Gain", 84, 2, RW, 400),
            Register("goal_current", "Goal Current", 102, 2, RW, None, S, unit=1e-3,
                     unit_name="A"),
        ],
        load=Register("present_current", "Present Current", 126, 2, R, None, S, unit=1e-3,
                      unit_name="A"),
        limits=_limits(70, 70, 35, 1620, 53, current=True),
        model_number=1190,
        indirect=_indirect([(1, 20, 168, 208)]),
        position_i_gain=400,
    ),
    resolution=4096,
    modes={"position": 3, "current": 0},
    other_modes={"velocity": 1, "extended_position": 4, "current_based_position": 5, "pwm": 16},
    stall_torque=0.215,
    no_load_speed=383 * 2.0 * math.pi / 60.0,
    stall_current=1.47,
    gear_ratio=77.163,
    voltage=5.0,
    source="ROBOTIS e-Manual, XL330-M077-T specifications (5.0 V column)",
    pwm_full_scale=885,
    baud_rates=XL330_BAUD_RATES,
)
# fmt: on

#: Model name -> model, for robot files (``model: xl430-w250``).
MODELS: dict[str, ServoModel] = {m.name: m for m in (XL430_W250, XL330_M288, XL330_M077)}
