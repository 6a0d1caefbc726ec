"""Messages carrying joint-space vectors: CMD MULTI_POS/SPEED/CURRENT, NJOINT, REQ SET_STATE.

Each payload is a uint8 actuator count ``n`` followed by ``n``-long float32 vectors. Packing
and parsing go through numpy (``tobytes`` / ``frombuffer``): no per-joint Python loops.
Parsed messages hold **read-only float32 views of the received bytes** (the wire values);
:meth:`NJointCommand.to_action` converts to the float64 host type. See
:mod:`jointlab.hardware.protocol.wire` for the common contract and docs/protocol.md for layouts.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import numpy as np

from jointlab.errors import PackingError
from jointlab.hardware.protocol.wire import (
    FLOAT32_MAX,
    MAX_DOF,
    Message,
    PayloadLengthError,
    build,
    payload,
)
from jointlab.interface import NJointAction

__all__ = [
    "NJOINT_FIELDS",
    "MultiCurrentCommand",
    "MultiPositionCommand",
    "MultiSpeedCommand",
    "NJointCommand",
    "SetStateRequest",
    "check_count",
    "check_payload_length",
    "float32_array",
]

_V = TypeVar("_V", bound="Message")

#: Rows of :attr:`NJointCommand.values`, in wire order (the NJointAction fields).
NJOINT_FIELDS = ("torque", "position", "position_kp", "position_kd", "velocity")
_FLOAT32 = np.dtype("<f4")


def float32_array(owner: str, name: str, value: Any, ndim: int) -> np.ndarray:
    """Return ``value`` as a read-only float32 array, refusing float32 overflow."""
    try:
        source = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise PackingError(f"{owner}.{name} must be numeric, got {value!r}") from exc
    if source.ndim != ndim:
        raise PackingError(f"{owner}.{name} must have {ndim} dimension(s), got {source.shape}")
    if source.size and np.fmax.reduce(np.abs(source), axis=None) > FLOAT32_MAX:
        overflow = np.isfinite(source) & (np.abs(source) > FLOAT32_MAX)
        if overflow.any():
            raise PackingError(
                f"{owner}.{name} has finite values beyond the float32 range (±{FLOAT32_MAX:.4g})"
                f" at {np.argwhere(overflow).tolist()}"
            )
    wire = source.astype("<f4")
    wire.setflags(write=False)
    return wire


def check_count(owner: str, n: int) -> None:
    """Raise ``PackingError`` if ``n`` actuators do not fit the uint8 count."""
    if n > MAX_DOF:
        raise PackingError(f"{owner} carries {n} actuators, at most {MAX_DOF} fit the uint8 count")


def check_payload_length(owner: str, data: bytes, head: int, record: int, n: int) -> None:
    """Raise ``PackingError`` unless ``len(data) == head + record * n``."""
    if len(data) != head + record * n:
        raise PayloadLengthError(
            f"{owner} payload with count {n} must be {head + record * n} bytes, got {len(data)}"
        )


class _VectorCommand(Message):
    """CMD MULTI_*: a uint8 count then that many float32 values."""

    _FIELD: ClassVar[str] = ""
    SIZE_TEXT = "1 + 4·n"

    def __post_init__(self) -> None:
        name = type(self).__name__
        vector = float32_array(name, self._FIELD, getattr(self, self._FIELD), 1)
        check_count(name, vector.shape[0])
        object.__setattr__(self, self._FIELD, vector)

    @property
    def size(self) -> int:
        """Payload length in bytes: ``1 + 4 * n``."""
        return 1 + 4 * getattr(self, self._FIELD).shape[0]

    def pack(self) -> bytes:
        """Return the payload bytes (no header, CRC or framing)."""
        vector = getattr(self, self._FIELD)
        return bytes((vector.shape[0],)) + vector.tobytes()

    @classmethod
    def unpack(cls: type[_V], data: bytes) -> _V:
        """Parse a payload; raise ``PackingError`` if it is short, long or invalid."""
        if not data:
            raise PayloadLengthError(f"{cls.__name__} payload is empty, expected a count byte")
        n = data[0]
        check_payload_length(cls.__name__, data, 1, 4, n)
        return build(cls, **{cls._FIELD: np.frombuffer(data, "<f4", n, 1)})  # type: ignore[attr-defined]


@payload
class MultiPositionCommand(_VectorCommand):
    """CMD MULTI_POS: move every joint to ``positions`` (rad or m), shape ``(dof,)``."""

    _FIELD = "positions"
    #: Target positions, float32, shape ``(dof,)``.
    positions: np.ndarray


@payload
class MultiSpeedCommand(_VectorCommand):
    """CMD MULTI_SPEED: move every joint at ``speeds`` (rad/s or m/s), shape ``(dof,)``."""

    _FIELD = "speeds"
    #: Speeds, float32, shape ``(dof,)``.
    speeds: np.ndarray


@payload
class MultiCurrentCommand(_VectorCommand):
    """CMD MULTI_CURRENT: drive every joint with ``currents`` (A), shape ``(dof,)``."""

    _FIELD = "currents"
    #: Motor currents in A, float32, shape ``(dof,)``.
    currents: np.ndarray


class _RowsMessage(Message):
    """A uint8 count ``n``, then ``_ROWS`` float32 vectors of length ``n`` back to back."""

    _ROWS: ClassVar[int] = 1
    #: float32, shape ``(_ROWS, dof)``.
    values: np.ndarray

    def __post_init__(self) -> None:
        name = type(self).__name__
        values = float32_array(name, "values", self.values, 2)
        if values.shape[0] != self._ROWS:
            raise PackingError(
                f"{name}.values must have shape ({self._ROWS}, dof), got {values.shape}"
            )
        check_count(name, values.shape[1])
        object.__setattr__(self, "values", values)

    @property
    def dof(self) -> int:
        """Number of joints."""
        return int(self.values.shape[1])

    @property
    def size(self) -> int:
        """Payload length in bytes: ``1 + 4 * rows * dof``."""
        return 1 + 4 * self._ROWS * self.values.shape[1]

    def pack(self) -> bytes:
        """Return the payload bytes (no header, CRC or framing)."""
        return bytes((self.values.shape[1],)) + self.values.tobytes()

    @classmethod
    def unpack(cls: type[_V], data: bytes) -> _V:
        """Parse a payload; raise ``PackingError`` if it is short, long or invalid."""
        if not data:
            raise PayloadLengthError(f"{cls.__name__} payload is empty, expected a count byte")
        n, rows = data[0], cls._ROWS  # type: ignore[attr-defined]
        if len(data) != 1 + 4 * rows * n:
            check_payload_length(cls.__name__, data, 1, 4 * rows, n)
        obj = object.__new__(cls)  # the decode hot path: no __post_init__, a read-only view
        obj.__dict__["values"] = np.ndarray((rows, n), _FLOAT32, data, 1)
        return obj


@payload
class NJointCommand(_RowsMessage):
    """CMD NJOINT: a whole :class:`~jointlab.interface.NJointAction`, NaN preserved.

    Payload: a uint8 count ``n``, then five float32 vectors of length ``n`` back to back in
    :data:`NJOINT_FIELDS` order (torque N·m or N, position rad or m, position_kp, position_kd,
    velocity rad/s or m/s). float32 halves the frame against float64 so that a 6-DoF action
    (135 bytes on the wire) fits a 1 kHz period on a 2 Mbaud UART, and it is the precision of
    Player's fields and of an MCU's FPU; NaN (PD off, default gain) survives the cast.
    """

    _ROWS = len(NJOINT_FIELDS)
    SIZE_TEXT = "1 + 20·n"
    #: float32, shape ``(5, dof)``: rows in :data:`NJOINT_FIELDS` order.
    values: np.ndarray

    @classmethod
    def from_action(cls, action: NJointAction) -> NJointCommand:
        """Encode an action (float64 fields rounded to float32)."""
        return cls(
            np.array(
                (
                    action.torque,
                    action.position,
                    action.position_kp,
                    action.position_kd,
                    action.velocity,
                )
            )
        )

    def to_action(self) -> NJointAction:
        """Return the action as float64 arrays.

        Raises:
            ActionError: the values are not a valid action (NaN torque, infinities, negative
                gains); a device answers such a frame with NACK INVALID_VALUE.
        """
        return NJointAction(*self.values.astype(np.float64))

    @property
    def torque(self) -> np.ndarray:
        """Feed-forward torque in N·m (N), float32, shape ``(dof,)``."""
        return self.values[0]

    @property
    def position(self) -> np.ndarray:
        """PD target in rad (m); NaN disables the PD. float32, shape ``(dof,)``."""
        return self.values[1]

    @property
    def position_kp(self) -> np.ndarray:
        """P gain; NaN means the device's default. float32, shape ``(dof,)``."""
        return self.values[2]

    @property
    def position_kd(self) -> np.ndarray:
        """D gain; NaN means the device's default. float32, shape ``(dof,)``."""
        return self.values[3]

    @property
    def velocity(self) -> np.ndarray:
        """D-term target velocity in rad/s (m/s); NaN means 0. float32, shape ``(dof,)``."""
        return self.values[4]


