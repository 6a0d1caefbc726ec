"""Run the notebooks as a reader's Jupyter would, and store them with their outputs.

    python notebooks/execute.py --store            # every notebook, outputs written back
    python notebooks/execute.py 03_train_reach     # run one, store nothing

A fresh IPython kernel per notebook, the inline backend (``MPLBACKEND`` removed), a scratch
working folder. The notebooks are committed executed, so a reader on the web sees the
figures; ``tests/test_notebooks.py`` runs them again and compares the outputs' structure
(:func:`structure`) with what is stored.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

FOLDER = Path(__file__).resolve().parent
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))


def execute(path: Path, workdir: Path | None = None, timeout: int = 900) -> Any:
    """The notebook at ``path`` executed in a fresh kernel (its outputs filled in)."""
    notebook = nbformat.read(path, as_version=4)
    os.environ.pop("MPLBACKEND", None)
    os.environ.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    os.environ.setdefault("JOINTLAB_DEAD_MS", "10000")  # notebook 04's emulator, busy machine
    with tempfile.TemporaryDirectory(prefix="jointlab-notebook-") as scratch:
        where = str(workdir or scratch)
        NotebookClient(notebook, timeout=timeout, kernel_name="python3", record_timing=False,
                       resources={"metadata": {"path": where}}).execute()  # fmt: skip
    return notebook


def structure(notebook: Any) -> list[list[str]]:
    """Per code cell, what it shows: rich outputs by type and MIME types, stdout as one item.

    Text and pixels are left out (they vary with timing and fonts); stderr is left out
    (warnings differ between machines); consecutive stdout chunks count once.
    """
    shapes = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        items: list[str] = []
        for output in cell.outputs:
            kind = output.output_type
            if kind == "stream":
                if output.get("name") == "stdout" and (not items or items[-1] != "stdout"):
                    items.append("stdout")
                continue
            if kind == "error":
                items.append(f"error {output.get('ename')}")
                continue
            mimes = sorted(m for m in output.get("data", {}) if m != "text/plain")
            items.append(f"{kind} {' '.join(mimes) or 'text/plain'}")
        shapes.append(items)
    return shapes


def main() -> int:
    """Run the chosen notebooks; with ``--store`` write their outputs back."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebook stems (default: all)")
    parser.add_argument("--store", action="store_true", help="write the outputs back")
    args = parser.parse_args()
    chosen = [p for p in NOTEBOOKS if not args.names or p.stem in args.names]
    for path in chosen:
        print(f"running {path.name}...", flush=True)
        notebook = execute(path)
        if args.store:
            for cell in notebook.cells:
                cell.get("metadata", {}).pop("execution", None)
            nbformat.write(notebook, path)
            print(f"  stored {path.name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
