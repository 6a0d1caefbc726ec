"""``benchmarks/cold_code.py --quick`` runs and reports every gap as a ratio and in µs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_cold_code_benchmark_reports_each_gap_against_back_to_back(tmp_path):
    summary = tmp_path / "summary.jsonl"
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "cold_code.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "JOINTLAB_BENCH_SUMMARY": str(summary)},
    )
    assert result.returncode == 0, result.stderr
    for gap in ("busy 0.5 ms", "sleep 0.5 ms", "physics (20 steps)", "busy 2 ms"):
        assert re.search(rf"after {re.escape(gap)} +/ back to back +\d+\.\d\d \[", result.stdout)
    assert result.stdout.count("(this machine)") == 5
    rows = summary.read_text().splitlines()
    assert len(rows) == 4 and all('"target": ""' in line for line in rows)
