"""LeRobot interop tests: LeRobot's own drivers against JointLab's emulated servo buses.

LeRobot (``lerobot==0.4.4``, installed by ``make test`` without its pinned torch, next to
the torch/torchvision pair the project pins) must import, with the real torchvision.
"""

from __future__ import annotations

import importlib
import os

import pytest

if os.environ.get("CI") != "true":
    pytest.importorskip("lerobot", reason="LeRobot interop needs `make test` (lerobot extra)")


@pytest.fixture(autouse=True)
def patient_host_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    """The host waits up to about 200 ms for a reply instead of 34 ms (Dynamixel) or 50 ms.

    ``dynamixel_sdk`` times a reply out after twice its ``LATENCY_TIMER`` (an FTDI
    adapter's setting, adjustable on real hosts) plus the wire time; LeRobot's Feetech bus
    after 50 ms plus the wire time (its ``patch_setPacketTimeout``). The emulated bus runs
    in its own process on the wall clock (the tests ask for SCHED_FIFO, granted to root),
    and a loaded 2-core test machine can still leave it unscheduled for longer than that,
    which reads as a missing servo. The protocol, the replies and their order are
    unchanged; only the host waits longer before it gives up.
    """
    for name in ("dynamixel_sdk.port_handler", "scservo_sdk.port_handler"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        monkeypatch.setattr(module, "LATENCY_TIMER", 100)
    try:
        feetech = importlib.import_module("lerobot.motors.feetech.feetech")
    except Exception:  # LeRobot missing: the tests skip (or fail in CI) on their own
        return

    def patient_timeout(self, packet_length):
        self.packet_start_time = self.getCurrentTime()
        self.packet_timeout = self.tx_time_per_byte * (packet_length + 3.0) + 200.0

    monkeypatch.setattr(feetech, "patch_setPacketTimeout", patient_timeout)
