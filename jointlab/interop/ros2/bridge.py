"""``Ros2Bridge(robot)``: any JointLab robot as a ROS 2 node (``jointlab ros2 URL``).

The node (rclpy, in its own context, so it never touches an application's own
``rclpy.init``) offers, under the names of :class:`~.config.BridgeConfig`:

* ``/joint_states`` (``sensor_msgs/JointState``: name, position, velocity, effort = the
  applied torque) every control period or at ``rate``, stamped with the robot's time: the
  simulated time for a simulated robot, which also gets ``/clock`` (``use_sim_time``), and
  the ROS clock at the start plus the robot's time for a device;
* ``/joint_commands`` (``JointState``, the ``joint_state_topic_hardware_interface``
  contract, checked by :mod:`.messages`) streamed to the Commander (``Commander.stream``);
* ``/joint_trajectory`` (``trajectory_msgs/JointTrajectory``) through
  ``Commander.follow_trajectory``; an empty one stops (decelerating) and holds;
* ``~/arm``, ``~/disarm``, ``~/hold`` (``std_srvs/Trigger``);
* ``~/events`` (``std_msgs/String``, one JSON object each, :mod:`.events`): refusals naming
  the message field, soft-limit clamps and entries, stalls and faults (:mod:`.watch`);
* ``/robot_description`` (``std_msgs/String``, transient local): the robot's URDF.

Threads: the ROS executor runs in a background thread and only receives: it checks a
message (:mod:`.messages`) and queues it (:mod:`.inbox`); service calls wait for their
answer. Everything that touches the robot or publishes runs on the control thread, in
:meth:`Ros2Bridge.tick`: take the queued requests, one Commander tick (so every command
passes the same safety layer as every other Commander command), ``robot.step()``, publish.
:meth:`Ros2Bridge.run` paces a simulated robot in wall-clock time (a device paces itself).
"""

from __future__ import annotations

import array
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jointlab.contract import Robot
from jointlab.controllers.commander import Commander
from jointlab.errors import CommandRefused, JointLabError, LinkError
from jointlab.extras import require
from jointlab.faults import FAULTS, fault_fields, stop_after_fault
from jointlab.interop.ros2.config import BridgeConfig
from jointlab.interop.ros2.events import EventPublisher
from jointlab.interop.ros2.inbox import Inbox, RequestKind, ServiceCall
from jointlab.interop.ros2.messages import (
    BadMessage,
    JointCommand,
    TrajectoryPoint,
    TrajectoryRequest,
    joint_command,
    joint_trajectory,
)
from jointlab.interop.ros2.ros2_control import urdf_with_ros2_control
from jointlab.interop.ros2.watch import StateWatch
from jointlab.robots.urdf_io import description_to_urdf

__all__ = ["BridgeStatistics", "Ros2Bridge"]

#: Modules of the ``ros2`` extra the bridge imports.
ROS_MODULES = (
    "rclpy",
    "sensor_msgs.msg",
    "trajectory_msgs.msg",
    "std_msgs.msg",
    "std_srvs.srv",
    "rosgraph_msgs.msg",
)
#: Seconds a service call waits for the control loop.
SERVICE_TIMEOUT = 5.0


@dataclass
class BridgeStatistics:
    """Counters of a bridge's run."""

    #: Control periods run.
    ticks: int = 0
    #: Joint-state messages published.
    states: int = 0
    #: Commands and trajectories received, and how many were refused.
    commands: int = 0
    refused: int = 0
    #: Periods the wall-clock pacing of a simulated robot fell more than 10 periods behind
    #: (it then restarts from the present instead of catching up in a burst).
    late: int = 0
    #: Commands skipped because a newer one for the same joints and fields was queued
    #: behind them in the same period (counted in ``commands`` too).
    superseded: int = 0
    #: Events published.
    events: int = 0


def _stamp(msg_time: Any, seconds: float) -> None:
    whole = math.floor(seconds)
    msg_time.sec = int(whole)
    msg_time.nanosec = min(round((seconds - whole) * 1e9), 999_999_999)


