"""Which serial port is the arm's: list the ports, unplug, list again, name the one that went.

:func:`serial_ports` lists the machine's serial ports (pyserial's ``list_ports``) or, given
``candidates`` (paths and glob patterns, e.g. ptys in tests), those of them that exist.
:func:`vanished_port` compares two listings.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence

from jointlab.errors import ConfigurationError

__all__ = ["serial_ports", "vanished_port"]


def serial_ports(candidates: Sequence[str] | None = None) -> list[str]:
    """Serial ports present now, sorted.

    Args:
        candidates: Paths or glob patterns to consider instead of the machine's ports.
    """
    if candidates is None:
        from serial.tools import list_ports

        return sorted(port.device for port in list_ports.comports())
    found: set[str] = set()
    for pattern in candidates:
        matches = glob.glob(pattern) if glob.has_magic(pattern) else [pattern]
        found.update(path for path in matches if os.path.exists(path))
    return sorted(found)


def vanished_port(before: Sequence[str], after: Sequence[str]) -> str:
    """The one port in ``before`` that is not in ``after``.

    Raises:
        ConfigurationError: none or several vanished (the message lists them and the fix).
    """
    gone = sorted(set(before) - set(after))
    if len(gone) == 1:
        return gone[0]
    if not gone:
        raise ConfigurationError(
            f"no port disappeared (ports before: {list(before) or 'none'}; after: "
            f"{list(after) or 'none'}): unplug the arm's USB cable (not its power) when asked, "
            "and check that its adapter shows up as a serial port"
        )
    raise ConfigurationError(
        f"{len(gone)} ports disappeared ({', '.join(gone)}): unplug only the one arm's cable "
        "and run it again"
    )
