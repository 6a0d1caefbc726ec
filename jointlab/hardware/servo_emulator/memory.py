"""Reads and writes of an emulated servo's memory, checked and applied as its firmware does.

The rules every instruction of both vendors goes through (:func:`read_memory`,
:func:`write_memory`): access rights, each vendor's EEPROM rule, the bus watchdog's lock on
goals, renaming on an ID write, holding on torque enable, and indirect addressing.
"""

from __future__ import annotations

import numpy as np

from jointlab.hardware.servo.control_table import Access
from jointlab.hardware.servo_emulator.firmware import ServoArray, eeprom_mask
from jointlab.hardware.servo_emulator.indirect import indirect_map, indirect_targets

__all__ = ["MemoryError_", "read_memory", "write_memory"]

#: Registers that change the frame Present Position is reported in.
_FRAME_REGISTERS = frozenset({"homing_offset", "drive_mode", "operating_mode"})


class MemoryError_(Exception):
    """A read or write the servo refuses; ``reason``: ``"access"``, ``"range"``, ``"length"``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_memory(servos: ServoArray, k: int, address: int, length: int) -> bytes:
    """Bytes ``address .. address + length`` of servo ``k`` (present values refreshed first).

    Raises:
        MemoryError_: the block runs past the control table (``"access"``).
    """
    model = servos.models[k]
    if length < 1 or address + length > model.table.size:
        raise MemoryError_("access")
    servos.refresh()
    block = servos.memory[k, address : address + length].copy()
    for offset, target in indirect_targets(model, servos.memory[k], address, address + length):
        block[offset] = servos.memory[k, target] if target < model.table.size else 0
    return block.tobytes()


def write_memory(servos: ServoArray, k: int, address: int, data: bytes) -> None:
    """Write ``data`` at ``address`` of servo ``k``, as its firmware checks and applies it.

    Refused (nothing written): a read-only register, bytes past the table (``"access"``); a
    goal while the bus watchdog has fired (``"range"``); on Dynamixel servos, an EEPROM
    register while torque is on (``"access"``, as the e-Manual's EEPROM lock). Feetech STS
    servos take EEPROM writes at any time and keep them across a power cycle only while
    ``Lock`` (55) is 0, as Feetech's memory table describes. Dynamixel EEPROM writes always
    persist. Writing ``ID`` renames the servo once the write is done (the status of that write
    still comes from the old id). Enabling torque makes the servo hold where it is
    (setpoint = present position). In Feetech step mode (3) a Goal Position write is a number
    of steps to move (:meth:`ServoArray.step`). A byte written to an Indirect Data register is
    written, with the same checks, at the address its Indirect Address holds.

    Raises:
        MemoryError_: the write is refused (see above).
    """
    model = servos.models[k]
    end = address + len(data)
    if not data or end > model.table.size:
        raise MemoryError_("access")
    forwarded = [(offset, target) for offset, target
                 in indirect_targets(model, servos.memory[k], address, end)
                 if target not in indirect_map(model)[0]]  # fmt: skip
    for _, target in forwarded:
        hit = [r for r in model.table.registers if r.address <= target < r.address + r.size]
        if target >= model.table.size or any(r.access is Access.READ for r in hit):
            raise MemoryError_("access")
    touched = [r for r in model.table.registers if r.address < end and address < r.address + r.size]
    torque_on = servos.memory[k, model.table["torque_enable"].address] == 1
    locks_eeprom = model.vendor != "feetech"
    for register in touched:
        if register.access.value == "R" or (register.eeprom and torque_on and locks_eeprom):
            raise MemoryError_("access")
    if "bus_watchdog" in model.table:
        fired = servos.get("bus_watchdog")[k] < 0
        if fired and any(r.name.startswith("goal_") for r in touched):
            raise MemoryError_("range")
    enabling = (
        "torque_enable" in {r.name for r in touched}
        and data[model.table["torque_enable"].address - address] == 1
    )
    servos.memory[k, address:end] = np.frombuffer(bytes(data), dtype=np.uint8)
    servos.changed()
    if any(r.name in _FRAME_REGISTERS for r in touched):
        servos.invalidate()  # Present Position is read in the new frame at once
    if any(r.eeprom for r in touched):
        unlocked = "lock" not in model.table or servos.get("lock")[k] == 0
        if locks_eeprom or unlocked:
            saved = servos.saved_memory(k)
            mask = eeprom_mask(model)[address:end]
            saved[address:end][mask] = servos.memory[k, address:end][mask]
        if any(r.name == "id" for r in touched):
            servos.rename(k, int(servos.memory[k, model.table["id"].address]))
    names = {r.name for r in touched}
    if enabling:
        servos.faults[k] = 0 if model.vendor == "feetech" else servos.faults[k]
        servos.refresh()
        present = servos.get("present_position")
        mask = np.arange(servos.n) == k
        if "goal_position" not in names:
            servos.set("goal_position", present, mask)
        servos.setpoint[k] = present[k]
        servos.trajectory_velocity[k] = servos.velocity_integral[k] = 0.0
    if servos.in_step_mode(k):  # Feetech mode 3: a Goal Position write is a step count
        if enabling or "operating_mode" in names:
            servos.hold_steps(k)
        if "goal_position" in names:
            servos.step(k, int(servos.get("goal_position")[k]))
    elif "operating_mode" in names and not np.isnan(servos.step_target[k]):
        servos.step_target[k] = np.nan  # out of step mode: the target is one turn's again
        servos.refresh()
        servos.setpoint[k] = servos.get("present_position")[k]
    for offset, target in forwarded:  # Indirect Data: the bytes at their addresses
        write_memory(servos, k, target, bytes(data[offset : offset + 1]))
