"""Every notebook runs, and every cell that makes a figure shows it as a picture.

The notebooks are executed as a user's Jupyter would run them: a fresh IPython kernel with
the inline backend (the test suite's ``MPLBACKEND=Agg`` is removed from its environment),
and a cell counts as showing a figure only if it has an ``image/png`` output. Each notebook
must end with a picture.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
#: Source that builds or shows a figure.
MAKES_FIGURE = re.compile(r"\bFigure\(|\bplot_\w+\(|\.subplots\(|\bplt\.|\bimshow\(")


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_shows_its_figures(path: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setenv("PYTHONWARNINGS", "ignore::DeprecationWarning")
    monkeypatch.setenv("JOINTLAB_DEAD_MS", "10000")  # notebook 04's emulator on a busy machine
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()  # fmt: skip
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    pictures = ["image/png" in output.get("data", {}) for cell in code for output in cell.outputs]
    assert any(pictures), f"{path.name} shows no picture at all"
    for index, cell in enumerate(code):
        has_png = any("image/png" in output.get("data", {}) for output in cell.outputs)
        if MAKES_FIGURE.search(cell.source):
            assert has_png, f"{path.name}, code cell {index} makes a figure but shows none"
        text = "".join(output.get("text", "") for output in cell.outputs)
        assert "argv[0]=" not in text and "pybullet build time" not in text, text
    assert any("image/png" in output.get("data", {}) for output in code[-1].outputs), (
        f"{path.name} does not end with a picture"
    )
    assert os.environ.get("MPLBACKEND") is None