@payload
class SetStateRequest(_RowsMessage):
    """REQ SET_STATE (lockstep devices): put the joints at ``q`` moving at ``qd``, at once.

    What ``SimRobot.reset(q, qd)`` does, for an emulated device in lockstep (virtual-time)
    mode, so that a lockstep run can restart exactly as a simulated one does. The command
    in force becomes zero torque; power, arming and brakes keep their settings. A real
    device (or a real-time emulator) answers NACK UNSUPPORTED: a robot cannot be teleported.

    Payload: a uint8 count ``n``, then ``q`` (rad or m) and ``qd`` (rad/s or m/s) as float32
    vectors of length ``n``.
    """

    _ROWS = 2
    SIZE_TEXT = "1 + 8·n"
    #: float32, shape ``(2, dof)``: positions then velocities.
    values: np.ndarray

    @classmethod
    def from_arrays(cls, q: Any, qd: Any) -> SetStateRequest:
        """Build from positions ``q`` and velocities ``qd``, each of shape ``(dof,)``."""
        return cls(np.array((np.asarray(q, np.float64), np.asarray(qd, np.float64))))

    @property
    def q(self) -> np.ndarray:
        """Positions, rad or m, float32, shape ``(dof,)``."""
        return self.values[0]

    @property
    def qd(self) -> np.ndarray:
        """Velocities, rad/s or m/s, float32, shape ``(dof,)``."""
        return self.values[1]
