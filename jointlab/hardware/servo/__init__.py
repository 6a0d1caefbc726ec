"""Serial-bus servos: control tables, transmissions in use, the bus robot, calibration, emulation.

What the Dynamixel and Feetech backends share: :mod:`.control_table` (registers as data),
:mod:`.models` (the supported models, a robot file's bus checked against them), :mod:`.gains`
(gain registers <-> SI gains), :mod:`.driver` (the vendor SDKs behind one interface),
:mod:`.commands` (NJointAction -> goals per capability), :mod:`.bus_state` (checks at connect,
Sync Read decoding), :mod:`.cycle` (bus cycles, torque enable, the bus watchdog),
:mod:`.robot` (:class:`ServoBusRobot`), :mod:`.calibration` and
:mod:`.homing`; for emulation :mod:`.firmware` (the servos), :mod:`.packets`, :mod:`.emulator`
(a bus on a pty) and :mod:`.emulator_process`; :mod:`.urls` (``dynamixel://``,
``feetech://``, ``emulated://`` of a robot with a bus).
docs/hardware.md, "Servo buses", explains them.
"""
