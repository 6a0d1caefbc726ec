"""Steal time from /proc/stat, as the benchmark reports print it."""

from __future__ import annotations

import pytest

from jointlab.cli.steal import CpuTimes, cpu_times, steal_percent

LINE = "cpu  {user} 24533 82369 {idle} 3302 0 1309 {steal} 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"


def _stat(tmp_path, name, user, idle, steal):
    path = tmp_path / name
    path.write_text(LINE.format(user=user, idle=idle, steal=steal))
    return str(path)


def test_the_cpu_line_gives_the_total_and_the_stolen_ticks(tmp_path):
    times = cpu_times(_stat(tmp_path, "stat", 789438, 1616296, 22337))
    assert times == CpuTimes(
        total=789438 + 24533 + 82369 + 1616296 + 3302 + 1309 + 22337, steal=22337
    )


def test_the_share_stolen_between_two_readings(tmp_path):
    before = cpu_times(_stat(tmp_path, "a", 1000, 1000, 100))
    after = cpu_times(_stat(tmp_path, "b", 1600, 1300, 200))  # 1000 more ticks, 100 stolen
    assert steal_percent(before, after) == pytest.approx(10.0)
    assert steal_percent(after, before) is None  # time does not run backwards
    assert steal_percent(None, after) is None


@pytest.mark.parametrize("text", ["", "intr 1 2 3\n", "cpu 1 2 3\n"])
def test_an_unreadable_or_unexpected_file_gives_none(tmp_path, text):
    path = tmp_path / "stat"
    path.write_text(text)
    assert cpu_times(str(path)) is None
    assert cpu_times(str(tmp_path / "missing")) is None
