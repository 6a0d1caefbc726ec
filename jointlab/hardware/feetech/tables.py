"""Feetech STS (SMS/STS protocol) control table: the STS3215 (model number 777).

Addresses, sizes and encodings follow Feetech's SMS/STS memory table as used by the vendor's
SCServo libraries (``SMS_STS``): little-endian words (the SDK's ``PacketHandler(0)``), and
sign-magnitude values with the sign in bit 15 (positions, speeds, current), bit 11 (homing
offset) or bit 10 (load). Units: position 4096 steps per turn, speed in steps/s, load in 0.1 %
of the maximum torque, current in 6.5 mA, voltage in 0.1 V. Motor figures: Feetech STS3215
(12 V, 1:345 gearbox, as on the SO-101 follower arm) product data: 30 kg·cm stall torque,
45 rev/min no load, 2.7 A stall current.
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

__all__ = ["BAUD_RATES", "ERROR_BITS", "MODELS", "STS3215"]

R, RW, SM = Access.READ, Access.READ_WRITE, Encoding.SIGN_MAGNITUDE
STEP = 2.0 * math.pi / 4096  # rad per step

#: Baud Rate register value -> line rate, bit/s (STS/SMS series; factory setting 0), as
#: Feetech's own SDK defines them (``SMS_STS_1M`` ... ``SMS_STS_38400`` in FTServo's
#: ``sms_sts.py``). LeRobot's table differs for 5-7 (57600, 38400, 19200).
BAUD_RATES = {
    0: 1_000_000,
    1: 500_000,
    2: 250_000,
    3: 128_000,
    4: 115_200,
    5: 76_800,
    6: 57_600,
    7: 38_400,
}

#: Status-packet error bits (the SDK's ``ERRBIT_*``).
ERROR_BITS = {
    0: "input voltage error",
    1: "angle sensor error",
    2: "overheating error",
    3: "over-current error",
    5: "overload error",
}

_TABLE = ControlTable(
    (
        Register("firmware_major", "Firmware Major Version", 0, 1, R, 3, eeprom=True),
        Register("firmware_minor", "Firmware Minor Version", 1, 1, R, 10, eeprom=True),
        Register("model_number", "Model Number", 3, 2, R, 777, eeprom=True),
        Register("id", "ID", 5, 1, RW, 1, eeprom=True),
        Register("baud_rate", "Baud Rate", 6, 1, RW, 0, eeprom=True),
        Register(
            "return_delay_time",
            "Return Delay Time",
            7,
            1,
            RW,
            0,
            unit=2e-6,
            unit_name="s",
            eeprom=True,
        ),
        Register("status_return_level", "Response Status Level", 8, 1, RW, 1, eeprom=True),
        Register(
            "min_position_limit",
            "Min Position Limit",
            9,
            2,
            RW,
            0,
            unit=STEP,
            unit_name="rad",
            eeprom=True,
        ),
        Register(
            "max_position_limit",
            "Max Position Limit",
            11,
            2,
            RW,
            4095,
            unit=STEP,
            unit_name="rad",
            eeprom=True,
        ),
        Register("temperature_limit", "Max Temperature Limit", 13, 1, RW, 70, eeprom=True),
        Register(
            "max_voltage_limit",
            "Max Voltage Limit",
            14,
            1,
            RW,
            140,
            unit=0.1,
            unit_name="V",
            eeprom=True,
        ),
        Register(
            "min_voltage_limit",
            "Min Voltage Limit",
            15,
            1,
            RW,
            40,
            unit=0.1,
            unit_name="V",
            eeprom=True,
        ),
        Register(
            "max_torque_limit",
            "Max Torque Limit",
            16,
            2,
            RW,
            1000,
            unit=1e-3,
            unit_name="fraction of stall torque",
            eeprom=True,
        ),
        Register("phase", "Phase", 18, 1, RW, 12, eeprom=True),
        Register("unloading_condition", "Unloading Condition", 19, 1, RW, 44, eeprom=True),
        Register("led_alarm_condition", "LED Alarm Condition", 20, 1, RW, 47, eeprom=True),
        Register("position_p_gain", "P Coefficient", 21, 1, RW, 32, eeprom=True),
        Register("position_d_gain", "D Coefficient", 22, 1, RW, 32, eeprom=True),
        Register("position_i_gain", "I Coefficient", 23, 1, RW, 0, eeprom=True),
        Register("minimum_startup_force", "Minimum Startup Force", 24, 2, RW, 16, eeprom=True),
        Register("cw_dead_zone", "CW Dead Zone", 26, 1, RW, 1, eeprom=True),
        Register("ccw_dead_zone", "CCW Dead Zone", 27, 1, RW, 1, eeprom=True),
        Register(
            "protection_current",
            "Protection Current",
            28,
            2,
            RW,
            500,
            unit=6.5e-3,
            unit_name="A",
            eeprom=True,
        ),
        Register("angular_resolution", "Angular Resolution", 30, 1, RW, 1, eeprom=True),
        Register(
            "homing_offset",
            "Homing Offset",
            31,
            2,
            RW,
            0,
            SM,
            sign_bit=11,
            unit=STEP,
            unit_name="rad",
            eeprom=True,
        ),
        Register("operating_mode", "Operating Mode", 33, 1, RW, 0, eeprom=True),
        Register("protective_torque", "Protective Torque", 34, 1, RW, 20, eeprom=True),
        Register("protection_time", "Protection Time", 35, 1, RW, 200, eeprom=True),
        Register("overload_torque", "Overload Torque", 36, 1, RW, 80, eeprom=True),
        Register("velocity_p_gain", "Speed Closed-loop P", 37, 1, RW, 10, eeprom=True),
        Register(
            "over_current_protection_time",
            "Over-current Protection Time",
            38,
            1,
            RW,
            200,
            eeprom=True,
        ),
        Register("velocity_i_gain", "Speed Closed-loop I", 39, 1, RW, 200, eeprom=True),
        Register("torque_enable", "Torque Enable", 40, 1, RW, 0),
        Register("acceleration", "Acceleration", 41, 1, RW, 0, unit=100 * STEP, unit_name="rad/s²"),
        Register("goal_position", "Goal Position", 42, 2, RW, None, SM, unit=STEP, unit_name="rad"),
        Register("goal_time", "Goal Time", 44, 2, RW, 0, unit=1e-3, unit_name="s"),
        Register("goal_velocity", "Goal Speed", 46, 2, RW, 0, SM, unit=STEP, unit_name="rad/s"),
        Register(
            "torque_limit",
            "Torque Limit",
            48,
            2,
            RW,
            1000,
            unit=1e-3,
            unit_name="fraction of stall torque",
        ),
        Register("lock", "Lock", 55, 1, RW, 1),
        Register(
            "present_position", "Present Position", 56, 2, R, None, SM, unit=STEP, unit_name="rad"
        ),
        Register(
            "present_velocity", "Present Speed", 58, 2, R, None, SM, unit=STEP, unit_name="rad/s"
        ),
        Register(
            "present_load",
            "Present Load",
            60,
            2,
            R,
            None,
            SM,
            sign_bit=10,
            unit=1e-3,
            unit_name="fraction of stall torque",
        ),
        Register(
            "present_input_voltage", "Present Voltage", 62, 1, R, None, unit=0.1, unit_name="V"
        ),
        Register(
            "present_temperature", "Present Temperature", 63, 1, R, None, unit=1.0, unit_name="°C"
        ),
        Register("hardware_error_status", "Status", 65, 1, R, 0),
        Register("moving", "Moving", 66, 1, R, 0),
        Register(
            "present_current", "Present Current", 69, 2, R, None, SM, unit=6.5e-3, unit_name="A"
        ),
        # Listed read-only by LeRobot's STS/SMS table (``Goal_Position_2``); its meaning is not
        # documented in the sources we have, so the emulated servo reads it as 0.
        Register("goal_position_2", "Goal Position 2", 71, 2, R, None),
        # The factory area (EEPROM): the servo's motion-profile settings. Feetech's memory
        # table lists them without power-up values; LeRobot's SO-101 set-up writes
        # Maximum Acceleration (85) at every connect.
        Register(
            "moving_velocity_threshold", "Moving Velocity Threshold", 80, 1, RW, None, eeprom=True
        ),
        Register("dts", "DTs", 81, 1, RW, None, unit=1e-3, unit_name="s", eeprom=True),
        Register("velocity_unit_factor", "Velocity Unit Factor", 82, 1, RW, None, eeprom=True),
        Register("hts", "Hts", 83, 1, RW, None, unit=1e-9, unit_name="s", eeprom=True),
        Register("maximum_velocity_limit", "Maximum Velocity Limit", 84, 1, RW, None, eeprom=True),
        Register(
            "maximum_acceleration",
            "Maximum Acceleration",
            85,
            1,
            RW,
            None,
            unit=100 * STEP,
            unit_name="rad/s²",
            eeprom=True,
        ),
        Register(
            "acceleration_multiplier", "Acceleration Multiplier", 86, 1, RW, None, eeprom=True
        ),
    )
)

STS3215 = ServoModel(
    vendor="feetech",
    name="sts3215",
    model_number=777,
    table=_TABLE,
    resolution=4096,
    modes={"position": 0},
    other_modes={"velocity": 1, "pwm": 2, "step": 3},
    stall_torque=30.0 * 9.80665 / 100.0,
    no_load_speed=45.0 * 2.0 * math.pi / 60.0,
    stall_current=2.7,
    gear_ratio=345.0,
    voltage=12.0,
    source="Feetech STS3215 (12 V, 1:345) product data",
    pwm_full_scale=1000,
    baud_rates=BAUD_RATES,
)

#: Model name -> model, for robot files (``model: sts3215``).
MODELS: dict[str, ServoModel] = {STS3215.name: STS3215}
