"""The firmware core's C unit tests (firmware/host/test_core.c), built and run on the host."""

from __future__ import annotations

import subprocess

from firmware_build import FIRMWARE, make, require


def test_core_unit_tests_pass() -> None:
    """``make -C firmware host-test``: CRC, COBS, section 12's bytes, law, watchdog, faults."""
    require("cc", "make")
    result = make("host-test")
    assert "checks passed" in result.stdout


def test_core_builds_warning_free_under_sanitizers() -> None:
    """The core and its tests under ASan/UBSan: no out-of-bounds access, no undefined value."""
    require("cc")
    out = FIRMWARE / "build" / "test_core_asan"
    out.parent.mkdir(exist_ok=True)
    sources = [
        *sorted(str(p.relative_to(FIRMWARE)) for p in (FIRMWARE / "src").glob("*.c")),
        "host/host_board.c",
        "host/test_core.c",
    ]
    subprocess.run(
        [
            "cc",
            "-std=c11",
            "-Iinclude",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O1",
            "-g",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-o",
            str(out),
            *sources,
            "-lm",
        ],
        cwd=FIRMWARE,
        check=True,
        timeout=300,
    )
    result = subprocess.run([str(out)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "checks passed" in result.stdout
