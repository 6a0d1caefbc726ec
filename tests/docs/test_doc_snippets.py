"""Every code block of README.md, docs/*.md and examples/README.md runs as written.

Blocks run in order, one page at a time, in a scratch folder that holds links to the
repository's ``examples/``, ``benchmarks/``, ``notebooks/`` and ``.venv/``, with HOME set
to it (so ``~`` paths land there) and the venv's ``bin`` first on PATH:

* ``python`` blocks run in one namespace per page (later blocks see earlier names);
* ``sh``/``bash`` blocks run with ``bash -e``;
* ``text``, ``c`` and unlabelled blocks are not code to run (formats, diagrams, outputs).

A block that cannot run here says why on the line before it:
``<!-- doc-test: skip REASON -->`` (needs a device, a display, a cluster, or minutes).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples/README.md"]
RUNNABLE = {"python", "sh", "bash"}
NOT_CODE = {"", "text", "c", "console", "yaml", "xml"}
FENCE = re.compile(r"^```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^```\s*$", re.S | re.M)
SKIP = re.compile(r"<!--\s*doc-test:\s*skip\s+(?P<reason>[^>]*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    body: str
    skip: str | None

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.search(before)
        line = text.count("\n", 0, match.start()) + 1
        found.append(
            Block(
                page, line, match["lang"].lower(), match["body"], skip["reason"] if skip else None
            )
        )
    return found


def scratch(tmp_path: Path) -> dict[str, str]:
    for name in ("examples", "benchmarks", "notebooks"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    env = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "JOINTLAB_VERBOSE")}
    env["MPLBACKEND"] = "Agg"  # python snippets that plot must not need a display
    env["HOME"] = str(tmp_path)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONWARNINGS"] = "ignore::DeprecationWarning"
    # The emulator runs on the wall clock: on a loaded test machine its process can stall
    # for longer than the default second without a state, which would read as a dead link.
    env["JOINTLAB_DEAD_MS"] = "10000"
    return env


def test_every_block_is_runnable_text_or_skipped_with_a_reason() -> None:
    for page in PAGES:
        for block in blocks(page):
            assert block.lang in RUNNABLE | NOT_CODE, f"{block.where()}: unknown language"
            if block.skip is not None:
                assert len(block.skip) > 10, f"{block.where()}: say why it is skipped"
                assert block.lang in RUNNABLE, f"{block.where()}: only code can be skipped"


def test_pages_without_runnable_blocks_are_known() -> None:
    quiet = sorted(p.name for p in PAGES if p not in RUN_PAGES)
    assert quiet == ["architecture.md", "benchmarks.md", "protocol.md"], quiet


def run_page(page: Path, tmp_path: Path) -> None:
    env = scratch(tmp_path)
    runnable = [b for b in blocks(page) if b.lang in RUNNABLE and b.skip is None]
    # One Python process per page runs its python blocks in order in one namespace; shell
    # blocks run in between, in the same folder.
    driver = tmp_path / "_page.py"
    parts = ["import subprocess, sys, os", "namespace = {'__name__': '__main__'}"]
    for index, block in enumerate(runnable):
        parts.append(f"print('--- block {index}: {block.where()}', flush=True)")
        if block.lang == "python":
            parts.append(f"exec(compile({block.body!r}, {block.where()!r}, 'exec'), namespace)")
        else:
            parts.append(f"subprocess.run(['bash', '-e', '-c', {block.body!r}], check=True)")
    driver.write_text("\n".join(parts) + "\n")
    result = subprocess.run(
        [sys.executable, str(driver)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if result.returncode != 0:
        last = [line for line in result.stdout.splitlines() if line.startswith("--- block")]
        pytest.fail(
            f"{page.name}: {last[-1] if last else 'before the first block'} failed\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )


#: Pages with at least one block to run (the others hold only formats and skipped blocks).
RUN_PAGES = [p for p in PAGES if any(b.lang in RUNNABLE and not b.skip for b in blocks(p))]


@pytest.mark.slow
@pytest.mark.parametrize("page", RUN_PAGES, ids=[str(p.relative_to(ROOT)) for p in RUN_PAGES])
def test_page_snippets_run_in_order(page: Path, tmp_path: Path) -> None:
    run_page(page, tmp_path)
