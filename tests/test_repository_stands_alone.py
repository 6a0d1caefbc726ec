"""The repository refers to nothing outside itself (no design notes, seed files or paths
of the machine it was written on)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("jointlab", "docs", "notebooks", "examples", "tests", "benchmarks")
OUTSIDE = re.compile(r"DESIGN\.md|STYLE\.md|shared/seeds|seeds folder|/work/")


def test_no_reference_to_files_outside_the_repository() -> None:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "Makefile", ROOT / "pyproject.toml"]
    for folder in FOLDERS:
        files += [
            p
            for p in (ROOT / folder).rglob("*")
            if p.suffix in (".py", ".md", ".ipynb", ".yaml", ".toml")
        ]
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in files
        if p.is_file() and p != Path(__file__)
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not offenders, offenders
