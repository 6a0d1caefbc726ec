"""The reference firmware processor-in-the-loop: ``qemu-system-arm`` plus its plant.

:class:`FirmwareDevice` starts the Cortex-M3 build of ``firmware/`` for the PIL board
(``make -C firmware pil``: ``firmware/build/firmware-pil.elf``) in ``qemu-system-arm -M
mps2-an385``, with UART0 on a pseudo-terminal (the host link, where ``SerialRobot``
connects, as to a real board) and UART1 on a Unix socket served by a
:class:`~jointlab.hardware.emulator.plant.PlantServer` (the physics, stepped once per
firmware tick). ``connect("emulated://arm6?device=firmware")`` uses it.

**QEMU is always stopped**: by :meth:`FirmwareDevice.close`, or, when the object is
dropped without it, by a ``weakref.finalize`` callback (also run at interpreter exit).
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any

from jointlab.errors import ConfigurationError, LinkError
from jointlab.hardware.emulator.plant import PlantServer
from jointlab.robots.description import RobotDescription
from jointlab.robots.yaml_io import description_digest
from jointlab.scheduling import normal_scheduling

__all__ = ["FIRMWARE_ELF", "FirmwareDevice", "default_elf", "qemu_command"]

#: Where ``make -C firmware`` builds, in a source checkout.
FIRMWARE_BUILD = Path(__file__).resolve().parents[3] / "firmware" / "build"
#: The PIL build of the reference firmware (``make -C firmware pil``, robot ``ROBOT``).
FIRMWARE_ELF = FIRMWARE_BUILD / "firmware-pil.elf"
#: The emulator and the board it emulates.
QEMU = "qemu-system-arm"
MACHINE = "mps2-an385"
#: Seconds QEMU may take to print its pty (a busy machine is slow, not broken).
START_TIMEOUT = 30.0


def qemu_command(elf: Path, plant_socket: str) -> list[str]:
    """The ``qemu-system-arm`` command line: UART0 on a pty, UART1 on ``plant_socket``."""
    return [
        QEMU,
        "-M",
        MACHINE,
        "-nographic",
        "-monitor",
        "none",
        "-serial",
        "pty",
        "-chardev",
        f"socket,id=plant,path={plant_socket}",
        "-serial",
        "chardev:plant",
        "-kernel",
        str(elf),
    ]


def default_elf(description: RobotDescription) -> Path:
    """The PIL build for ``description``: its own, else the default one.

    Its own is ``firmware/build/NAME/firmware-pil.elf`` (``make -C firmware pil ROBOT=NAME
    BUILD=build/NAME``); the default is :data:`FIRMWARE_ELF` (``make firmware``: arm6).
    """
    own = FIRMWARE_BUILD / description.name / "firmware-pil.elf"
    return own if own.is_file() else FIRMWARE_ELF


def _check_tools(elf: Path) -> None:
    if shutil.which(QEMU) is None:
        raise ConfigurationError(
            f"device=firmware needs {QEMU}, which is not on PATH: install the Debian package "
            "qemu-system-arm (`make firmware-deps` does, as root)"
        )
    if not elf.is_file():
        raise ConfigurationError(
            f"device=firmware needs the firmware's PIL build {elf}, which is missing: run "
            "`make firmware` (or `make -C firmware pil ROBOT=NAME_OR_PATH` for another robot; "
            "the toolchain is the Debian packages gcc-arm-none-eabi libnewlib-arm-none-eabi)"
        )


def _check_robot(elf: Path, description: RobotDescription) -> None:
    """Refuse a build made for another robot: its parameters hold the description's digest."""
    if bytes.fromhex(description_digest(description)) not in elf.read_bytes():
        raise ConfigurationError(
            f"the firmware build {elf} is not for robot {description.name!r} (its description "
            f"digest {description_digest(description)[:16]}... is not in it): run "
            f"`make -C firmware pil "
            f"ROBOT={description.name} BUILD=build/{description.name}` (ROBOT a robot file's "
            "path for a robot of your own)"
        )


def _stop(process: subprocess.Popen[str], plant: PlantServer, directory: str) -> None:
    """Kill QEMU, stop the plant, remove the socket's directory (idempotent)."""
    if process.poll() is None:
        process.kill()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - a kill is not refused
        pass
    if process.stdout is not None:
        process.stdout.close()
    plant.close()
    shutil.rmtree(directory, ignore_errors=True)


class FirmwareDevice:
    """The reference firmware in QEMU with JointLab's physics as its plant.

    Args:
        description: The robot the firmware was built for (its digest is checked by the
            host at HELLO).
        lockstep: Virtual time: the firmware ticks on REQ STEP (else on its SysTick).
        seed: Seed of the plant's simulator.
        elf: The PIL build (default :func:`default_elf`).

    Raises:
        ConfigurationError: ``qemu-system-arm`` or the firmware build is missing, or the
            build is for another robot.
        LinkError: QEMU did not start (its output is quoted).
    """

    def __init__(
        self,
        description: RobotDescription,
        *,
        lockstep: bool = False,
        seed: int = 0,
        elf: Path | None = None,
    ) -> None:
        elf = default_elf(description) if elf is None else Path(elf)
        _check_tools(elf)
        _check_robot(elf, description)
        self.description = description
        self.lockstep = bool(lockstep)
        self._directory = tempfile.mkdtemp(prefix="jointlab-pil-")
        socket_path = os.path.join(self._directory, "plant.sock")
        try:
            self.plant = PlantServer(description, socket_path, lockstep=lockstep, seed=seed)
        except BaseException:
            shutil.rmtree(self._directory, ignore_errors=True)
            raise
        self.plant.start()
        self.process = subprocess.Popen(
            qemu_command(elf, socket_path),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=normal_scheduling,  # never a fifo=1 emulator's SCHED_FIFO
        )
        self._finalizer = weakref.finalize(self, _stop, self.process, self.plant, self._directory)
        try:
            #: The pty of the firmware's host UART.
            self.path = self._read_pty()
        except BaseException:
            self.close()
            raise

    def _read_pty(self) -> str:
        seen, deadline = "", time.monotonic() + START_TIMEOUT
        stdout: Any = self.process.stdout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([stdout], [], [], 0.5)
            if ready:
                line = stdout.readline()
                seen += line
                match = re.search(r"(/dev/pts/\d+)", line)
                if match:
                    return match[1]
                if not line and self.process.poll() is not None:
                    break
        raise LinkError(
            f"{QEMU} did not start the firmware (exit {self.process.poll()}): "
            f"{seen.strip()[-400:]!r}"
        )

    @property
    def running(self) -> bool:
        """True while QEMU runs."""
        return self.process.poll() is None

    def close(self) -> None:
        """Stop QEMU and the plant; safe to call twice."""
        self._finalizer()

    def __enter__(self) -> FirmwareDevice:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
