"""Action modes: how a Gymnasium action becomes an :class:`~jointlab.interface.NJointAction`.

Every mode's space is derived from the robot description's limits:

=========================  ===============  =============================================
mode                       space            fields, each of length ``dof``, in this order
=========================  ===============  =============================================
``torque``                 Box [-1, 1]      torque in ``[-effort, effort]``
``position``               Box [-1, 1]      position in ``[soft_lower, soft_upper]``
``position_velocity``      Box [-1, 1]      position, velocity in ``[-v_max, v_max]``
``torque_and_position``    Box [-1, 1]      torque, position
``position_and_gains``     Box [-1, 1]      position, kp in ``[0, kp_max]``, kd in
                                            ``[0, kd_max]``
``njoint``                 Dict of Boxes    the five NJointAction fields in SI units
=========================  ===============  =============================================

Flat modes are normalised: ``-1`` maps to the lower bound and ``+1`` to the upper bound of
each element (:func:`unnormalize`; :func:`normalize` is the inverse). ``kp_max`` is twice the
description's default gain, so a zero action means "the default gains"; joints without a
default gain get ``kp_max = 20 * effort / range`` (full effort at a 10 % position error) and
``kd_max = kp_max / 10``. Where a flat mode has no velocity field the PD damps towards zero
velocity; where it has no gain fields the description's default gains are used.

Actions outside the space are clipped into it and the number of clipped elements is
returned (the environment reports it in ``info``). NaN or infinite values in a flat action
raise :class:`~jointlab.errors.ActionError` naming the field, joint and expected shape. In
``njoint`` mode NaN keeps its NJointAction meaning (NaN position disables the PD, NaN gain
means the default, NaN velocity means 0) and is passed through unclipped; NaN torque is an
error.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from jointlab.errors import ActionError, ConfigurationError, quote
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.description import RobotDescription

__all__ = [
    "ACTION_MODES",
    "NJOINT_FIELDS",
    "ActionAdapter",
    "action_bounds",
    "normalize",
    "unnormalize",
]

#: Action dtypes used as they are (anything else real is converted to float64 first).
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: Fields of each flat action mode, in the order they appear in the flat action.
_MODE_FIELDS: dict[str, tuple[str, ...]] = {
    "torque": ("torque",),
    "position": ("position",),
    "position_velocity": ("position", "velocity"),
    "torque_and_position": ("torque", "position"),
    "position_and_gains": ("position", "position_kp", "position_kd"),
}
#: The NJointAction fields, in the order of the ``njoint`` Dict space.
NJOINT_FIELDS: tuple[str, ...] = ("torque", "position", "position_kp", "position_kd", "velocity")
#: Every supported action mode.
ACTION_MODES: tuple[str, ...] = (*_MODE_FIELDS, "njoint")


def check_action_mode(mode: str) -> str:
    """Return ``mode`` if it is a known action mode, else raise with a suggestion.

    Raises:
        ConfigurationError: ``mode`` is not one of :data:`ACTION_MODES`.
    """
    if mode in ACTION_MODES:
        return mode
    hint = difflib.get_close_matches(str(mode), ACTION_MODES, n=1)
    suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
    raise ConfigurationError(
        f"unknown action_mode {mode!r}; expected one of {list(ACTION_MODES)}{suggestion}"
    )


def normalize(value: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Map physical values to ``[-1, 1]``: ``low -> -1``, ``high -> +1`` (element-wise).

    Args:
        value: Physical values, any shape broadcastable with ``low`` and ``high``.
        low: Lower bounds in the same units.
        high: Upper bounds in the same units; where ``high == low`` the result is 0.

    Returns:
        float64 array; values outside ``[low, high]`` map outside ``[-1, 1]`` (no clipping).
    """
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    half = 0.5 * (high - low)
    safe = np.where(half > 0, half, 1.0)
    return np.where(half > 0, (np.asarray(value, dtype=np.float64) - low - half) / safe, 0.0)


