"""ROS 2 bridge: command-to-state latency over loopback, and the joint-state rate it holds.

    PYTHONPATH=. python benchmarks/ros2_latency.py [--seconds 4] [--rates 250 500 1000 2000]

Two processes, as a ROS user has them: ``jointlab ros2 sim://arm6?control_dt=DT`` and this
script's own rclpy node, in a ROS domain of their own with discovery on this host only.

**Latency.** The client streams effort commands to ``wrist_yaw`` at the control rate
(100 Hz and 1 kHz), each with a value of its own; the bridge applies the torque exactly
(PD off, within the soft limit), so the first ``/joint_states`` whose ``effort`` carries the
value is the first state the command produced. Latency = its arrival minus the command's
send, wall clock, one machine. Printed: median and p99, and the same ratio against the
**peer**: the round trip of a bare rclpy echo node (JointState in, the same JointState out,
no robot) measured in the same run, the floor any Python ROS 2 node sits on here.

**Cost.** One bridge period (its requests, a Commander tick, ``step()``, publishing the
joint state and ``/clock``, the state watch) against the raw loop (Commander tick +
``step()``) in the same process, unpaced: the ratio, and the ceiling of periods per second.

**Rate.** For each control rate the bridge publishes every period; the client counts the
messages of a window against the periods the stamps span (drops) and the robot seconds the
bridge advanced per wall second (1.0 = it kept real time). The highest rate with no drop and
at least 0.98 of real time is "held".
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from _report import header, load

ROOT = Path(__file__).resolve().parents[1]
DOMAIN = 1 + (os.getpid() + 50) % 100
NAMESPACE = f"/bench{os.getpid()}"

ECHO = """
import rclpy, sys
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
rclpy.init(domain_id=int(sys.argv[1]), signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node("echo", namespace=sys.argv[2])
out = node.create_publisher(JointState, "pong", 10)
node.create_subscription(JointState, "ping", out.publish, 10)
try:
    rclpy.spin(node)
except Exception:
    pass
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        ROS_DOMAIN_ID=str(DOMAIN),
        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
    )
    return env


