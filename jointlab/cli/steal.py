"""Steal time: the share of CPU time a virtual machine's hypervisor gave to other guests.

Read from Linux's ``/proc/stat`` (the ``steal`` column of the ``cpu`` line). On a shared
host a benchmark's wall-clock figures move with it, so the benchmark reports print it
beside the load average.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CpuTimes", "cpu_times", "steal_percent"]


@dataclass(frozen=True)
class CpuTimes:
    """All CPUs' time since boot and the part of it stolen, in clock ticks."""

    total: int
    steal: int


def cpu_times(path: str = "/proc/stat") -> CpuTimes | None:
    """The machine's CPU times now, or None without a readable ``/proc/stat``."""
    try:
        with open(path, encoding="ascii") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is
    # already counted in user and nice
    values = [int(value) for value in fields[1:9]]
    return CpuTimes(total=sum(values), steal=values[7])


def steal_percent(since: CpuTimes | None, now: CpuTimes | None = None) -> float | None:
    """Percent of all CPU time stolen between ``since`` and ``now`` (default: now)."""
    if since is None:
        return None
    now = cpu_times() if now is None else now
    if now is None or now.total <= since.total:
        return None
    return 100.0 * (now.steal - since.steal) / (now.total - since.total)
