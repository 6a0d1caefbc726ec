"""Shared fixtures: deterministic hypothesis profile and headless matplotlib."""

import os
import sys
from collections.abc import Callable

import matplotlib
import pytest
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci")


def _firmware_build():  # tests/firmware/firmware_build.py, also for tests outside that folder
    import importlib.util
    from pathlib import Path

    module = sys.modules.get("firmware_build")
    if module is None:
        path = Path(__file__).parent / "firmware" / "firmware_build.py"
        spec = importlib.util.spec_from_file_location("firmware_build", path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules["firmware_build"] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="session")
def pil_build() -> Callable[[str], None]:
    """Builds the reference firmware's PIL ELF for a robot, once per robot and session.

    arm6 goes to ``firmware/build/``, any other robot to ``firmware/build/NAME/``, where
    ``emulated://NAME?device=firmware`` finds it. Skips without arm-none-eabi-gcc or
    qemu-system-arm, except in CI, where it fails.
    """
    build, done = _firmware_build(), set()

    def make(robot: str) -> None:
        if robot not in done:
            build.require("make", "arm-none-eabi-gcc", "qemu-system-arm")
            where = {} if robot == "arm6" else {"BUILD": f"build/{robot}"}
            build.make("pil", ROBOT=robot, PYTHON=sys.executable, **where)
            done.add(robot)

    return make


@pytest.fixture(scope="session")
def datasheet_arm(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    """A built-in servo arm's robot file with datasheet servos: its backlash taken out.

    For comparisons of ``sim://ARM`` (no servo loop, so no play) with ``emulated://ARM``
    that are about the firmware and the bus; the built-in SO-101's 1° of play is compared
    on its own. Returns the file's path (the name itself where the arm has no play).
    """
    from jointlab.robots import description_from_dict, description_to_dict, dump_yaml, load_robot

    folder = tmp_path_factory.mktemp("datasheet")

    def path(name: str) -> str:
        data = description_to_dict(load_robot(name))
        servos = data["bus"]["servos"].values()
        if not any(servo.get("backlash") for servo in servos):
            return name
        for servo in servos:
            servo.pop("backlash", None)
        target = folder / f"{name}.yaml"
        target.write_text(dump_yaml(description_from_dict(data)))
        return str(target)

    return path


@pytest.fixture(scope="session")
def pil_firmware(pil_build: Callable[[str], None]) -> None:
    """The PIL build for arm6 (``emulated://arm6?device=firmware``)."""
    pil_build("arm6")


@pytest.fixture(autouse=True)
def normal_scheduling_after_each_test():
    """Every test ends with this process's scheduling as it began.

    LeRobot's own record loop (the plugin tests run it in-process) encodes videos with
    SVT-AV1, which switches the calling thread to SCHED_FIFO 99 as root and leaves it so;
    everything the worker starts afterwards (emulators, Chromium) would inherit a real-time
    policy and could starve the machine. JointLab's own writer keeps the policy itself
    (``jointlab.scheduling``); this guard covers third-party code run by the tests.
    """
    from jointlab.scheduling import kept_scheduling

    with kept_scheduling():
        yield
