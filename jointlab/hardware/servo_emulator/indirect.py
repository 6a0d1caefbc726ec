"""Indirect addressing (Dynamixel X series): Indirect Data ``i`` is a window on another byte.

Indirect Data ``i`` reads and writes the byte at the address held in Indirect Address ``i``.
The e-Manual's "Indirect Address, Indirect Data": a client gathers scattered registers into one
contiguous block by writing their addresses, byte by byte, into Indirect Address 1, 2, ...;
reading or writing Indirect Data 1, 2, ... then reads or writes those bytes. Each Indirect
Address starts at its own Indirect Data (a window on itself).
"""

from __future__ import annotations

import numpy as np

from jointlab.hardware.servo.control_table import ServoModel

__all__ = ["indirect_map", "indirect_targets"]

#: (vendor, model name) -> (Indirect Data addresses, their Indirect Address register addresses).
_MAPS: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}


def indirect_map(model: ServoModel) -> tuple[np.ndarray, np.ndarray]:
    """Addresses of ``model``'s Indirect Data bytes and of the Indirect Address of each."""
    key = (model.vendor, model.name)
    found = _MAPS.get(key)
    if found is None:
        data, pointers = [], []
        for register in model.table.registers:
            if register.name.startswith("indirect_data_"):
                number = register.name.removeprefix("indirect_data_")
                data.append(register.address)
                pointers.append(model.table[f"indirect_address_{number}"].address)
        found = (np.array(data, dtype=np.int64), np.array(pointers, dtype=np.int64))
        _MAPS[key] = found
    return found


def indirect_targets(
    model: ServoModel, memory: np.ndarray, address: int, end: int
) -> list[tuple[int, int]]:
    """Where the Indirect Data bytes in ``address .. end`` of one servo's ``memory`` point.

    Returns:
        ``(byte offset in the block, target address)`` per Indirect Data byte in the block
        (empty for models without indirection).
    """
    data, pointers = indirect_map(model)
    if data.size == 0:
        return []
    inside = (data >= address) & (data < end)
    if not inside.any():
        return []
    where = pointers[inside]
    targets = memory[where].astype(np.int64) | (memory[where + 1].astype(np.int64) << 8)
    return [(int(d - address), int(t)) for d, t in zip(data[inside], targets, strict=True)]
