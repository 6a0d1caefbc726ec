"""Bus tools an arm owner runs first: find the port, survey the bus (``jointlab check``).

find-port runs on real pseudo-terminals: one of them goes away while the scripted person
"unplugs" the arm. The survey reads an emulated SO-101 and Koch bus register by register
through the vendors' SDKs, with a hardware error injected into one servo.
"""

from __future__ import annotations

import os

import pytest

import jointlab
from jointlab.cli import main
from jointlab.errors import ConfigurationError
from jointlab.hardware.host.ports import serial_ports, vanished_port
from jointlab.hardware.servo_host.survey import survey
from jointlab.hardware.vendors import vendor


def _pty() -> tuple[int, int, str]:
    master, slave = os.openpty()
    return master, slave, os.ttyname(slave)


def test_find_port_names_the_pty_that_went_away(monkeypatch, capsys) -> None:
    ptys = [_pty() for _ in range(3)]
    paths = [path for _, _, path in ptys]
    unplugged = ptys[1]

    def person_unplugs(prompt: str) -> str:
        assert "unplug" in prompt
        os.close(unplugged[0])
        os.close(unplugged[1])
        return ""

    monkeypatch.setattr("builtins.input", person_unplugs)
    try:
        assert main(["find-port", "--ports", *paths]) == 0
        out = capsys.readouterr().out
        assert f"the arm is on {unplugged[2]}" in out
    finally:
        for master, slave, _ in (ptys[0], ptys[2]):
            os.close(master)
            os.close(slave)


def test_find_port_when_nothing_or_two_go() -> None:
    with pytest.raises(ConfigurationError, match="no port disappeared"):
        vanished_port(["/dev/ttyACM0"], ["/dev/ttyACM0"])
    with pytest.raises(ConfigurationError, match="2 ports disappeared"):
        vanished_port(["/dev/a", "/dev/b"], [])
    assert serial_ports(["/nonexistent/tty*", "/dev/null"]) == ["/dev/null"]


def test_the_survey_of_an_emulated_so101_bus() -> None:
    with jointlab.connect("emulated://so101?lockstep=1") as robot:
        robot.emulator.inject(3, 0b100)  # servo 3 overheats
        found = survey(robot, pings=6)
    assert [row.id for row in found.rows] == [1, 2, 3, 4, 5, 6]
    assert {row.model for row in found.rows} == {"sts3215"}
    assert found.rows[0].firmware == "3.10" and found.rows[0].joint == "shoulder_pan"
    assert all(11.0 < row.voltage < 13.0 for row in found.rows)
    assert found.rows[2].errors == ("overheating error",)
    assert all(row.errors == () for row in found.rows if row.id != 3)
    assert found.ping_ms.shape == (6,) and found.missing == 0 and found.exchanges > 6
    assert abs(found.rows[1].position - robot.description.home[1]) < 0.2


def test_check_prints_the_servo_table(capsys) -> None:
    assert main(["check", "emulated://koch?lockstep=1", "--pings", "4"]) == 0
    out = capsys.readouterr().out
    assert "servos on the dynamixel bus at 1000000 bit/s" in out
    assert "xl430-w250" in out and "xl330-m288" in out
    assert "ping round trip" in out and "0 missing and 0 corrupt" in out


def test_error_bit_names() -> None:
    assert vendor("dynamixel").error_names(0b101000) == ("motor encoder error", "overload error")
    assert vendor("feetech").error_names(0b1) == ("input voltage error",)
