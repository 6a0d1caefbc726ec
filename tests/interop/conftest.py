"""LeRobot interop tests: LeRobot's own drivers against JointLab's emulated servo buses.

LeRobot (``lerobot==0.4.4``, installed by ``make test`` without its pinned torch) must
import; where torchvision cannot load next to the project's torch build, a stand-in that
raises on use is put on the path (``stand_ins/``).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

try:
    importlib.import_module("torchvision.transforms.functional")
except Exception:  # any failure to load means: use the stand-in
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]
    sys.path.insert(0, str(Path(__file__).parent / "stand_ins"))

if os.environ.get("CI") != "true":
    pytest.importorskip("lerobot", reason="LeRobot interop needs `make test` (lerobot extra)")
