"""Every notebook runs, shows each figure as a picture, and shows what is stored in it.

The notebooks are executed as a user's Jupyter would run them (``notebooks/execute.py``: a
fresh IPython kernel, the inline backend, ``MPLBACKEND`` removed); a cell counts as showing
a figure only if it has an ``image/png`` output, and each notebook must end with one. The
outputs' structure (which cells print, which show pictures, tables or errors) must equal
the stored notebook's: the stored outputs stay in sync with the code. Text and pixels are
not compared (they vary with timing and fonts).
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: Source that builds or shows a figure.
MAKES_FIGURE = re.compile(r"\bFigure\(|\bplot_\w+\(|\.subplots\(|\bplt\.|\bimshow\(")


def _runner():
    spec = importlib.util.spec_from_file_location(
        "notebook_execute", ROOT / "notebooks" / "execute.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_shows_its_figures_and_matches_what_is_stored(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setenv("PYTHONWARNINGS", "ignore::DeprecationWarning")
    monkeypatch.setenv("JOINTLAB_DEAD_MS", "10000")  # notebook 04's emulator on a busy machine
    runner = _runner()
    notebook = runner.execute(path, workdir=tmp_path)
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
    stored = runner.structure(nbformat.read(path, as_version=4))
    assert runner.structure(notebook) == stored, (
        f"{path.name}: the outputs no longer match the stored ones; "
        "run python notebooks/execute.py --store"
    )
    assert os.environ.get("MPLBACKEND") is None
