"""Every Python block of docs/hardware.md's servo-bus section runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

HARDWARE = Path(__file__).resolve().parents[3] / "docs" / "hardware.md"


def blocks() -> list[str]:
    text = HARDWARE.read_text(encoding="utf-8")
    section = text[text.index("## 9. Servo buses") :]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_section_has_examples() -> None:
    assert len(blocks()) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(blocks())))
def test_docs_example_runs(index, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("JOINTLAB_CALIBRATION_DIR", str(tmp_path))
    exec(compile(blocks()[index], f"docs/hardware.md block {index}", "exec"), {})  # our docs
