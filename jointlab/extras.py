"""Optional extras: import what a feature needs, or say which extra to install.

Heavy packages (PyTorch, Stable-Baselines3, Ray) come with ``pyproject.toml``'s extras, not
with ``pip install jointlab``. A feature that needs them calls :func:`require` first, so a
missing package is a :class:`~jointlab.errors.MissingExtraError` naming the extra and the
command that installs it, never a raw ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from jointlab.errors import MissingExtraError

__all__ = ["require"]


def require(extra: str, feature: str, *modules: str) -> list[ModuleType]:
    """Import ``modules`` for ``feature``; raise naming ``extra`` when any is missing.

    Args:
        extra: The pyproject extra that installs them (``"rl"``).
        feature: What needs them, for the message (``"jointlab train"``).
        *modules: Top-level module names (``"torch"``, ``"stable_baselines3"``).

    Raises:
        MissingExtraError: a module cannot be imported.
    """
    loaded, missing = [], []
    for name in modules:
        try:
            loaded.append(importlib.import_module(name))
        except ImportError:
            missing.append(name)
    if missing:
        raise MissingExtraError(
            f"{feature} needs {', '.join(missing)}, which the '{extra}' extra installs: "
            f'pip install "jointlab[{extra}]" (in a checkout: pip install -e ".[{extra}]", '
            "or make test for everything)"
        )
    return loaded