class Ros2Bridge:
    """A ROS 2 node that publishes ``robot``'s state and follows commands (module docstring).

    Args:
        robot: Any backend; the bridge drives it (call :meth:`run`, or :meth:`tick` per period).
        config: Names, rates and QoS (default: :class:`BridgeConfig`).
        commander: The Commander every command goes through (default: a new one).
        domain_id: ROS domain of the node (default: ``ROS_DOMAIN_ID``, else 0).
        ros2_control: Publish the URDF with a ``<ros2_control>`` block for the bridge's topics.

    Raises:
        MissingExtraError: the ``ros2`` extra is not installed.
        ConfigurationError: a bad configuration (names, a rate that does not divide the
            control rate).
    """

    def __init__(
        self,
        robot: Robot,
        config: BridgeConfig | None = None,
        *,
        commander: Commander | None = None,
        domain_id: int | None = None,
        ros2_control: bool = False,
    ) -> None:
        rclpy = require("ros2", "the ROS 2 bridge", *ROS_MODULES)[0]
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.signals import SignalHandlerOptions
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState

        self.robot = robot
        self.config = config = config or BridgeConfig()
        self.commander = commander or Commander(robot)
        self.description = robot.description
        self.statistics = BridgeStatistics()
        self._every = config.publish_every(robot.control_dt)
        self._clock_on = (
            not robot.realtime if config.publish_clock is None else config.publish_clock
        )
        self._inbox = Inbox()
        self._watch = StateWatch(self.description)
        self._disarm_next = False
        self._reported: BaseException | None = None  # the last fault published by _on_fault
        self._closed = False
        # The ROS clock at robot time 0, for a device's stamps (a simulated robot: 0).
        self._epoch = 0.0 if not robot.realtime else time.time() - robot.time
        self._context = rclpy.context.Context()
        rclpy.init(
            context=self._context,
            domain_id=domain_id,
            signal_handler_options=SignalHandlerOptions.NO,
        )
        try:
            self.node = rclpy.create_node(
                config.node_name, namespace=config.namespace or None, context=self._context
            )
            self._make_endpoints(ros2_control)
        except BaseException:
            rclpy.shutdown(context=self._context)
            raise
        self._state_msg = JointState()
        self._state_msg.name = list(self.description.joint_names)
        self._clock_msg = Clock()
        self._unsubscribe = self.commander.subscribe(self.events.on_command_event)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self.node)
        self._spinner = threading.Thread(target=self._spin, name="jointlab-ros2", daemon=True)
        self._spinner.start()

    # ================================================================ endpoints
    def _qos(self, reliability: str, depth: int, latched: bool = False) -> Any:
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

        return QoSProfile(
            history=HistoryPolicy.KEEP_LAST,
            depth=depth,
            reliability=(
                ReliabilityPolicy.RELIABLE
                if reliability == "reliable"
                else ReliabilityPolicy.BEST_EFFORT
            ),
            durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
        )

    def _make_endpoints(self, ros2_control: bool) -> None:
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from std_srvs.srv import Trigger
        from trajectory_msgs.msg import JointTrajectory

        c, node = self.config, self.node
        states = self._qos(c.state_reliability, c.state_depth)
        commands = self._qos(c.command_reliability, c.command_depth)
        self._states = node.create_publisher(JointState, c.joint_states_topic, states)
        self._clock = (
            node.create_publisher(Clock, c.clock_topic, states) if self._clock_on else None
        )
        events = node.create_publisher(String, c.events_topic, self._qos("reliable", 100))
        self.events = EventPublisher(
            lambda text: events.publish(String(data=text)), self.description.joint_names
        )
        self._description_pub = node.create_publisher(
            String, c.robot_description_topic, self._qos("reliable", 1, latched=True)
        )
        urdf = (
            urdf_with_ros2_control(
                self.description,
                joint_states_topic=c.joint_states_topic,
                joint_commands_topic=c.joint_commands_topic,
            )
            if ros2_control
            else description_to_urdf(self.description)
        )
        self._description_pub.publish(String(data=urdf))
        node.create_subscription(
            JointState, c.joint_commands_topic, self._on_joint_command, commands
        )
        node.create_subscription(
            JointTrajectory, c.joint_trajectory_topic, self._on_trajectory, commands
        )
        for verb, name in (
            ("arm", c.arm_service),
            ("disarm", c.disarm_service),
            ("hold", c.hold_service),
        ):
            node.create_service(Trigger, name, self._service(verb))

    def _spin(self) -> None:
        import rclpy
        from rclpy.executors import ExternalShutdownException

        while not self._closed and rclpy.ok(context=self._context):
            try:
                self._executor.spin_once(timeout_sec=0.05)
            except (ExternalShutdownException, RuntimeError):  # closed under it
                if self._closed:
                    return
                raise

    # ================================================================ receiving (ROS thread)
    def _on_joint_command(self, msg: Any) -> None:
        source = self.config.joint_commands_topic
        try:
            command = joint_command(
                self.description, msg.name, msg.position, msg.velocity, msg.effort
            )
        except BadMessage as error:
            self._inbox.put(RequestKind.BAD, source, error)
            return
        self._inbox.put(RequestKind.COMMAND, source, command)

    def _on_trajectory(self, msg: Any) -> None:
        source = self.config.joint_trajectory_topic
        try:
            points = [
                TrajectoryPoint(
                    p.positions,
                    p.velocities,
                    p.accelerations,
                    p.effort,
                    p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec,
                )
                for p in msg.points
            ]
            request = joint_trajectory(self.description, msg.joint_names, points)
        except BadMessage as error:
            self._inbox.put(RequestKind.BAD, source, error)
            return
        self._inbox.put(RequestKind.TRAJECTORY, source, request)

    def _service(self, verb: str) -> Callable[[Any, Any], Any]:
        def answer(request: Any, response: Any) -> Any:
            call = ServiceCall(verb)
            self._inbox.put(RequestKind.SERVICE, verb, call)
            if call.done.wait(SERVICE_TIMEOUT):
                response.success, response.message = call.result
            else:
                response.success = False
                response.message = f"{verb}: the control loop did not answer in {SERVICE_TIMEOUT} s"
            return response

        return answer

    # ================================================================ the control thread
    def tick(self) -> None:
        """One control period: queued requests, a Commander tick, ``robot.step()``, publish.

        A fault of the robot (:data:`jointlab.faults.FAULTS`) follows the one rule (held one
        period, disarmed) and is published as a ``fault`` event. A device's fault leaves the
        node running (disarmed: a client can re-arm it); a lost link (a
        :class:`~jointlab.errors.LinkError`, a lost servo too) is then raised.
        """
        self._take_requests()
        if self._disarm_next:  # a fault: held for one period, now disarmed
            self._disarm_next = False
            self._watch.disarm_requested = True
            self.robot.disarm()
        self.events.source = "commander"
        try:
            self.commander.update()
            self.robot.step()
        except FAULTS as error:  # the robot stopped itself: the one rule, then report it
            self._on_fault(error)
            if isinstance(error, LinkError):  # nothing answers: the loop ends with it
                raise
            return
        state = self.robot.read()
        stats = self.statistics
        stats.ticks += 1
        if stats.ticks % self._every == 0:  # /clock at the same cadence as the states
            if self._clock is not None:
                _stamp(self._clock_msg.clock, state.time)
                self._clock.publish(self._clock_msg)
            self._publish_state(state)
        for event in self._watch.check(state):
            self.events.publish(
                "state", event.kind, event.time, list(event.joints), event.message, event.data
            )
            if event.is_fault and state.armed:
                self.commander.stop()
                self._disarm_next = True
        self.events.end_period()
        self.statistics.events = self.events.count

    def _on_fault(self, error: BaseException) -> None:
        """A fault the robot raised: hold and disarm (the one rule), a ``fault`` event."""
        self._reported = error
        stop_after_fault(self.robot, error)
        self.commander.stop()
        fields = fault_fields(error)
        joint = fields.pop("joint", None)
        message = fields.pop("message")
        try:
            time = float(self.robot.time)
        except Exception:
            time = 0.0
        self.events.publish("state", "fault", time, [joint] if joint else [], message, fields)
        self.events.end_period()
        self.statistics.events = self.events.count

    def _publish_state(self, state: Any) -> None:
        msg = self._state_msg
        _stamp(msg.header.stamp, self._epoch + state.time)
        msg.position = array.array("d", state.position.tobytes())
        msg.velocity = array.array("d", state.velocity.tobytes())
        msg.effort = array.array("d", state.torque.tobytes())
        self._states.publish(msg)
        self.statistics.states += 1

    def _take_requests(self) -> None:
        requests, superseded = self._inbox.take()
        self.statistics.commands += superseded
        self.statistics.superseded += superseded
        for request in requests:
            self.events.source = request.source
            if request.kind is RequestKind.SERVICE:
                self._answer(request.payload)
                continue
            self.statistics.commands += 1
            try:
                if request.kind is RequestKind.BAD:
                    self._refuse_message(request.source, request.payload)
                elif request.kind is RequestKind.COMMAND:
                    self._stream(request.payload)
                else:
                    self._follow(request.payload)
            except CommandRefused:  # the Commander published the refused event
                self.statistics.refused += 1

    def _refuse_message(self, source: str, error: BadMessage) -> None:
        self.statistics.refused += 1
        self.events.publish(
            source,
            "refused",
            self.robot.time,
            [],
            str(error),
            {"reason": error.reason, "field": error.field},
        )

    def _stream(self, command: JointCommand) -> None:
        self.commander.stream(
            command.position,
            command.velocity,
            command.effort,
            command.joints.tolist(),
            stale_after=self.config.command_timeout,
        )

    def _follow(self, request: TrajectoryRequest) -> None:
        if not request.waypoints:
            self.commander.stop("decelerate")
        else:
            self.commander.follow_trajectory(request.waypoints, request.joints.tolist())

    def _answer(self, call: ServiceCall) -> None:
        verb = call.verb
        try:
            if verb == "arm":
                self.robot.arm()
                call.answer(True, "armed: holding the present pose")
            elif verb == "disarm":
                self._watch.disarm_requested = True
                self.robot.disarm()
                call.answer(True, "disarmed")
            else:
                self.commander.hold()
                call.answer(True, "holding the present pose")
        except JointLabError as error:
            self.events.publish(
                verb,
                "refused",
                self.robot.time,
                [],
                str(error),
                {"reason": getattr(error, "reason", type(error).__name__)},
            )
            call.answer(False, f"{verb} refused: {error}")
        finally:
            if not call.done.is_set():  # an unexpected error: the call must not hang
                call.answer(False, f"{verb} failed")

    # ================================================================ running
    def run(self, seconds: float | None = None, stop: threading.Event | None = None) -> None:
        """Tick until ``seconds`` of robot time passed, ``stop`` is set, or Ctrl-C.

        A simulated robot is paced to ``real_time_factor`` wall seconds per robot second;
        a device paces itself (``step()`` waits for its tick).

        Raises:
            LinkError: the link to a device, or a servo, was lost (after the one rule of
                :func:`jointlab.faults.stop_after_fault`, published as a ``fault`` first).
        """
        dt = self.robot.control_dt
        paced = not self.robot.realtime
        period = dt * self.config.real_time_factor
        end = math.inf if seconds is None else self.robot.time + seconds - 0.5 * dt
        deadline = time.perf_counter()
        while self.robot.time < end and not (stop is not None and stop.is_set()):
            try:
                self.tick()
            except LinkError as error:
                if error is not self._reported:  # not from the step (already published)
                    self.events.publish(
                        "robot", "fault", self.robot.time, [], str(error), {"reason": "link_lost"}
                    )
                raise
            if paced:
                deadline += period
                delay = deadline - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                elif delay < -10 * period:
                    self.statistics.late += 1
                    deadline = time.perf_counter()

    def close(self) -> None:
        """Stop the ROS thread and destroy the node (the robot stays open: it is yours)."""
        if self._closed:
            return
        import rclpy

        self._closed = True
        self._unsubscribe()
        self._spinner.join(timeout=2.0)
        self._executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.shutdown(context=self._context)

    def __enter__(self) -> Ros2Bridge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def publish_every(self) -> int:
        """Control periods between two joint-state messages."""
        return self._every

    def pending(self) -> bool:
        """True while received requests wait for the next tick."""
        return not self._inbox.empty()
