"""Serial-bus servos, what both sides share: control tables, packets, gains, the vendor record.

:mod:`.control_table` (registers as data, a model's table), :mod:`.packets` (an instruction
or status packet as bytes), :mod:`.gains` (gain registers <-> SI gains) and :mod:`.vendor`
(the :class:`~jointlab.hardware.servo.vendor.Vendor` record: what one protocol is). Each
protocol's record lives with its tables (:mod:`jointlab.hardware.dynamixel`,
:mod:`jointlab.hardware.feetech`); :mod:`jointlab.hardware.vendors` finds one by name.
The host side is :mod:`jointlab.hardware.servo_host` (the bus robot), the emulated side
:mod:`jointlab.hardware.servo_emulator` (the servos' firmware). docs/hardware.md, "Servo
buses", explains them.
"""
