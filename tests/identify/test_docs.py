"""The code blocks of docs/identification.md run as written (python blocks share a namespace)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "identification.md"
FENCE = re.compile(r"^```(?P<lang>\w*)[^\n]*\n(?P<body>.*?)^```\s*$", re.S | re.M)


@pytest.mark.slow
def test_the_identification_page_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    namespace: dict = {"__name__": "docs"}
    ran = []
    for match in FENCE.finditer(PAGE.read_text()):
        lang, body = match["lang"], match["body"]
        if lang == "python":
            exec(compile(body, f"{PAGE.name}:{match.start()}", "exec"), namespace)
        elif lang == "sh":
            result = subprocess.run(["bash", "-e", "-c", body], capture_output=True, text=True,
                                    env=env, timeout=300, check=False)  # fmt: skip
            assert result.returncode == 0, result.stdout + result.stderr
        else:
            continue
        ran.append(lang)
    assert ran.count("python") >= 2 and "sh" in ran
    assert namespace["report"].total_gap_closed > 0.8
    assert (tmp_path / "arm6_identified.yaml").exists() and (tmp_path / "report.png").exists()
