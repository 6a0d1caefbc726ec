"""How an emulator process is scheduled: a raised CPU weight in real time, and its fallback.

A real-time emulator asks for niceness :data:`REALTIME_NICE` (a larger share of a busy CPU
under the normal policy); lockstep emulators ask for nothing. Where lowering the niceness is not
permitted, the process keeps the niceness it inherited and says so (``.nice``); nothing in a
test process or the host is ever given a real-time policy here.
"""

from __future__ import annotations

import multiprocessing
import os

import pytest

from jointlab.hardware import EmulatorProcess
from jointlab.hardware.emulator.process import REALTIME_NICE
from jointlab.scheduling import raised_weight

#: An unprivileged user to drop to (the conventional "nobody").
NOBODY = 65534


def _asked(nice: int, unprivileged: bool, queue: multiprocessing.Queue) -> None:
    if unprivileged:
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    queue.put((os.getpriority(os.PRIO_PROCESS, 0), raised_weight(nice)))


def _in_child(nice: int, unprivileged: bool = False) -> tuple[int, int]:
    """(niceness before, niceness after ``raised_weight(nice)``) in a fresh child process."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_asked, args=(nice, unprivileged, queue))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    return queue.get(timeout=5)


def _privileged() -> bool:
    return os.geteuid() == 0


def test_raised_weight_is_granted_to_root_and_refused_without_the_privilege() -> None:
    if not _privileged():
        before, after = _in_child(-5)
        assert after == before  # refused: the niceness is kept
        return
    before, after = _in_child(-5)
    assert after == -5
    before, after = _in_child(-5, unprivileged=True)
    assert after == before  # an unprivileged process keeps what it had
    assert _in_child(3, unprivileged=True)[1] == 3  # raising it is always allowed


@pytest.mark.parametrize("lockstep", [False, True])
def test_emulator_process_runs_at_the_niceness_it_reports(lockstep: bool) -> None:
    inherited = os.getpriority(os.PRIO_PROCESS, 0)
    with EmulatorProcess("arm6", lockstep=lockstep) as emulator:
        actual = os.getpriority(os.PRIO_PROCESS, emulator.pid)
        assert emulator.nice == actual
        if lockstep:  # nothing asked: the niceness it inherited
            assert actual == inherited
        else:
            assert actual == (REALTIME_NICE if _privileged() else inherited)
        assert not emulator.fifo
        assert os.sched_getscheduler(emulator.pid) == os.SCHED_OTHER
