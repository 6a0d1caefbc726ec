"""Keep a thread's CPU scheduling as it was: some native libraries change it and never undo it.

The SVT-AV1 encoder (LeRobot's default video codec, through PyAV) switches the thread that
calls it to ``SCHED_FIFO`` priority 99 when the process may (as root), and leaves it so.
Everything that thread starts afterwards inherits it: an emulator, a browser, a training
run would then preempt the whole machine. :func:`kept_scheduling` puts the policy back;
:func:`normal_scheduling` is for a child process that must start at normal priority.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

__all__ = ["kept_scheduling", "niceness", "normal_scheduling", "raised_weight"]


@contextlib.contextmanager
def kept_scheduling() -> Iterator[None]:
    """Restore the calling thread's scheduling policy and priority when the block ends."""
    try:
        policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    except (AttributeError, OSError):  # not Linux: nothing to keep
        yield
        return
    try:
        yield
    finally:
        try:
            if (os.sched_getscheduler(0), os.sched_getparam(0)) != (policy, param):
                os.sched_setscheduler(0, policy, param)
        except OSError:
            pass


def normal_scheduling() -> None:
    """Put the calling process on the normal time-sharing policy (``SCHED_OTHER``).

    For ``preexec_fn`` of a child that must not inherit a real-time policy of its parent.
    """
    try:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (AttributeError, OSError):
        pass


def raised_weight(nice: int) -> int:
    """Give the calling process niceness ``nice`` (below 0: a larger share of a busy CPU).

    Under the normal time-sharing policy a process's CPU share on a contended core follows
    its niceness (each step below 0 is about 1.25 times the weight), without the risks of a
    real-time policy: it can still never starve the machine. Lowering the niceness needs the
    privilege (root or ``CAP_SYS_NICE``); where it is refused the process keeps its niceness.

    Returns:
        The niceness the process has afterwards (``nice`` when granted).
    """
    try:
        os.setpriority(os.PRIO_PROCESS, 0, int(nice))
    except (AttributeError, OSError):
        pass
    return niceness()


def niceness() -> int:
    """The calling process's niceness (0 where the platform has none)."""
    try:
        return os.getpriority(os.PRIO_PROCESS, 0)
    except (AttributeError, OSError):
        return 0
