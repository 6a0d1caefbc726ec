"""Type checks of Commander arguments: a wrong type is a refusal, never a raw exception.

:func:`checked` wraps a Commander verb: before it runs, number arguments must be real
numbers (not text such as ``"0.5"``, not complex, not ``True``), vector arguments arrays of
real numbers, joints an index or a name, and ``command_id`` hashable. A wrong type raises
:class:`~jointlab.errors.CommandRefused` with reason ``"invalid_value"``, naming the verb
and the argument; values are then judged by the verb itself (limits, joints, state).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

from jointlab.errors import CommandRefused, JointLabError, quote

__all__ = ["NUMBER_ARGUMENTS", "VECTOR_ARGUMENTS", "checked"]

#: Arguments that take one real number (``velocity`` may also be a vector).
NUMBER_ARGUMENTS = frozenset(
    {"position", "velocity", "effort", "current", "speed", "accel", "duration", "timeout"}
)
#: Arguments that take one real number per joint.
VECTOR_ARGUMENTS = frozenset({"positions", "velocities", "currents"})

F = TypeVar("F", bound=Callable[..., Any])


def _real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _real_array(value: Any) -> bool:
    if isinstance(value, (str, bytes)):
        return False
    try:
        return np.asarray(value).dtype.kind in "iuf"
    except (TypeError, ValueError, OverflowError):
        return False


def _problem(name: str, value: Any) -> str | None:
    """What is wrong with the type of argument ``name``, or None."""
    if name == "on" and not isinstance(value, (bool, np.bool_)):
        return "must be true or false"
    if value is None:
        return None
    if (
        name in NUMBER_ARGUMENTS
        and not _real(value)
        and not (name == "velocity" and _real_array(value))
    ):
        return "must be a real number"
    if name in VECTOR_ARGUMENTS and not _real_array(value):
        return "must be real numbers, one per joint"
    if name == "joint" and (
        isinstance(value, (bool, np.bool_)) or not isinstance(value, (str, int, np.integer))
    ):
        return "must be a joint index or name"
    if name == "command_id" and not isinstance(value, Hashable):
        return "must be hashable (a string or a number)"
    return None


def checked(method: F) -> F:
    """Refuse wrong argument types of a Commander verb (see the module docstring)."""
    signature = inspect.signature(method)
    verb = method.__name__

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as exc:
            raise CommandRefused(f"{verb} refused: {exc}", reason="invalid_value") from None
        for name, value in list(bound.arguments.items())[1:]:
            problem = _problem(name, value)
            if problem:
                raise CommandRefused(
                    f"{verb} refused (invalid_value): {name} {problem}, got "
                    f"{type(value).__name__} {quote(value)}",
                    reason="invalid_value",
                )
        try:
            return method(self, *args, **kwargs)
        except JointLabError:
            raise
        except (TypeError, ValueError, OverflowError) as exc:
            raise CommandRefused(
                f"{verb} refused (invalid_value): {str(exc)[:200]}", reason="invalid_value"
            ) from None

    return wrapper  # type: ignore[return-value]