class Node:
    """This script's rclpy node, spinning in a thread; keeps (arrival, message) pairs."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.signals import SignalHandlerOptions
        from sensor_msgs.msg import JointState

        os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # a script may
        rclpy.init(domain_id=DOMAIN, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node("bench", namespace=NAMESPACE)
        self.received: list[tuple[float, Any]] = []
        self.pongs: list[tuple[float, Any]] = []
        self.node.create_subscription(
            JointState,
            "joint_states",
            lambda m: self.received.append((time.perf_counter(), m)),
            1000,
        )
        self.node.create_subscription(
            JointState, "pong", lambda m: self.pongs.append((time.perf_counter(), m)), 100
        )
        self.commands = self.node.create_publisher(JointState, "joint_commands", 10)
        self.pings = self.node.create_publisher(JointState, "ping", 10)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while self.running:
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        """Stop spinning and shut rclpy down (threads left running abort the interpreter)."""
        import rclpy

        self.running = False
        self.thread.join(timeout=2)
        self.executor.shutdown(timeout_sec=1)
        self.node.destroy_node()
        rclpy.shutdown()

    def wait_for(
        self, what: list, count: int, timeout: float, process: subprocess.Popen | None = None
    ) -> None:
        """Wait until ``what`` holds ``count`` messages; exit when it does not in time."""
        deadline = time.monotonic() + timeout
        while len(what) < count and time.monotonic() < deadline:
            if process is not None and process.poll() is not None:
                break
            time.sleep(0.01)
        if len(what) < count:
            said = _stop(process) if process is not None else ""
            raise SystemExit(f"no messages after {timeout} s; the bridge said: {said[-2000:]}")


def _bridge(control_dt: float) -> subprocess.Popen:
    # Above 1 kHz the physics step shrinks with the period (dt must divide control_dt).
    url = f"sim://arm6?control_dt={control_dt}" + (f"&dt={control_dt}" if control_dt < 1e-3 else "")
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
        "--domain-id",
        str(DOMAIN),
        "--depth",
        "1000",
    ]
    return subprocess.Popen(
        args, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _stop(process: subprocess.Popen) -> str:
    process.terminate()
    try:
        out, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out


def latency(node: Node, rate: float, seconds: float) -> np.ndarray:
    """Command-to-state latencies (s) of effort commands streamed at ``rate`` Hz."""
    from sensor_msgs.msg import JointState

    process = _bridge(1.0 / rate)
    try:
        node.received.clear()
        node.wait_for(node.received, 20, 60, process)
        time.sleep(0.5)
        count = int(seconds * rate)
        sent = np.zeros(count)
        values = 0.01 + 1e-6 * np.arange(count)
        msg = JointState()
        msg.name = ["wrist_yaw"]
        start = time.perf_counter()
        for k in range(count):
            msg.effort = [float(values[k])]
            target = start + k / rate
            while (now := time.perf_counter()) < target:
                time.sleep(min(target - now, 0.0005))
            sent[k] = time.perf_counter()
            node.commands.publish(msg)
        time.sleep(0.5)
        arrivals = [(t, m.effort[5]) for t, m in list(node.received) if t >= start]
    finally:
        _stop(process)
    first = {}
    for t, value in arrivals:
        k = round((value - 0.01) * 1e6)
        if 0 <= k < count and abs(values[k] - value) < 1e-12 and k not in first:
            first[k] = t
    seen = np.array(sorted(first))
    return np.array([first[k] - sent[k] for k in seen])


def echo_round_trip(node: Node, count: int) -> np.ndarray:
    """Round trips (s) of a bare rclpy echo node: the peer."""
    from sensor_msgs.msg import JointState

    echo = subprocess.Popen([sys.executable, "-c", ECHO, str(DOMAIN), NAMESPACE], env=_env())
    try:
        msg = JointState()
        msg.name = ["wrist_yaw"]
        msg.effort = [0.0]
        deadline = time.monotonic() + 30
        while not node.pongs and time.monotonic() < deadline:
            node.pings.publish(msg)
            time.sleep(0.05)
        times = []
        for k in range(count):
            node.pongs.clear()
            msg.effort = [float(k + 1)]
            start = time.perf_counter()
            node.pings.publish(msg)
            while not any(m.effort[0] == k + 1 for _, m in list(node.pongs)):
                if time.perf_counter() - start > 1.0:
                    break
                time.sleep(0.00005)
            else:
                times.append(next(t for t, m in node.pongs if m.effort[0] == k + 1) - start)
            time.sleep(0.002)
    finally:
        echo.terminate()
        echo.wait()
    return np.array(times)


def publish_rate(node: Node, rate: float, seconds: float) -> tuple[int, int, float, str]:
    """(received, expected from the stamps, robot s per wall s, bridge summary) at ``rate``."""
    process = _bridge(1.0 / rate)
    try:
        node.received.clear()
        node.wait_for(node.received, 20, 60, process)
        time.sleep(0.5)
        node.received.clear()
        wall = time.perf_counter()
        time.sleep(seconds)
        window = list(node.received)
        wall = time.perf_counter() - wall
    finally:
        said = _stop(process).strip().splitlines()
        summary = said[-1] if said else f"(no output; exit status {process.returncode})"
    stamps = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for _, m in window])
    expected = round((stamps[-1] - stamps[0]) * rate) + 1
    return len(window), expected, float((stamps[-1] - stamps[0]) / wall), summary


def tick_costs(periods: int = 2000) -> tuple[float, float]:
    """Seconds per period in this process, unpaced: the raw loop and a bridge's tick.

    The raw loop is a Commander tick and ``step()``; the bridge's tick adds its requests,
    publishing and the state watch.
    """
    import jointlab
    from jointlab.controllers import Commander
    from jointlab.interop.ros2 import Ros2Bridge

    with jointlab.connect("sim://arm6?control_dt=0.001") as robot:
        commander = Commander(robot)
        for _ in range(200):
            commander.update()
            robot.step()
        start = time.perf_counter()
        for _ in range(periods):
            commander.update()
            robot.step()
        raw = (time.perf_counter() - start) / periods
        with Ros2Bridge(robot, commander=commander, domain_id=(DOMAIN + 1) % 100) as bridge:
            for _ in range(200):
                bridge.tick()
            start = time.perf_counter()
            for _ in range(periods):
                bridge.tick()
            tick = (time.perf_counter() - start) / periods
    return raw, tick


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rates", type=float, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--skip-latency", action="store_true", help="only the rates")
    args = parser.parse_args()
    header("ROS 2 bridge over loopback")
    raw, tick = tick_costs()
    print(
        f"one period, unpaced: raw loop (Commander + step) {raw * 1e6:.0f} us, bridge tick "
        f"{tick * 1e6:.0f} us ({tick / raw:.2f}x the raw loop): at most {1 / tick:.0f} "
        "periods per second in this process now"
    )
    node = Node()
    peer = echo_round_trip(node, 500)
    print(
        f"peer: bare rclpy echo round trip over loopback: median {np.median(peer) * 1e3:.3f} "
        f"ms, p99 {np.percentile(peer, 99) * 1e3:.3f} ms ({peer.size} pings)"
    )
    for rate in () if args.skip_latency else (100.0, 1000.0):
        lat = latency(node, rate, args.seconds)
        med, p99 = np.median(lat), np.percentile(lat, 99)
        print(
            f"command-to-state at {rate:g} Hz: median {med * 1e3:.3f} ms, p99 {p99 * 1e3:.3f} "
            f"ms ({lat.size} of {int(args.seconds * rate)} commands seen; "
            f"{med / np.median(peer):.1f}x / {p99 / np.percentile(peer, 99):.1f}x the peer's)"
        )
    held = None
    for rate in args.rates:
        got, expected, realtime, summary = publish_rate(node, rate, args.seconds)
        drops = max(0, expected - got)
        ok = drops == 0 and realtime >= 0.98
        held = rate if ok else held
        print(
            f"joint states at {rate:g} Hz: {got} received of {expected} stamped "
            f"({drops} dropped), {realtime:.3f} robot s per wall s -> "
            f"{'held' if ok else 'NOT held'}; bridge: {summary}"
        )
    print(
        f"highest joint-state rate held without drops: {held:g} Hz"
        if held
        else "no joint-state rate was held without drops in real time"
    )
    print(f"end: {load()}; this script's niceness {os.nice(0)} (the bridge's too)")
    node.close()


if __name__ == "__main__":
    main()
