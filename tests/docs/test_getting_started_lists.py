"""docs/getting-started.md names every built-in robot and every notebook (issue 41, item 12)."""

from __future__ import annotations

from pathlib import Path

from jointlab.robots import builtin_robots

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "getting-started.md").read_text()


def test_every_built_in_robot_is_named() -> None:
    assert [name for name in builtin_robots() if f"`{name}`" not in PAGE] == []


def test_every_notebook_is_named() -> None:
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 6
    assert [name for name in notebooks if name not in PAGE] == []
