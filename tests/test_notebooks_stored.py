"""Notebooks are committed executed, with their figures, so a reader on the web sees them.

``python notebooks/execute.py --store`` runs them and writes the outputs back;
``tests/test_notebooks.py`` re-runs them and compares the outputs' structure with these.
"""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
MAKES_FIGURE = re.compile(r"\bFigure\(|\bplot_\w+\(|\.subplots\(|\bplt\.|\bimshow\(")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_executed_with_its_figures(path: Path) -> None:
    code = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    counts = [c.get("execution_count") for c in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{path.name}: execution counts {counts}; run python notebooks/execute.py --store"
    )
    for index, cell in enumerate(code):
        kinds = [o["output_type"] for o in cell.get("outputs", [])]
        assert "error" not in kinds, f"{path.name}, code cell {index} stored an error"
        if MAKES_FIGURE.search("".join(cell["source"])):
            assert any("image/png" in o.get("data", {}) for o in cell["outputs"]), (
                f"{path.name}, code cell {index} makes a figure but none is stored"
            )
        for output in cell.get("outputs", []):
            assert "execution" not in cell.get("metadata", {}), "timings are not stored"
            text = "".join(output.get("text", ""))
            assert "Traceback" not in text, f"{path.name}, code cell {index}: {text[:200]}"


def test_notebooks_are_numbered() -> None:
    names = [p.stem for p in NOTEBOOKS]
    assert names, "notebooks/ is empty"
    assert all(name[:2].isdigit() and name[2] == "_" for name in names), names
