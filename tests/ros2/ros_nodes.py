"""Helpers of the ROS 2 tests: a client rclpy node and ``jointlab ros2`` in a subprocess.

The two meet over loopback in a ROS domain of their own (derived from this test run's
process id) with discovery limited to this machine, under a namespace of their own, so runs
of other sessions on the same machine cannot cross-talk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: One domain per test run (0 is everyone's default; 101 is the last a host can use).
DOMAIN = 1 + os.getpid() % 100
NAMESPACE = f"/jl{os.getpid()}"


def ros_environment() -> dict[str, str]:
    """The environment of the bridge process: this domain, discovery on this host only."""
    env = dict(os.environ)
    env.update(
        ROS_DOMAIN_ID=str(DOMAIN),
        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
    )
    return env


class Client:
    """A client rclpy node in its own context, spinning in a thread; records what it hears."""

    def __init__(self, namespace: str) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, QoSProfile
        from rclpy.signals import SignalHandlerOptions
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from trajectory_msgs.msg import JointTrajectory

        self.namespace = namespace
        self.context = rclpy.context.Context()
        rclpy.init(
            context=self.context, domain_id=DOMAIN, signal_handler_options=SignalHandlerOptions.NO
        )
        self.node = rclpy.create_node("client", namespace=namespace, context=self.context)
        self.lock = threading.Lock()
        self.states: list[tuple[float, Any]] = []  # (wall time received, message)
        self.events: list[dict[str, Any]] = []
        self.descriptions: list[str] = []
        self.clock: list[tuple[int, int]] = []
        node = self.node
        # The events reader before the states reader: DDS announces a participant's readers
        # in the order they were made, on one reliable stream, so a bridge that sends us
        # states (what the tests wait for) already knows this reader and sends it events.
        node.create_subscription(String, "jointlab/events", self._on_event, 100)
        node.create_subscription(JointState, "joint_states", self._on_state, 100)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(
            String, "/robot_description", lambda m: self.descriptions.append(m.data), latched
        )
        self.commands = node.create_publisher(JointState, "joint_commands", 10)
        self.trajectories = node.create_publisher(JointTrajectory, "joint_trajectory", 10)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(node)
        self._stop = False
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while not self._stop:
            self.executor.spin_once(timeout_sec=0.05)

    def _on_state(self, msg: Any) -> None:
        with self.lock:
            self.states.append((time.perf_counter(), msg))

    def _on_event(self, msg: Any) -> None:
        with self.lock:
            self.events.append(json.loads(msg.data))

    def subscribe_clock(self) -> None:
        """Record /clock as ``(sec, nanosec)``."""
        from rosgraph_msgs.msg import Clock

        self.node.create_subscription(
            Clock, "/clock", lambda m: self.clock.append((m.clock.sec, m.clock.nanosec)), 100
        )

    # ---------------------------------------------------------------- sending
    def command(
        self, names: list[str], position: Any = (), velocity: Any = (), effort: Any = ()
    ) -> None:
        from sensor_msgs.msg import JointState

        msg = JointState()
        msg.name = list(names)
        msg.position = [float(x) for x in position]
        msg.velocity = [float(x) for x in velocity]
        msg.effort = [float(x) for x in effort]
        self._publish(self.commands, msg)

    def trajectory(self, names: list[str], points: list[tuple[list[float], float]]) -> None:
        from builtin_interfaces.msg import Duration
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        msg = JointTrajectory()
        msg.joint_names = list(names)
        for positions, seconds in points:
            point = JointTrajectoryPoint()
            point.positions = [float(x) for x in positions]
            whole = int(seconds)
            point.time_from_start = Duration(sec=whole, nanosec=round((seconds - whole) * 1e9))
            msg.points.append(point)
        self._publish(self.trajectories, msg)

    def _publish(self, publisher: Any, msg: Any, timeout: float = 30.0) -> None:
        """Publish once the bridge's reader is matched: DDS drops (volatile) what a writer
        publishes before it knows a reader, and hearing the bridge's states says only that
        the bridge knows *our* states reader, not that we know its command readers."""
        deadline = time.monotonic() + timeout
        while publisher.get_subscription_count() == 0:
            assert time.monotonic() < deadline, (
                f"no reader of {publisher.topic_name} in {timeout} s"
            )
            time.sleep(0.01)
        publisher.publish(msg)

    def call(self, service: str, timeout: float = 30.0) -> Any:
        from std_srvs.srv import Trigger

        client = self.node.create_client(Trigger, f"jointlab/{service}")
        assert client.wait_for_service(timeout_sec=timeout), f"no {service} service"
        future = client.call_async(Trigger.Request())
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert future.done(), f"{service} did not answer in {timeout} s"
        return future.result()

    # ---------------------------------------------------------------- reading
    def latest(self) -> Any:
        with self.lock:
            return self.states[-1][1] if self.states else None

    def wait(self, predicate: Callable[[], Any], timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                result = predicate()
            if result:
                return result
            time.sleep(0.01)
        raise AssertionError(
            f"waited {timeout} s for {what}; last state "
            f"{self.states[-1][1] if self.states else None}, events "
            f"{self.events[-5:]}"
        )

    def event(self, timeout: float = 30.0, **match: Any) -> dict[str, Any]:
        """The first event whose fields equal ``match`` (waits for it)."""

        def found() -> dict[str, Any] | None:
            for event in self.events:
                if all(event.get(k) == v for k, v in match.items()):
                    return event
            return None

        return self.wait(found, timeout, f"an event {match}")

    def close(self) -> None:
        import rclpy

        self._stop = True
        self.thread.join(timeout=2)
        self.executor.shutdown(timeout_sec=1)
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


class BridgeProcess:
    """``jointlab ros2 URL`` in a subprocess, on this run's domain and namespace."""

    def __init__(self, url: str, *extra: str, log: Path) -> None:
        args = [
            sys.executable,
            "-m",
            "jointlab",
            "ros2",
            url,
            "--namespace",
            NAMESPACE,
            "--joint-states-topic",
            "joint_states",
            "--joint-commands-topic",
            "joint_commands",
            "--joint-trajectory-topic",
            "joint_trajectory",
            "--domain-id",
            str(DOMAIN),
            *extra,
        ]
        self.log = log
        self._file = log.open("w")
        self.process = subprocess.Popen(
            args, cwd=ROOT, env=ros_environment(), stdout=self._file, stderr=subprocess.STDOUT
        )

    def output(self) -> str:
        return self.log.read_text()

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> int:
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._file.close()
        return self.process.returncode
