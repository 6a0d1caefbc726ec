"""Without the ros2 extra, ``jointlab ros2`` says which extra to install; nothing else needs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The CLI with rclpy unimportable, as in an install without the ros2 extra.
WITHOUT_ROS = (
    "import sys; sys.modules['rclpy'] = None; "
    "from jointlab.cli import main; sys.exit(main(sys.argv[1:]))"
)


def test_jointlab_ros2_without_the_extra_names_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_ROS, "ros2", "sim://arm6"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr
    assert "'ros2' extra" in done.stderr and 'pip install -e ".[ros2]"' in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_the_package_and_the_urdf_export_need_no_ros() -> None:
    code = (
        "import sys; sys.modules['rclpy'] = None; import jointlab.interop.ros2 as r; "
        "import jointlab; print(len(r.urdf_with_ros2_control(jointlab.load_robot('arm6'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=True,
    )
    assert int(done.stdout) > 1000
