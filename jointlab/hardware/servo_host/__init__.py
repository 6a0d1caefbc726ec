"""The host side of a servo bus: the vendor SDKs behind one driver, the bus robot, calibration.

:mod:`.driver` (the vendor SDKs behind one interface), :mod:`.commands` (NJointAction ->
goals per capability), :mod:`.bus_state` (checks at connect, Sync Read decoding),
:mod:`.cycle` (bus cycles, torque enable, the bus watchdog), :mod:`.robot`
(:class:`~jointlab.hardware.servo_host.robot.ServoBusRobot`), :mod:`.calibration`,
:mod:`.homing`, :mod:`.range_of_motion`, :mod:`.lerobot_calibration`, :mod:`.setup` (ids
and baud rates), :mod:`.survey` (``jointlab check``), :mod:`.droop` (the holding droop of a
P-only servo) and :mod:`.urls` (``dynamixel://``, ``feetech://``, ``emulated://`` of a robot
with a bus). It mirrors :mod:`jointlab.hardware.host` for the own protocol.
"""
