"""The emulated side of a servo bus: the servos' firmware on a simulated arm, on a pseudo-terminal.

:mod:`.firmware` (:class:`~jointlab.hardware.servo_emulator.firmware.ServoArray`: the servos'
memory, control laws and rules), :mod:`.law_inputs`, :mod:`.profile`, :mod:`.step_mode`,
:mod:`.indirect`, :mod:`.memory` (reads and writes as the firmware checks them),
:mod:`.emulator` (a bus on a pty), :mod:`.emulator_process` (in its own process) and
:mod:`.bus_control` (its control pipe). It mirrors :mod:`jointlab.hardware.emulator` for the
own protocol.
"""
