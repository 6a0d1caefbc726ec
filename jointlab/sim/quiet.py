"""Silencing output that C libraries write straight to file descriptors 1 and 2.

Physics engines and Ray print banners and start-up lines from C code, which Python's
``sys.stdout`` cannot catch. :func:`quiet_output` silences the process's file descriptors
1 and 2 around such a call, unless the environment variable ``JOINTLAB_VERBOSE`` is set to
anything but ``0`` (``jointlab --verbose`` sets it, so subprocesses such as the device
emulator inherit it). Engine-neutral: the PyBullet engine uses it around its import and
every connect (:mod:`jointlab.sim.pybullet.client`). :func:`has_display` says whether an
engine's GUI could open at all.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["has_display", "quiet_output", "verbose"]


def verbose() -> bool:
    """True when ``JOINTLAB_VERBOSE`` asks for PyBullet's own output."""
    return os.environ.get("JOINTLAB_VERBOSE", "") not in ("", "0")


def _flush_c_stdio() -> None:
    try:
        ctypes.CDLL(None).fflush(None)  # C-level buffers, while the descriptors point nowhere
    except (OSError, AttributeError):  # pragma: no cover - no C library to ask
        pass


@contextmanager
def quiet_output() -> Iterator[None]:
    """Discard everything written to file descriptors 1 and 2 inside the block.

    Python-level buffers are flushed first, so nothing printed before the block is lost.
    Does nothing when :func:`verbose` is true or the descriptors cannot be duplicated.
    """
    if verbose():
        yield
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    try:
        saved = (os.dup(1), os.dup(2))
    except OSError:  # no descriptors to silence (a daemon without stdio)
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        _flush_c_stdio()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def has_display() -> bool:
    """True when an engine's GUI can open here (an X or Wayland display, or not Linux/BSD)."""
    if not sys.platform.startswith(("linux", "freebsd")):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
