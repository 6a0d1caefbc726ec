"""Serial-bus servos: control tables, transmissions in use, the bus robot, calibration, emulation.

What the Dynamixel and Feetech backends share: :mod:`.control_table` (registers as data),
:mod:`.gains` (gain registers <-> SI gains), :mod:`.firmware` (the emulated servos),
:mod:`.emulator` (an emulated bus on a pty), :mod:`.driver` (the vendor SDKs behind one
interface), :mod:`.robot` (:class:`ServoBusRobot`), :mod:`.calibration` and :mod:`.homing`.
docs/hardware.md, "Servo buses", explains them.
"""
