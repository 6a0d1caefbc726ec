"""Starting PyBullet: quietly, and with a GUI only where a display exists.

PyBullet prints a build banner on stderr when it is imported and an ``argv[0]=`` line on
stdout at every connect, from C code, so Python's ``sys.stdout`` cannot catch them: they
reached every CLI command, notebook cell and Ray runner. :func:`~jointlab.sim.quiet.
quiet_output` silences them around the import and the connect. This module is imported by
:mod:`jointlab.sim.pybullet` before any module that imports PyBullet.
"""

from __future__ import annotations

from jointlab.errors import SimulationError
from jointlab.sim.quiet import has_display, quiet_output, verbose

__all__ = ["check_display", "connect_client", "quiet_output", "verbose"]


with quiet_output():  # the build banner
    import pybullet
    from pybullet_utils.bullet_client import BulletClient


def check_display() -> None:
    """Raise :class:`SimulationError` when a PyBullet GUI cannot open (no display).

    On Linux the GUI needs an X or Wayland display; without one PyBullet kills the whole
    process with an X error, so this is checked before PyBullet is asked.
    """
    if has_display():
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
