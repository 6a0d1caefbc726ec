"""Notebooks are committed with outputs stripped (CI executes them with nbmake)."""

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_has_no_outputs(path: Path) -> None:
    cells = json.loads(path.read_text())["cells"]
    dirty = [i for i, c in enumerate(cells) if c.get("outputs") or c.get("execution_count")]
    assert not dirty, f"{path.name}: cells {dirty} have outputs; strip them before committing"


def test_notebooks_are_numbered() -> None:
    names = [p.stem for p in NOTEBOOKS]
    assert names, "notebooks/ is empty"
    assert all(name[:2].isdigit() and name[2] == "_" for name in names), names
