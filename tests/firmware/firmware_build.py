"""Builds of the reference firmware (firmware/) for the tests: make targets, ctypes loading.

Without a C compiler (or, for the Cortex-M tests, without arm-none-eabi-gcc / qemu-system-arm)
the tests skip, except in CI (``CI`` set), where a missing tool is a failure: `make test`
installs the Debian packages first (Makefile, ``firmware-deps``).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware"
BUILD = FIRMWARE / "build"


def require(*tools: str) -> None:
    """Skip (fail in CI) unless every tool is on PATH."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        message = f"firmware tests need {', '.join(missing)} (make firmware-deps installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def make(target: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """Run ``make -C firmware TARGET``; fail the test with its output if it fails."""
    args = ["make", "-s", "-C", str(FIRMWARE), target]
    args += [f"{key}={value}" for key, value in variables.items()]
    BUILD.mkdir(exist_ok=True)
    with open(BUILD / ".lock", "w") as lock:  # pytest-xdist workers share firmware/build
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if result.returncode:
        pytest.fail(f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


_F32P = ctypes.POINTER(ctypes.c_float)
_U8P = ctypes.POINTER(ctypes.c_uint8)


def f32(values: object) -> ctypes.Array:
    """A C float array of ``values``."""
    array = np.ascontiguousarray(values, dtype=np.float32)
    return (ctypes.c_float * len(array))(*array.tolist())


class HostFirmware:
    """The host build of the core (``libjlhost.so``) behind a small Python face."""

    def __init__(self) -> None:
        require("cc", "make")
        make("host-lib")
        lib = ctypes.CDLL(str(BUILD / "libjlhost.so"))
        lib.jlh_take.restype = ctypes.c_size_t
        lib.jlh_torque.restype = _F32P
        lib.jl_armed.restype = ctypes.c_bool
        lib.jl_watchdog_engaged.restype = ctypes.c_bool
        lib.jl_stats.restype = ctypes.POINTER(ctypes.c_uint32 * 15)
        self.lib = lib
        self.dof = 0

    def start(self, description: object, digest: bytes, q: object = None) -> None:
        """Power the core up with a robot description's parameters, the joints at ``q``."""
        d = description
        dof = int(d.dof)
        self.dof = dof
        self.set_joints(np.zeros(dof) if q is None else q, np.zeros(dof))
        brakes = (ctypes.c_uint8 * dof)(*[int(b) for b in d.has_brakes])
        self.lib.jlh_init(
            dof,
            f32(d.default_kp),
            f32(d.default_kd),
            f32(d.effort_limit),
            f32(d.lower),
            f32(d.upper),
            f32(d.velocity_limit),
            f32(d.config_speed),
            f32(d.acceleration_limit),
            f32(d.home),
            brakes,
            (ctypes.c_uint8 * 32)(*digest),
        )

    def set_joints(self, q: object, qd: object) -> None:
        """What the encoders read from now on."""
        q_arr, qd_arr = f32(q), f32(qd)
        self.lib.jlh_set_joints(q_arr, qd_arr, len(q_arr))

    def joints(self) -> tuple[np.ndarray, np.ndarray]:
        """What the encoders read now: ``q``, ``qd`` (float32)."""
        q, qd = (ctypes.c_float * self.dof)(), (ctypes.c_float * self.dof)()
        self.lib.jlh_joints(q, qd)
        return np.array(q[:], np.float32), np.array(qd[:], np.float32)

    def feed(self, data: bytes) -> None:
        """Bytes from the host."""
        self.lib.jl_receive(data, ctypes.c_size_t(len(data)))

    def tick(self, n: int = 1) -> None:
        """Run ``n`` ticks."""
        for _ in range(n):
            self.lib.jl_tick()

    def take(self) -> bytes:
        """Bytes the device sent since the last call."""
        buf = (ctypes.c_uint8 * 65536)()
        n = self.lib.jlh_take(buf, ctypes.c_size_t(len(buf)))
        return bytes(buf[:n])

    def torque(self) -> np.ndarray:
        """Torques written to the motors at the last tick."""
        return np.ctypeslib.as_array(self.lib.jlh_torque(), shape=(self.dof,)).copy()

    def stats(self) -> dict[str, int]:
        """The core's link counters (jl_stats_t)."""
        names = (
            "bytes_received",
            "frames",
            "cobs_errors",
            "runts",
            "crc_errors",
            "overruns",
            "malformed",
            "unknown_types",
            "version_mismatches",
            "sequence_gaps",
            "frames_missed",
            "out_of_order",
            "commands_accepted",
            "commands_refused",
            "frames_sent",
        )
        return dict(zip(names, list(self.lib.jl_stats().contents), strict=True))

    def law(self, action: object, q: object, qd: object) -> np.ndarray:
        """The core's resolve + law on one NJointAction (float32) at state ``q``, ``qd``."""
        tau = (ctypes.c_float * self.dof)()
        fields = [
            f32(getattr(action, name))
            for name in ("torque", "position", "position_kp", "position_kd", "velocity")
        ]
        self.lib.jlh_law(*fields, f32(q), f32(qd), tau)
        return np.array(tau[:], dtype=np.float32)
