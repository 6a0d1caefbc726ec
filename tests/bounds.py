"""The robustness bound: a call either succeeds or raises a JointLabError, within memory.

Hangs are caught by the per-test ``pytest.mark.timeout`` of the robustness suites (no test
asserts a wall-clock time); memory is the traced allocation peak (numpy registers its
buffers with :mod:`tracemalloc`).
"""

from __future__ import annotations

import tracemalloc
import warnings
from collections.abc import Callable
from typing import Any

from jointlab.errors import JointLabError

#: Largest traced allocation peak of one call, bytes (the issue's bound is 500 MB).
MEMORY_BOUND = 500 * 10**6
#: Longest error message, characters.
MESSAGE_BOUND = 1000


def loads_or_refuses(call: Callable[[], Any]) -> Any:
    """``call()``'s result, or the JointLabError it raised; fails on anything else.

    Asserts the traced memory peak stays under :data:`MEMORY_BOUND` and a refusal's message
    under :data:`MESSAGE_BOUND` characters. Warnings (importer repairs) are ignored.
    """
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = call()
            except JointLabError as exc:
                result = exc
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_BOUND, f"traced peak {peak / 1e6:.0f} MB"
    if isinstance(result, JointLabError):
        assert len(str(result)) < MESSAGE_BOUND, str(result)
    return result
