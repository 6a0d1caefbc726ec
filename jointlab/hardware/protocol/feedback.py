"""Device-to-host messages carrying per-actuator records: DATA STATE and the GET_GEOM reply.

Payloads are fixed fields (with a uint8 actuator count) followed by packed records read and
written as numpy structured arrays (:data:`STATE_DTYPE`, :data:`GEOMETRY_DTYPE`): no
per-joint Python loops on the streaming path. Parsed messages hold read-only views of the
received bytes; :meth:`StateData.to_state` and :meth:`GeometryReply.to_geometry` convert to
the host types. See docs/protocol.md for layouts.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from jointlab.errors import PackingError
from jointlab.hardware.protocol.vectors import check_count, check_payload_length, float32_array
from jointlab.hardware.protocol.wire import (
    Message,
    MessageClass,
    PayloadLengthError,
    Reply,
    build,
    payload,
)
from jointlab.interface import ArrayState
from jointlab.robots.description import ActuatorGeometry, ArrayGeometry

__all__ = ["GEOMETRY_DTYPE", "STATE_DTYPE", "GeometryReply", "StateData"]

#: One DATA STATE actuator record: Player's ``player_actarray_actuator_t`` plus torque.
STATE_DTYPE = np.dtype(
    [
        ("position", "<f4"),
        ("speed", "<f4"),
        ("acceleration", "<f4"),
        ("current", "<f4"),
        ("torque", "<f4"),
        ("state", "u1"),
    ]
)
_STATE_FLOATS = ("position", "speed", "acceleration", "current", "torque")

#: One geometry record: Player's ``player_actarray_actuatorgeom_t``.
GEOMETRY_DTYPE = np.dtype(
    [
        ("type", "u1"),
        ("length", "<f4"),
        ("orientation", "<f4", (3,)),
        ("axis", "<f4", (3,)),
        ("min", "<f4"),
        ("centre", "<f4"),
        ("max", "<f4"),
        ("home", "<f4"),
        ("config_speed", "<f4"),
        ("has_brakes", "u1"),
    ]
)
_GEOM_FLOATS = ("length", "orientation", "axis", "min", "centre", "max", "home", "config_speed")

_STATE_HEAD = struct.Struct("<QBBBBB")  # time_us, count, motor_state, armed, brakes, watchdog
_STATE_HEAD_SIZE = _STATE_HEAD.size  # 13
_STATE_RECORD_SIZE = STATE_DTYPE.itemsize  # 21
_GEOM_HEAD = struct.Struct("<BBHB6f")  # echo, count, base_pos, base_orientation
_GET_GEOM = 3  # REQ GET_GEOM's type (the message table checks it), echoed by the reply


@payload
class StateData(Message):
    """DATA STATE: the device's state at the end of one tick (Player DATA STATE, extended).

    Payload: ``time_us`` uint64, count uint8, then motor_state, armed, brakes, watchdog as
    uint8 0/1, then ``count`` packed :data:`STATE_DTYPE` records of 21 bytes.
    """

    SIZE_TEXT = "13 + 21·n"
    #: Device time in microseconds since the device started or was reset.
    time_us: int
    #: True when motor power is on (Player's ``motor_state``).
    motor_power: bool
    #: True when the device accepts motion commands.
    armed: bool
    #: True when the brakes are engaged.
    brakes: bool
    #: True while the command watchdog holds or brakes the array.
    watchdog: bool
    #: Per-actuator records, :data:`STATE_DTYPE`, shape ``(dof,)``.
    actuators: np.ndarray

    def __post_init__(self) -> None:
        try:
            struct.pack("<Q", self.time_us)
        except (struct.error, OverflowError, TypeError) as exc:
            raise PackingError(
                f"StateData.time_us={self.time_us!r} must be an integer in [0, 2**64)"
            ) from exc
        for flag in ("motor_power", "armed", "brakes", "watchdog"):
            value = getattr(self, flag)
            if not isinstance(value, (bool, int, np.integer, np.bool_)) or value not in (0, 1):
                raise PackingError(f"StateData.{flag} must be a bool, got {value!r}")
            object.__setattr__(self, flag, bool(value))
        actuators = np.asarray(self.actuators)
        if actuators.dtype != STATE_DTYPE or actuators.ndim != 1:
            raise PackingError(
                f"StateData.actuators must be a 1-D STATE_DTYPE array, got {actuators.dtype} "
                f"with shape {actuators.shape}; use StateData.from_arrays"
            )
        check_count("StateData", actuators.shape[0])
        object.__setattr__(self, "actuators", _read_only(actuators))

    @classmethod
    def from_arrays(
        cls,
        time_us: int,
        position: Any,
        speed: Any,
        acceleration: Any,
        current: Any,
        torque: Any,
        state: Any,
        *,
        motor_power: bool,
        armed: bool,
        brakes: bool = False,
        watchdog: bool = False,
    ) -> StateData:
        """Build from joint-space arrays of shape ``(dof,)`` (SI units, ``state`` uint8 flags)."""
        floats = float32_array(
            "StateData",
            "position/speed/acceleration/current/torque",
            (position, speed, acceleration, current, torque),
            2,
        )
        flags = np.asarray(state)
        if (
            flags.shape != floats.shape[1:]
            or flags.dtype.kind not in "biu"
            or (flags.dtype != np.uint8 and not np.all((flags >= 0) & (flags <= 255)))
        ):
            raise PackingError(
                f"StateData.state must be {floats.shape[1]} integers in [0, 255], got {state!r}"
            )
        actuators = np.empty(floats.shape[1], STATE_DTYPE)
        for row, name in enumerate(_STATE_FLOATS):
            actuators[name] = floats[row]
        actuators["state"] = flags
        return cls(time_us, motor_power, armed, brakes, watchdog, actuators)

    @classmethod
    def from_state(cls, state: ArrayState, time_us: int | None = None) -> StateData:
        """Encode an :class:`ArrayState`; ``time_us`` defaults to ``state.time`` in µs."""
        return cls.from_arrays(
            round(state.time * 1e6) if time_us is None else time_us,
            state.position,
            state.velocity,
            state.acceleration,
            state.current,
            state.torque,
            state.actuator_state,
            motor_power=state.motor_power,
            armed=state.armed,
            brakes=state.brakes,
            watchdog=state.watchdog,
        )

    def to_state(self, time: float | None = None) -> ArrayState:
        """Return an :class:`ArrayState` (float64); ``time`` defaults to ``time_us`` in s."""
        acts = self.actuators
        return ArrayState(
            time=self.time_us * 1e-6 if time is None else time,
            position=acts["position"].astype(np.float64),
            velocity=acts["speed"].astype(np.float64),
            acceleration=acts["acceleration"].astype(np.float64),
            torque=acts["torque"].astype(np.float64),
            current=acts["current"].astype(np.float64),
            actuator_state=acts["state"].copy(),
            motor_power=self.motor_power,
            armed=self.armed,
            brakes=self.brakes,
            watchdog=self.watchdog,
        )

    @property
    def dof(self) -> int:
        """Number of actuators."""
        return int(self.actuators.shape[0])

    @property
    def size(self) -> int:
        """Payload length in bytes: ``13 + 21 * dof``."""
        return _STATE_HEAD.size + STATE_DTYPE.itemsize * self.actuators.shape[0]

    def pack(self) -> bytes:
        """Return the payload bytes (no header, CRC or framing)."""
        head = _STATE_HEAD.pack(
            self.time_us,
            self.actuators.shape[0],
            self.motor_power,
            self.armed,
            self.brakes,
            self.watchdog,
        )
        return head + self.actuators.tobytes()

    @classmethod
    def unpack(cls, data: bytes) -> StateData:
        """Parse a payload; raise ``PackingError`` if it is short, long or invalid."""
        if len(data) < _STATE_HEAD_SIZE:
            raise PayloadLengthError(
                f"StateData payload must be at least {_STATE_HEAD_SIZE} bytes, got {len(data)}"
            )
        time_us, n, power, armed, brakes, watchdog = _STATE_HEAD.unpack_from(data)
        if len(data) != _STATE_HEAD_SIZE + _STATE_RECORD_SIZE * n:
            check_payload_length("StateData", data, _STATE_HEAD_SIZE, _STATE_RECORD_SIZE, n)
        if (power | armed | brakes | watchdog) > 1:
            raise PackingError(
                f"StateData flags must be 0 or 1, got motor_state={power} armed={armed} "
                f"brakes={brakes} watchdog={watchdog}"
            )
        obj = object.__new__(cls)  # the decode hot path: no __post_init__, a read-only view
        values = obj.__dict__
        values["time_us"] = time_us
        values["motor_power"] = power == 1
        values["armed"] = armed == 1
        values["brakes"] = brakes == 1
        values["watchdog"] = watchdog == 1
        values["actuators"] = np.frombuffer(data, STATE_DTYPE, n, _STATE_HEAD_SIZE)
        return obj


@payload
class GeometryReply(Reply, Message):
    """ACK GET_GEOM: Player's ``player_actarray_geom_t`` (per-actuator geometry, base pose).

    Payload: the 4-byte echo, count uint8, base_pos 3×float32 (m), base_orientation
    3×float32 (rad, roll-pitch-yaw), then ``count`` packed :data:`GEOMETRY_DTYPE` records.
    """

    SIZE_TEXT = "29 + 50·n"
    #: Class of the request answered (REQ).
    ref_class: int
    #: Type of the request answered (GET_GEOM).
    ref_type: int
    #: Sequence number of the request answered.
    ref_seq: int
    #: Per-actuator records, :data:`GEOMETRY_DTYPE`, shape ``(dof,)``.
    actuators: np.ndarray
    #: Base position in m, float32, shape ``(3,)``.
    base_pos: np.ndarray
    #: Base orientation as roll, pitch, yaw in rad, float32, shape ``(3,)``.
    base_orientation: np.ndarray

    def __post_init__(self) -> None:
        for name in ("base_pos", "base_orientation"):
            vector = float32_array("GeometryReply", name, getattr(self, name), 1)
            if vector.shape != (3,):
                raise PackingError(f"GeometryReply.{name} must have shape (3,), got {vector.shape}")
            object.__setattr__(self, name, vector)
        actuators = np.asarray(self.actuators)
        if actuators.dtype != GEOMETRY_DTYPE or actuators.ndim != 1:
            raise PackingError(
                "GeometryReply.actuators must be a 1-D GEOMETRY_DTYPE array; "
                "use GeometryReply.from_geometry"
            )
        check_count("GeometryReply", actuators.shape[0])
        _check_geometry(actuators)
        object.__setattr__(self, "actuators", _read_only(actuators))
        try:
            _GEOM_HEAD.pack(self.ref_class, self.ref_type, self.ref_seq, 0, *[0.0] * 6)
        except (struct.error, OverflowError, TypeError) as exc:
            raise PackingError("GeometryReply.ref_* must fit uint8, uint8, uint16") from exc

    @classmethod
    def from_geometry(
        cls, geometry: ArrayGeometry, ref_seq: int, ref_class: int = MessageClass.REQ
    ) -> GeometryReply:
        """Encode an :class:`ArrayGeometry` as the reply to the GET_GEOM numbered ``ref_seq``."""
        acts = geometry.actuators
        check_count("GeometryReply", len(acts))
        records = np.zeros(len(acts), GEOMETRY_DTYPE)
        records["type"] = [a.type for a in acts]
        records["has_brakes"] = [a.has_brakes for a in acts]
        for name in _GEOM_FLOATS:
            values = np.array([getattr(a, name) for a in acts], dtype=np.float64)
            if name in ("orientation", "axis"):
                values = values.reshape(len(acts), 3)
            records[name] = float32_array("GeometryReply", name, values, values.ndim)
        return cls(
            int(ref_class),
            _GET_GEOM,
            ref_seq,
            records,
            geometry.base_pos,
            geometry.base_orientation,
        )

    def to_geometry(self) -> ArrayGeometry:
        """Return the geometry as an :class:`ArrayGeometry` (float32 values as floats)."""
        columns = {name: self.actuators[name].tolist() for name in GEOMETRY_DTYPE.names}
        columns["orientation"] = [tuple(v) for v in columns["orientation"]]
        columns["axis"] = [tuple(v) for v in columns["axis"]]
        columns["has_brakes"] = [bool(v) for v in columns["has_brakes"]]
        names = GEOMETRY_DTYPE.names
        return ArrayGeometry(
            actuators=tuple(
                ActuatorGeometry(**dict(zip(names, values, strict=True)))
                for values in zip(*(columns[name] for name in names), strict=True)
            ),
            base_pos=tuple(self.base_pos.tolist()),
            base_orientation=tuple(self.base_orientation.tolist()),
        )

    @property
    def size(self) -> int:
        """Payload length in bytes: ``29 + 50 * dof``."""
        return _GEOM_HEAD.size + GEOMETRY_DTYPE.itemsize * self.actuators.shape[0]

    def pack(self) -> bytes:
        """Return the payload bytes (no header, CRC or framing)."""
        head = _GEOM_HEAD.pack(
            self.ref_class,
            self.ref_type,
            self.ref_seq,
            self.actuators.shape[0],
            *self.base_pos.tolist(),
            *self.base_orientation.tolist(),
        )
        return head + self.actuators.tobytes()

    @classmethod
    def unpack(cls, data: bytes) -> GeometryReply:
        """Parse a payload; raise ``PackingError`` if it is short, long or invalid."""
        if len(data) < _GEOM_HEAD.size:
            raise PayloadLengthError(
                f"GeometryReply payload must be at least {_GEOM_HEAD.size} bytes, got {len(data)}"
            )
        ref_class, ref_type, ref_seq, n = _GEOM_HEAD.unpack_from(data)[:4]
        check_payload_length("GeometryReply", data, _GEOM_HEAD.size, GEOMETRY_DTYPE.itemsize, n)
        actuators = np.frombuffer(data, GEOMETRY_DTYPE, n, _GEOM_HEAD.size)
        _check_geometry(actuators)
        base_array = np.frombuffer(data, "<f4", 6, 5)
        return build(
            cls,
            ref_class=ref_class,
            ref_type=ref_type,
            ref_seq=ref_seq,
            actuators=actuators,
            base_pos=base_array[:3],
            base_orientation=base_array[3:],
        )


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view (the caller's array keeps its flags)."""
    view = array.view()
    view.setflags(write=False)
    return view


def _check_geometry(actuators: np.ndarray) -> None:
    bad_type = ~np.isin(actuators["type"], (1, 2))
    if bad_type.any():
        raise PackingError(
            "GeometryReply actuator type must be 1 (linear) or 2 (rotary); actuators "
            f"{np.flatnonzero(bad_type).tolist()} have {actuators['type'][bad_type].tolist()}"
        )
    if (actuators["has_brakes"] > 1).any():
        raise PackingError("GeometryReply has_brakes must be 0 or 1")
