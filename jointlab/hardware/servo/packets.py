"""What both servo protocols' decoders produce: one received instruction packet."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Packet"]


@dataclass(frozen=True)
class Packet:
    """A received packet: id, instruction, parameters; ``crc_ok`` False if corrupt."""

    id: int
    instruction: int
    #: The parameters (Dynamixel: with the byte stuffing removed).
    params: bytes
    #: Bytes the packet took on the wire (stuffing included).
    wire_bytes: int
    crc_ok: bool = True