def _real_array(action: Any, mode: str) -> np.ndarray:
    """``action`` as float64, refusing text, complex numbers and other objects."""
    try:
        array = np.asarray(action)
    except (TypeError, ValueError, OverflowError):
        array = np.asarray(None)
    if array.dtype.kind not in "biuf":
        raise ActionError(
            f"action for action_mode {mode!r} must be real numbers, got "
            f"{type(action).__name__} {quote(action)}"
        )
    return array.astype(np.float64)


def unnormalize(action: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Map normalised values in ``[-1, 1]`` to ``[low, high]`` (inverse of :func:`normalize`).

    Args:
        action: Normalised values, any shape broadcastable with ``low`` and ``high``.
        low: Lower bounds (physical units).
        high: Upper bounds (physical units).

    Returns:
        float64 array ``low + (action + 1) / 2 * (high - low)`` (no clipping).
    """
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    return low + (np.asarray(action, dtype=np.float64) + 1.0) * 0.5 * (high - low)


def action_bounds(description: RobotDescription) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Physical bounds of each NJointAction field, derived from the description.

    Returns:
        Field name -> ``(low, high)``, each float64 of shape ``(dof,)``: torque in N·m (N),
        position in rad (m) within the soft limits, gains in N·m/rad and N·m·s/rad,
        velocity in rad/s (m/s) within the soft velocity limits.
    """
    effort = description.soft_effort_limit
    span = np.maximum(description.soft_upper - description.soft_lower, 1e-9)
    fallback_kp = 20.0 * effort / span
    kp_max = np.where(description.default_kp > 0, 2.0 * description.default_kp, fallback_kp)
    kd_max = np.where(description.default_kd > 0, 2.0 * description.default_kd, kp_max / 10.0)
    velocity = description.soft_velocity_limit
    zeros = np.zeros(description.dof)
    return {
        "torque": (-effort, np.array(effort)),
        "position": (np.array(description.soft_lower), np.array(description.soft_upper)),
        "position_kp": (zeros, kp_max),
        "position_kd": (zeros.copy(), kd_max),
        "velocity": (-velocity, np.array(velocity)),
    }


def _prechecked_action(
    torque: np.ndarray,
    position: np.ndarray,
    position_kp: np.ndarray,
    position_kd: np.ndarray,
    velocity: np.ndarray,
) -> NJointAction:
    """An NJointAction from arrays this module has already validated.

    The adapter checks shape and finiteness and clips into bounds before calling this, so
    NJointAction's own per-field validation (about 25 µs, a third of the environment's
    per-step budget) would only repeat it. Fields must be float64 arrays of shape
    ``(dof,)``, torque finite, gains >= 0 or NaN; they are made read-only here. Tests
    check the result equals the validating constructor's.
    """
    return NJointAction.from_validated(torque, position, position_kp, position_kd, velocity)


@dataclass(frozen=True)
class ConvertedAction:
    """An environment action turned into what the robot runs."""

    #: The action sent to the robot.
    action: NJointAction
    #: Number of action elements that were outside the space and clipped.
    clipped: int


class ActionAdapter:
    """Space and conversion for one action mode of one robot.

    Args:
        description: The robot; bounds come from its limits (:func:`action_bounds`).
        mode: One of :data:`ACTION_MODES`.
    """

    def __init__(self, description: RobotDescription, mode: str) -> None:
        self.mode = check_action_mode(mode)
        self.description = description
        self.dof = description.dof
        self.bounds = action_bounds(description)
        self.fields: tuple[str, ...] = _MODE_FIELDS.get(mode, NJOINT_FIELDS)
        self._zeros = np.zeros(self.dof)
        self._zeros.setflags(write=False)
        self._nan = np.full(self.dof, np.nan)
        self._nan.setflags(write=False)
        if mode == "njoint":
            self.space: spaces.Space = spaces.Dict(
                {
                    name: spaces.Box(
                        low=self.bounds[name][0].astype(np.float32),
                        high=self.bounds[name][1].astype(np.float32),
                        dtype=np.float32,
                    )
                    for name in NJOINT_FIELDS
                }
            )
            self.low = self.high = None
        else:
            self.low = np.concatenate([self.bounds[f][0] for f in self.fields])
            self.high = np.concatenate([self.bounds[f][1] for f in self.fields])
            n = len(self.fields) * self.dof
            self.space = spaces.Box(low=-1.0, high=1.0, shape=(n,), dtype=np.float32)
            self._shape = (n,)
            self._half_span = 0.5 * (self.high - self.low)
            self._ones = np.ones(n)
        #: The ``position`` mode: a flat action maps to a plain ``NJointAction.Position``.
        self._position_only = mode == "position"

    # ------------------------------------------------------------------ conversion
    def unnormalize(self, action: np.ndarray) -> dict[str, np.ndarray]:
        """Physical field values of a flat normalised action (no clipping).

        Args:
            action: Flat action, shape ``(len(fields) * dof,)``, nominally in ``[-1, 1]``.

        Returns:
            Field name -> physical values, shape ``(dof,)`` each.
        """
        self._require_flat("unnormalize")
        values = unnormalize(np.asarray(action, dtype=np.float64), self.low, self.high)
        dof = self.dof
        return {name: values[i * dof : (i + 1) * dof] for i, name in enumerate(self.fields)}

    def normalize(self, values: NJointAction | Mapping[str, Any]) -> np.ndarray:
        """Flat normalised action of this mode for physical field values (no clipping).

        Args:
            values: An NJointAction, or a mapping with (at least) this mode's fields, each of
                shape ``(dof,)``. NaN gains are replaced by the description's defaults and a
                NaN velocity by 0, as the backend would interpret them.

        Returns:
            float32 array of shape ``(len(fields) * dof,)``.
        """
        self._require_flat("normalize")
        source = values.to_dict() if isinstance(values, NJointAction) else values
        parts = []
        for name in self.fields:
            if name not in source:
                raise ActionError(
                    f"normalize for action_mode {self.mode!r} needs field {name!r}; "
                    f"got fields {sorted(source)}"
                )
            part = np.asarray(source[name], dtype=np.float64)
            if name == "position_kp":
                part = np.where(np.isnan(part), self.description.default_kp, part)
            elif name == "position_kd":
                part = np.where(np.isnan(part), self.description.default_kd, part)
            elif name == "velocity":
                part = np.where(np.isnan(part), 0.0, part)
            parts.append(part)
        flat = np.concatenate(parts)
        return normalize(flat, self.low, self.high).astype(np.float32)

    def to_njoint(self, action: Any) -> ConvertedAction:
        """Convert an environment action of this mode to an NJointAction.

        Raises:
            ActionError: wrong shape, or a NaN/inf value (flat modes) or NaN torque (njoint).
        """
        return ConvertedAction(*self.convert(action))

    def convert(self, action: Any) -> tuple[NJointAction, int]:
        """:meth:`to_njoint` as a plain ``(action, clipped)`` pair (the env's hot path).

        A flat action is checked once (shape; one reduction finds values outside
        ``[-1, 1]``, NaN included), mapped with the preallocated bounds and handed to
        NJointAction's trusted constructors: every value is finite and inside the field's
        bounds by construction, so the NJointAction checks would only repeat these.

        Raises:
            ActionError: wrong shape, or a NaN/inf value (flat modes) or NaN torque (njoint).
        """
        if self.mode == "njoint":
            converted = self._njoint_to_action(action)
            return converted.action, converted.clipped
        if action.__class__ is not np.ndarray or action.dtype not in _FLOATS:
            action = _real_array(action, self.mode)
        if action.shape != self._shape:
            raise ActionError(
                f"action for action_mode {self.mode!r} has shape {action.shape}, expected "
                f"{self._shape} (fields {list(self.fields)}, {self.dof} joints each)"
            )
        count = 0
        # In range, NaN and inf excluded, on the Python floats: for a few joints this is a
        # third of the two numpy calls (abs, max) it replaces. NaN fails no comparison in
        # max/min (where it sits decides whether they see it), so the sum (NaN if any is
        # NaN) catches it; the common case skips the block below.
        values = action.tolist()
        total = sum(values)
        if not (max(values) <= 1.0 and min(values) >= -1.0 and total == total):
            array = action.astype(np.float64)
            finite = np.isfinite(array)
            if not finite.all():
                self._raise_not_finite(array, finite)
            action = np.minimum(np.maximum(array, -1.0), 1.0)
            count = int(np.count_nonzero(action != array))
        # low + (action + 1) * half_span in float64 (float32 widens exactly), one new array.
        values = np.add(action, self._ones)  # float64: float32 + float64 widens exactly
        np.multiply(values, self._half_span, out=values)
        np.add(self.low, values, out=values)
        if self._position_only:  # clipped into the soft limits: a plain Position(q)
            return NJointAction.position_from_validated(values), count
        dof = self.dof
        parts = {name: values[i * dof : (i + 1) * dof] for i, name in enumerate(self.fields)}
        nan = self._nan
        result = _prechecked_action(
            parts.get("torque", self._zeros),
            parts.get("position", nan),
            parts.get("position_kp", nan),
            parts.get("position_kd", nan),
            parts.get("velocity", nan),
        )
        return result, count

    def hold(self, state: ArrayState) -> Any:
        """An action of this mode that holds ``state``'s position (zero torque in torque mode).

        Used to fill latency queues and as a neutral action.
        """
        position = state.position
        if self.mode == "njoint":
            nan = np.full(self.dof, np.nan, dtype=np.float32)
            return {
                "torque": np.zeros(self.dof, dtype=np.float32),
                "position": np.clip(position, *self.bounds["position"]).astype(np.float32),
                "position_kp": nan,
                "position_kd": nan.copy(),
                "velocity": np.zeros(self.dof, dtype=np.float32),
            }
        fields = {
            "torque": self._zeros,
            "position": position,
            "position_kp": self.description.default_kp,
            "position_kd": self.description.default_kd,
            "velocity": self._zeros,
        }
        return np.clip(self.normalize(fields), -1.0, 1.0).astype(np.float32)

    # ------------------------------------------------------------------ helpers
    def _require_flat(self, what: str) -> None:
        if self.mode == "njoint":
            raise ActionError(
                f"{what} applies to the flat action modes, not 'njoint' (its Dict space is "
                "already in physical units)"
            )

    def _raise_not_finite(self, array: np.ndarray, finite: np.ndarray) -> None:
        index = int(np.flatnonzero(~finite)[0])
        field = self.fields[index // self.dof]
        joint = self.description.joint_names[index % self.dof]
        raise ActionError(
            f"action for action_mode {self.mode!r} is not finite at index {index} "
            f"(value {array[index]}, field {field!r}, joint {joint!r}); expected finite values "
            f"in [-1, 1] of shape {self._shape}"
        )

    def _njoint_to_action(self, action: Any) -> ConvertedAction:
        if not isinstance(action, Mapping):
            raise ActionError(
                f"action for action_mode 'njoint' must be a dict with keys {list(NJOINT_FIELDS)}, "
                f"got {type(action).__name__}"
            )
        unknown = set(action) - set(NJOINT_FIELDS)
        if unknown:
            raise ActionError(
                f"action for action_mode 'njoint' has unknown keys {sorted(unknown)}; "
                f"expected {list(NJOINT_FIELDS)}"
            )
        count = 0
        values: dict[str, np.ndarray | None] = {}
        for name in NJOINT_FIELDS:
            if name not in action or action[name] is None:
                values[name] = None if name != "torque" else self._zeros
                continue
            array = np.asarray(action[name], dtype=np.float64)
            if array.shape != (self.dof,):
                raise ActionError(
                    f"action['{name}'] for action_mode 'njoint' has shape {array.shape}, "
                    f"expected ({self.dof},)"
                )
            if name == "torque" and not np.isfinite(array).all():
                joint = self.description.joint_names[int(np.flatnonzero(~np.isfinite(array))[0])]
                raise ActionError(
                    f"action['torque'] for action_mode 'njoint' must be finite (NaN or inf at "
                    f"joint {joint!r}); expected shape ({self.dof},)"
                )
            low, high = self.bounds[name]
            clipped = np.clip(array, low, high)  # NaN stays NaN: it keeps its meaning
            count += int(np.count_nonzero((clipped != array) & ~np.isnan(array)))
            values[name] = clipped
        return ConvertedAction(NJointAction(**values), count)
