"""Optional extras: import what a feature needs, or say which extra to install.

Heavy packages (PyTorch, Stable-Baselines3, Ray) come with ``pyproject.toml``'s extras, not
with ``pip install jointlab``. A feature that needs them calls :func:`require` first, so a
missing package is a :class:`~jointlab.errors.MissingExtraError` naming the extra and the
command that installs it, never a raw ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from jointlab.errors import MissingExtraError

__all__ = ["check_installed", "installed", "require"]


def installed(*modules: str) -> bool:
    """True when every one of ``modules`` is installed (found, not imported: cheap).

    Args:
        *modules: Top-level module names (``"viser"``).
    """
    return not _not_found(modules)


def check_installed(extra: str, feature: str, *modules: str) -> None:
    """Raise as :func:`require` does when any of ``modules`` is missing, without importing.

    For preconditions: a command checks its extras before it makes a folder or starts a
    robot, and imports them later, where they are used.

    Raises:
        MissingExtraError: a module is not installed.
    """
    missing = _not_found(modules)
    if missing:
        raise _missing_extra(extra, feature, missing)


def _not_found(modules: tuple[str, ...]) -> list[str]:
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a parent package missing, or a broken module
            found = False
        if not found:
            missing.append(name)
    return missing


def _missing_extra(extra: str, feature: str, missing: list[str]) -> MissingExtraError:
    return MissingExtraError(
        f"{feature} needs {', '.join(missing)}, which the '{extra}' extra installs: "
        f'pip install "jointlab[{extra}]" (in a checkout: pip install -e ".[{extra}]", '
        "or make test for everything)"
    )


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
        raise _missing_extra(extra, feature, missing)
    return loaded
