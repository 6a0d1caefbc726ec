"""Starting PyBullet: quietly, and with a GUI only where a display exists.

PyBullet prints a build banner on stderr when it is imported and an ``argv[0]=`` line on
stdout at every connect, from C code, so Python's ``sys.stdout`` cannot catch them: they
reached every CLI command, notebook cell and Ray runner. :func:`quiet_output` silences the
process's file descriptors 1 and 2 around the import and the connect, unless the
environment variable ``JOINTLAB_VERBOSE`` is set to anything but ``0`` (``jointlab
--verbose`` sets it, so subprocesses such as the device emulator inherit it).

This module is imported by :mod:`jointlab.sim` before any module that imports PyBullet.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from jointlab.errors import SimulationError

__all__ = ["check_display", "connect_client", "quiet_output", "verbose"]


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


with quiet_output():  # the build banner
    import pybullet
    from pybullet_utils.bullet_client import BulletClient


def check_display() -> None:
    """Raise :class:`SimulationError` when a PyBullet GUI cannot open (no display).

    On Linux the GUI needs an X or Wayland display; without one PyBullet kills the whole
    process with an X error, so this is checked before PyBullet is asked.
    """
    if not sys.platform.startswith(("linux", "freebsd")):
        return
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    raise SimulationError(
        "the PyBullet GUI needs a display, but neither DISPLAY nor WAYLAND_DISPLAY is set: "
        "run headless (without --gui / gui=1), or start a display (e.g. xvfb-run)"
    )


def connect_client(gui: bool = False) -> BulletClient:
    """A new PyBullet client, ``DIRECT`` (headless) or ``GUI``, connected quietly.

    Raises:
        SimulationError: no display for a GUI, or PyBullet could not start the client.
    """
    what = "GUI" if gui else "DIRECT"
    if gui:
        check_display()
    try:
        with quiet_output():
            client = BulletClient(connection_mode=pybullet.GUI if gui else pybullet.DIRECT)
    except pybullet.error as exc:
        raise SimulationError(f"cannot start a PyBullet {what} client: {exc}") from exc
    if client._client < 0:
        raise SimulationError(
            f"cannot start a PyBullet {what} client"
            + (" (is another GUI open in this process?)" if gui else "")
        )
    return client
