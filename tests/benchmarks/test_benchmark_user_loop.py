"""``benchmarks/user_loop.py --quick``: issue 41's pair runs and reports every ratio."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_user_loop_benchmark_reports_the_pair_in_paired_rounds(tmp_path):
    summary = tmp_path / "summary.jsonl"
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "user_loop.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "JOINTLAB_BENCH_SUMMARY": str(summary)},
    )
    assert result.returncode == 0, result.stderr
    assert "300 periods of 1 ms x 3 paired rounds, the loops in lockstep" in result.stdout
    for peer in ("raw", "raw-list", "raw-ground", "raw-list-ground"):
        assert re.search(
            rf"user / {re.escape(peer)} +\d+\.\d{{3}} \[\d+\.\d{{3}}-\d+\.\d{{3}}\]x", result.stdout
        ), peer
    rows = [json.loads(line) for line in summary.read_text().splitlines()]
    assert [row["target"] for row in rows] == ["<= 1.15", "", ""]
    assert all(row["low"] <= row["median"] <= row["high"] for row in rows)
