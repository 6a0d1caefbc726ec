"""ROS 2 tests: the bridge (``jointlab ros2``) in one process, a client rclpy node in this one.

See ros_nodes.py for how the two are kept apart from other runs on the same machine. The
tests that need rclpy skip without the ``ros2`` extra (outside CI); ``make test`` installs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ros_nodes import NAMESPACE, BridgeProcess, Client


@pytest.fixture(autouse=True)
def _localhost_discovery(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


@pytest.fixture
def bridge_of(tmp_path: Path) -> Iterator[Callable[..., tuple[BridgeProcess, Client]]]:
    """Start ``jointlab ros2 URL ...`` and a client; both stopped at the end."""
    started: list[tuple[BridgeProcess, Client]] = []

    def start(url: str, *extra: str) -> tuple[BridgeProcess, Client]:
        bridge = BridgeProcess(url, *extra, log=tmp_path / f"bridge{len(started)}.log")
        client = Client(NAMESPACE)
        started.append((bridge, client))
        client.wait(lambda: client.states or not bridge.alive(), 60, "the first joint state")
        assert bridge.alive(), bridge.output()
        return bridge, client

    yield start
    for bridge, client in started:
        client.close()
        bridge.stop()
