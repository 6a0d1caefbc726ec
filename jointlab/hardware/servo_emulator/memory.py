"""Reads and writes of an emulated servo's memory, checked and applied as its firmware does.

The rules every instruction of both vendors goes through (:meth:`MemoryRules.read_memory`,
:meth:`MemoryRules.write_memory`, methods of every
:class:`~jointlab.hardware.servo_emulator.firmware.ServoArray`): access rights, each vendor's
EEPROM rule, the bus watchdog's lock on goals, renaming on an ID write, holding on torque
enable, and indirect addressing. A refused access raises
:class:`~jointlab.hardware.servo.control_table.MemoryRefused`, which the vendor's instruction
handler turns into its status packet's error.
"""

from __future__ import annotations

import numpy as np

from jointlab.hardware.servo.control_table import Access, MemoryRefused, ServoModel
from jointlab.hardware.servo_emulator.indirect import indirect_map, indirect_targets

__all__ = ["MemoryRules", "eeprom_mask"]

#: Registers that change the frame Present Position is reported in.
_FRAME_REGISTERS = frozenset({"homing_offset", "drive_mode", "operating_mode"})


def eeprom_mask(model: ServoModel) -> np.ndarray:
    """Mask of the bytes of ``model``'s table that lie in its EEPROM area, shape ``(size,)``."""
    mask = np.zeros(model.table.size, dtype=bool)
    for register in model.table.registers:
        if register.eeprom:
            mask[register.address : register.address + register.size] = True
    return mask


class MemoryRules:
    """Reads and writes as the firmware checks them, for the servos of a ``ServoArray``.

    A base of :class:`~jointlab.hardware.servo_emulator.firmware.ServoArray`; its methods use
    the array's ``models``, ``memory``, ``n``, ``get``, ``set``, ``refresh``, ``changed``,
    ``invalidate``, ``saved_memory``, ``rename``, ``faults``, ``setpoint``, the step-mode
    methods and the profile state.
    """

    def read_memory(self, k: int, address: int, length: int) -> bytes:
        """Bytes ``address .. address + length`` of servo ``k`` (present values refreshed first).

        Raises:
            MemoryRefused: the block runs past the control table (``"access"``).
        """
        model = self.models[k]
        if length < 1 or address + length > model.table.size:
            raise MemoryRefused("access")
        self.refresh()
        block = self.memory[k, address : address + length].copy()
        for offset, target in indirect_targets(model, self.memory[k], address, address + length):
            block[offset] = self.memory[k, target] if target < model.table.size else 0
        return block.tobytes()

    def write_memory(self, k: int, address: int, data: bytes) -> None:
        """Write ``data`` at ``address`` of servo ``k``, as its firmware checks and applies it.

        Refused (nothing written): a read-only register, bytes past the table (``"access"``); a
        goal while the bus watchdog has fired (``"range"``); on Dynamixel servos, an EEPROM
        register while torque is on (``"access"``, as the e-Manual's EEPROM lock). Feetech STS
        servos take EEPROM writes at any time and keep them across a power cycle only while
        ``Lock`` (55) is 0, as Feetech's memory table describes. Dynamixel EEPROM writes always
        persist. Writing ``ID`` renames the servo once the write is done (the status of that write
        still comes from the old id). Enabling torque makes the servo hold where it is
        (setpoint = present position); on Feetech it also clears the Status bits and the overload
        protection, while a Dynamixel whose Shutdown bits are set keeps its torque off until a
        reboot (the write is taken, Torque Enable stays 0). In Feetech step mode (3) a Goal
        Position write is a number of steps to move (``ServoArray.step``). A byte written to an
        Indirect Data register is written, with the same checks, at the address its Indirect
        Address holds.

        Raises:
            MemoryRefused: the write is refused (see above).
        """
        model = self.models[k]
        end = address + len(data)
        if not data or end > model.table.size:
            raise MemoryRefused("access")
        forwarded = [
            (offset, target)
            for offset, target in indirect_targets(model, self.memory[k], address, end)
            if target not in indirect_map(model)[0]
        ]
        for _, target in forwarded:
            hit = [r for r in model.table.registers if r.address <= target < r.address + r.size]
            if target >= model.table.size or any(r.access is Access.READ for r in hit):
                raise MemoryRefused("access")
        touched = [
            r for r in model.table.registers if r.address < end and address < r.address + r.size
        ]
        torque_on = self.memory[k, model.table["torque_enable"].address] == 1
        locks_eeprom = model.vendor != "feetech"
        for register in touched:
            if register.access.value == "R" or (register.eeprom and torque_on and locks_eeprom):
                raise MemoryRefused("access")
        if "bus_watchdog" in model.table:
            fired = self.get("bus_watchdog")[k] < 0
            if fired and any(r.name.startswith("goal_") for r in touched):
                raise MemoryRefused("range")
        enabling = (
            "torque_enable" in {r.name for r in touched}
            and data[model.table["torque_enable"].address - address] == 1
        )
        self.memory[k, address:end] = np.frombuffer(bytes(data), dtype=np.uint8)
        self.changed()
        if any(r.name in _FRAME_REGISTERS for r in touched):
            self.invalidate()  # Present Position is read in the new frame at once
        if any(r.eeprom for r in touched):
            unlocked = "lock" not in model.table or self.get("lock")[k] == 0
            if locks_eeprom or unlocked:
                saved = self.saved_memory(k)
                mask = eeprom_mask(model)[address:end]
                saved[address:end][mask] = self.memory[k, address:end][mask]
            if any(r.name == "id" for r in touched):
                self.rename(k, int(self.memory[k, model.table["id"].address]))
        names = {r.name for r in touched}
        if enabling and "shutdown" in model.table and self.faults[k] & self.get("shutdown")[k]:
            # Dynamixel: "REBOOT is the only method to reset Torque Enable(64) to '1'"
            self.memory[k, model.table["torque_enable"].address] = 0
            enabling = False
        if enabling:
            if "unloading_condition" in model.table:  # Feetech: Torque Enable clears Status
                self.faults[k] = 0
                self.protection.reset(k)
            self.refresh()
            present = self.get("present_position")
            mask = np.arange(self.n) == k
            if "goal_position" not in names:
                self.set("goal_position", present, mask)
            self.setpoint[k] = present[k]
            self.trajectory_velocity[k] = self.velocity_integral[k] = 0.0
        if self.in_step_mode(k):  # Feetech mode 3: a Goal Position write is a step count
            if enabling or "operating_mode" in names:
                self.hold_steps(k)
            if "goal_position" in names:
                self.step(k, int(self.get("goal_position")[k]))
        elif "operating_mode" in names and not np.isnan(self.step_target[k]):
            self.step_target[k] = np.nan  # out of step mode: the target is one turn's again
            self.refresh()
            self.setpoint[k] = self.get("present_position")[k]
        for offset, target in forwarded:  # Indirect Data: the bytes at their addresses
            self.write_memory(k, target, bytes(data[offset : offset + 1]))
