"""The CLI's tables say what each column is, with its unit (issue 41, item 12)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from rich.table import Table

from jointlab.cli.describe import actuator_table
from jointlab.cli.listing import _verbs
from jointlab.cli.programs import summary_table
from jointlab.program import VERBS
from jointlab.robots import builtin_robots, load_robot


def _cells(table: Table) -> dict[str, list[str]]:
    return {str(column.header): [str(c) for c in column.cells] for column in table.columns}


def test_every_program_verb_is_described() -> None:
    cells = _cells(_verbs())
    assert cells["verb"] == list(VERBS)
    assert all(len(what) > 15 for what in cells["what"]), cells["what"]
    assert "``" not in "".join(cells["what"]) and ":mod:" not in "".join(cells["what"])


@pytest.mark.parametrize("name", builtin_robots())
def test_describe_gives_every_quantity_its_unit(name) -> None:
    description = load_robot(name)
    cells = _cells(actuator_table(description))
    units = {"rotary": ("rad", "rad/s", "N·m"), "linear": ("m", "m/s", "N")}
    for row, kind in enumerate(cells["type"]):
        if kind == "fixed":
            continue
        length, speed, force = units[kind]
        assert cells["range"][row].endswith(f"] {length}")
        assert cells["home"][row].endswith(f" {length}")
        assert cells["v max"][row].endswith(f" {speed}")
        assert cells["effort"][row].endswith(f" {force}")
    assert all(m == "-" or m.endswith(" kg") for m in cells["mass"])


def _result(verb: str, max_error: float, rms_error: float) -> SimpleNamespace:
    summary = SimpleNamespace(
        duration=0.5, ticks=500, max_tracking_error=max_error, rms_tracking_error=rms_error
    )
    return SimpleNamespace(step=SimpleNamespace(verb=verb), summary=summary, peak_torque=1.5)


@pytest.mark.parametrize(
    ("linear", "error", "torque"),
    [
        ([False, False], "mrad", "N·m"),
        ([True], "mm", "N"),
        ([True, False], "mrad|mm", "N·m|N"),
    ],
)
def test_the_run_table_gives_units(linear, error, torque) -> None:
    table = summary_table("t", [_result("home", 0.0066, 0.0025)], 0.5, linear)
    cells = _cells(table)
    assert set(cells) == {
        "step",
        "command",
        "robot time (s)",
        "ticks",
        f"max err ({error})",
        f"rms err ({error})",
        f"peak torque ({torque})",
    }
    assert cells[f"max err ({error})"] == ["6.6", "6.6"]  # step 0 and all, in thousandths
    assert all(
        re.search(r"\(.+\)", header)
        for header in cells
        if header not in ("step", "command", "ticks")
    )
