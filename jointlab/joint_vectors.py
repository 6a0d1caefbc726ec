"""Joint vectors of an action: conversion of what a user passes, and the bounds they must meet.

:class:`jointlab.interface.NJointAction` takes its five fields through :func:`as_vector` and
checks them with :func:`check_torque`, :func:`check_targets` and :func:`check_gains`. The
common case (a float64 vector of sane numbers) costs one copy and one ``math.hypot`` (its
Euclidean norm, computed without overflow, is NaN or inf when an element is); only a
vector that fails that test is looked at element by element, to name the joints at fault.

Bounds (beyond them a value is surely a mistake, and the law ``torque + kp*(position - q) +
kd*(velocity - qd)`` could overflow to ``inf - inf = NaN``):

* ``position`` and ``velocity``: ``|x| <=`` :data:`MAX_TARGET` (rad, m, rad/s, m/s), or NaN;
* ``position_kp`` and ``position_kd``: ``0 <= g <=`` :data:`MAX_GAIN` (N·m/rad, N/m,
  N·m·s/rad, N·s/m), or NaN for the description's default;
* ``torque``: finite (the backend clamps it to the effort limit).

With those bounds every product in the law stays below 1e21, far from float64's 1.8e308.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from jointlab.errors import ActionError, quote

__all__ = [
    "MAX_GAIN",
    "MAX_TARGET",
    "as_vector",
    "check_gains",
    "check_targets",
    "check_torque",
    "constants",
    "plain_targets",
]

#: Largest accepted ``|position|`` and ``|velocity|`` target (rad or m, rad/s or m/s).
MAX_TARGET = 1e9
#: Largest accepted ``position_kp`` and ``position_kd`` (SI units of the joint).
MAX_GAIN = 1e12

_FLOAT64 = np.dtype(np.float64)
_read_only_copy = np.frombuffer
_CONSTANTS: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}


def constants(dof: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Shared read-only vectors of length ``dof``: zeros, NaNs, all-True and all-False."""
    try:
        return _CONSTANTS[dof]
    except KeyError:
        vectors = (np.zeros(dof), np.full(dof, np.nan), np.ones(dof, bool), np.zeros(dof, bool))
        for vector in vectors:
            vector.setflags(write=False)
        return _CONSTANTS.setdefault(dof, vectors)


def _expected(dof: int | None) -> str:
    return f"({dof},)" if dof is not None else "(dof,)"


def _convert(name: str, value: Any, dof: int | None) -> np.ndarray:
    """Anything array-like to a new float64 array, refusing what is not real numbers."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ActionError(f"NJointAction.{name} must be numeric, got {quote(value)}") from exc
    kind = array.dtype.kind
    if kind == "c":
        raise ActionError(
            f"NJointAction.{name} must be real numbers, got complex values {quote(value)} "
            "(the imaginary part would be lost)"
        )
    if kind == "O":
        bad = [v for v in array.flat if not isinstance(v, numbers.Real)]
        if bad:
            raise ActionError(
                f"NJointAction.{name} must be numeric, got {quote(bad[0])} in {quote(value)}"
            )
    elif kind not in "biuf":
        what = "strings" if kind in "US" else f"dtype {array.dtype}"
        raise ActionError(f"NJointAction.{name} must be numeric, got {what}: {quote(value)}")
    if array.ndim == 0:
        raise ActionError(
            f"NJointAction.{name} must be a 1-D array, got a scalar; "
            f"use a vector of shape {_expected(dof)}"
        )
    try:
        return np.array(array, dtype=np.float64)
    except OverflowError as exc:  # a Python integer beyond the float range
        raise ActionError(
            f"NJointAction.{name} holds a number beyond the float range: {quote(value)}"
        ) from exc


def as_vector(name: str, value: Any, dof: int | None) -> np.ndarray:
    """A read-only float64 copy of ``value``, shape ``(dof,)`` (any length >= 1 if None).

    Raises:
        ActionError: not real numbers (strings, complex, objects), not 1-D, empty, or of
            another length than ``dof``; the message names the field and both shapes.
    """
    if type(value) is np.ndarray and value.dtype is _FLOAT64 and value.ndim == 1:
        array = _read_only_copy(value.tobytes())  # half the cost of copy() + setflags()
    else:
        array = _convert(name, value, dof)
        array.setflags(write=False)
    shape = array.shape
    if len(shape) != 1 or (dof is not None and shape[0] != dof):
        raise ActionError(f"NJointAction.{name} has shape {shape}, expected {_expected(dof)}")
    if shape[0] == 0:
        raise ActionError(f"NJointAction.{name} has shape (0,): an action needs one joint or more")
    return array


def plain_targets(value: Any) -> np.ndarray | None:
    """A read-only copy of ``value`` if it is a float64 vector of finite targets, else None.

    The one-call fast path of ``NJointAction.Position(q)`` for the common input (a numpy
    vector of one or more targets within :data:`MAX_TARGET`, no NaN); anything else returns
    None and goes through :func:`as_vector` and :func:`check_targets`, which explain it.
    """
    if type(value) is np.ndarray and value.dtype is _FLOAT64 and value.ndim == 1:
        values = value.tolist()
        if values and math.hypot(*values) <= MAX_TARGET:  # every |value| too; none is NaN
            return _read_only_copy(value.tobytes())
    return None


def check_torque(torque: np.ndarray) -> None:
    """Refuse a torque with NaN or infinite entries, naming the joints."""
    if not math.hypot(*torque.tolist()) < math.inf:  # NaN or inf (or beyond 1.8e308)
        bad = np.flatnonzero(~np.isfinite(torque)).tolist()
        if bad:
            raise ActionError(f"NJointAction.torque must be finite; joints {bad} are NaN or inf")


def check_targets(name: str, values: np.ndarray) -> bool:
    """Refuse targets beyond :data:`MAX_TARGET`; return True when none is NaN."""
    if math.hypot(*values.tolist()) <= MAX_TARGET:  # so is every |value|; none is NaN
        return True
    magnitude = np.abs(values)
    bad = np.flatnonzero(magnitude > MAX_TARGET).tolist()  # NaN compares False, as wanted
    if bad:
        what = "infinite" if np.isinf(values[bad]).any() else "beyond the bound"
        raise ActionError(
            f"NJointAction.{name} must be NaN or within ±{MAX_TARGET:g}; joints {bad} are "
            f"{what} ({values[bad].tolist()})"
        )
    return not np.isnan(magnitude).any()


def check_gains(name: str, gains: np.ndarray) -> None:
    """Refuse gains that are negative or above :data:`MAX_GAIN` (NaN is the default gain)."""
    bad = np.flatnonzero((gains < 0) | (gains > MAX_GAIN)).tolist()  # NaN compares False
    if bad:
        values = gains[bad]
        if (values < 0).any():
            reason = "negative"
        elif np.isinf(values).any():
            reason = "infinite"
        else:
            reason = f"above {MAX_GAIN:g}, where the law would overflow"
        raise ActionError(
            f"NJointAction.{name} must be >= 0 and <= {MAX_GAIN:g} (or NaN for the default); "
            f"joints {bad} are {reason} ({values.tolist()})"
        )
