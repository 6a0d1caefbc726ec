"""Servo identification validated without a real arm: planted servos, recorded by LeRobot.

An emulated SO-101 whose servos differ from the robot file by known amounts (stiffness ×0.7,
Coulomb and viscous friction ×2, 10 ms more delay; 1° of backlash, as the file has, which the
fit must find from no play as well as from the file's) is recorded through LeRobot's own
record loop (the ``jointlab`` robot plugin, lockstep) at 30 fps; then ``jointlab identify fit``
and ``jointlab gap`` run on the dataset as an owner types them.
Identification must recover every planted value within 20 % (backlash within 0.3°; Coulomb
friction within 25 %: on the lightest-loaded joint it trades against the backlash, measured
+23 % on wrist_flex) where it says it identified it, say why where it does not, and the
identified file must close at least 90 % of the replay gap (measured 96 %). Then the gap
report and the acceptance run on the emulated Koch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from interop.servo_recording import record_through_lerobot
from jointlab.cli import main
from jointlab.identify import plant
from jointlab.identify.errors import IdentificationError
from jointlab.identify.servo.excite import servo_excitation
from jointlab.interop.servo_traces import dataset_traces
from jointlab.robots import (
    description_from_dict,
    description_to_dict,
    dump_yaml,
    load_robot,
)

FPS = 30
SECONDS = 10.0
#: Where the arm moves about: raised off the table, gripper open (rad).
CENTRE = [0.0, 0.0, 1.2, 0.6, 0.0, 0.6]
PLANTED = {"stiffness": 0.7, "backlash": float(np.radians(1.0)), "delay": 0.010}


def _planted_file(folder: Path) -> Path:
    nominal = load_robot("so101")
    planted = plant(nominal, static_friction=2.0, damping=2.0)
    data = description_to_dict(planted)
    data["bus"]["rate"] = float(FPS)  # one Sync Write and one Sync Read per frame, as LeRobot
    for servo in data["bus"]["servos"].values():
        servo.update(PLANTED)
    path = folder / "so101_planted.yaml"
    path.write_text(dump_yaml(description_from_dict(data)))
    return path


@pytest.fixture(scope="module")
def planted_dataset(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("planted")
    path = _planted_file(folder)
    nominal = load_robot("so101")
    goals = servo_excitation(
        nominal, FPS, SECONDS, amplitude=np.radians(8.0), centre=CENTRE, seed=3
    )
    url = f"emulated://{path}?lockstep=1"
    return record_through_lerobot(
        url,
        list(nominal.joint_names),
        np.degrees(goals),
        FPS,
        folder / "dataset",
        folder / "calibration",
    )


@pytest.mark.slow
def test_identification_recovers_the_planted_servos_and_closes_the_gap(
    planted_dataset, tmp_path, capsys
) -> None:
    nominal = load_robot("so101")
    traces = dataset_traces(planted_dataset, nominal)
    assert traces[0].fps == FPS and len(traces[0]) == int(SECONDS * FPS)
    # The owner's commands: identify into a robot file, then the gap report with it.
    out = tmp_path / "runs"
    assert (
        main(["identify", "fit", "so101", str(planted_dataset), "--out", str(out), "--name", "fit"])
        == 0
    )
    written = load_robot(out / "fit" / "so101_identified.yaml")
    estimates = (out / "fit" / "estimates.txt").read_text()
    rows = {
        (line.split()[0], line.split()[1]): line
        for line in estimates.splitlines()
        if line.split() and line.split()[0] in nominal.joint_names
    }
    truth = {
        "stiffness": 0.7,
        "coulomb": 0.04,
        "viscous": 2 * 0.6243,
        "backlash": PLANTED["backlash"],
        "delay": PLANTED["delay"],
    }
    identified = 0
    for j, joint in enumerate(nominal.joint_names):
        servo = written.bus.servos[j]
        values = {
            "stiffness": servo.stiffness,
            "backlash": servo.backlash,
            "delay": servo.delay,
            "coulomb": written.static_friction[j],
            "viscous": written.damping[j],
        }
        for parameter, value in values.items():
            row = rows[(joint, parameter)]
            if "cannot identify" in row:  # not written, and says why
                assert "cannot identify: " in row and len(row.split("cannot identify: ")[1]) > 20
                continue
            identified += 1
            if parameter == "backlash":
                assert abs(value - truth["backlash"]) <= np.radians(0.3), (row, estimates)
            else:
                tolerance = 0.25 if parameter == "coulomb" else 0.2
                assert abs(value / truth[parameter] - 1) <= tolerance, (row, estimates)
        for parameter in ("stiffness", "viscous", "delay"):  # identified on every joint
            assert "cannot identify" not in rows[(joint, parameter)], estimates
    assert identified >= 21, estimates  # and the loaded joints' friction and backlash
    assert (
        main(
            [
                "gap",
                "so101",
                str(planted_dataset),
                "--identified",
                str(out / "fit" / "so101_identified.yaml"),
                "--out",
                str(out),
                "--name",
                "gap",
            ]
        )
        == 0
    )
    text = (out / "gap" / "gap.txt").read_text()
    closed = float(text.rsplit("share of the gap closed:", 1)[1].split("%")[0])
    assert closed >= 90.0, text
    assert sorted(p.name for p in (out / "gap").glob("gap-*.png")) == sorted(
        f"gap-{j}.png" for j in nominal.joint_names
    )
    capsys.readouterr()


def test_another_robots_dataset_is_refused_naming_it(planted_dataset) -> None:
    with pytest.raises(IdentificationError, match=r"feature 'observation.state' has joints"):
        dataset_traces(planted_dataset, load_robot("arm6"))
    with pytest.raises(IdentificationError, match="no episode 4"):
        dataset_traces(planted_dataset, load_robot("so101"), episodes=[4])
