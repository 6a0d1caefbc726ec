"""Cameras for datasets: the simulator's renders or a real camera through OpenCV.

* :class:`SimCamera` renders the follower: a ``sim://`` robot's own world, or, for any other
  backend (emulated or real), a simulated twin of the robot posed at each frame's measured
  joint positions;
* :class:`OpenCVCamera` grabs from a real camera (``cv2.VideoCapture``: an index or a
  device path), converted to RGB and resized to the dataset's size.

``parse_camera("front")``, ``"front=sim:128x96"``, ``"wrist=opencv:0:640x480"``: the
``--camera`` syntax of ``jointlab record``.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError, LinkError
from jointlab.interface import ArrayState
from jointlab.robots import RobotDescription

__all__ = ["DEFAULT_SIZE", "CameraSource", "OpenCVCamera", "SimCamera", "parse_camera"]

#: Default image size (width, height), pixels.
DEFAULT_SIZE = (128, 96)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SIZE = re.compile(r"\d+x\d+\Z")


class CameraSource(Protocol):
    """A camera of a dataset: a name, a size and :meth:`grab`."""

    name: str
    width: int
    height: int

    def grab(self, state: ArrayState) -> np.ndarray:
        """An RGB image ``(height, width, 3)`` uint8 for the frame whose state is ``state``."""

    def close(self) -> None:
        """Release the camera."""


class SimCamera:
    """The follower rendered by the simulator (its world, or a twin posed as measured).

    Args:
        name: Camera name (the dataset feature ``observation.images.<name>``).
        robot: The follower (a ``sim://`` robot is rendered in its own world), or a
            description (a twin is always made).
        width: Image width, pixels.
        height: Image height, pixels.
    """

    def __init__(
        self,
        name: str,
        robot: Robot | RobotDescription,
        width: int = DEFAULT_SIZE[0],
        height: int = DEFAULT_SIZE[1],
    ) -> None:
        from jointlab.envs.rendering import default_camera

        description = robot if isinstance(robot, RobotDescription) else robot.description
        self.name, self.width, self.height = name, int(width), int(height)
        self._camera = default_camera(description)
        world = getattr(robot, "world", None)
        self._twin = None
        if world is None:  # not simulated here: a twin of the robot in a world of our own
            from jointlab.sim import SimRobot

            self._twin = SimRobot(description)
            world = self._twin.world
        self._world = world

    def grab(self, state: ArrayState) -> np.ndarray:
        """Render the frame (the twin first takes ``state``'s joint positions)."""
        if self._twin is not None:
            self._twin.reset(np.asarray(state.position), np.zeros(state.dof))
        return self._world.render(self.width, self.height, self._camera)

    def show(self, markers: list[Any]) -> None:
        """Draw a task's ``markers`` (a goal) in every later frame."""
        from jointlab.envs.rendering import draw_markers

        draw_markers(self._world, markers)

    def close(self) -> None:
        """Close the twin world (a ``sim://`` follower's world is the follower's)."""
        if self._twin is not None:
            self._twin.close()


class OpenCVCamera:
    """A real camera through OpenCV (``opencv-python-headless``).

    Args:
        name: Camera name.
        device: A camera index (``0``) or a device path or video file.
        width: Dataset image width, pixels (grabs are resized to it).
        height: Dataset image height, pixels.

    Raises:
        LinkError: the camera does not open or gives no image.
    """

    def __init__(
        self,
        name: str,
        device: int | str,
        width: int = DEFAULT_SIZE[0],
        height: int = DEFAULT_SIZE[1],
    ) -> None:
        import cv2

        self.name, self.width, self.height = name, int(width), int(height)
        self._cv2 = cv2
        self._capture: Any = cv2.VideoCapture(device)
        if not self._capture.isOpened():
            raise LinkError(f"camera {name!r}: OpenCV cannot open {device!r}")
        self.device = device

    def grab(self, state: ArrayState) -> np.ndarray:
        """The camera's next image, RGB, resized to ``(height, width, 3)``."""
        del state
        ok, image = self._capture.read()
        if not ok or image is None:
            raise LinkError(f"camera {self.name!r} ({self.device!r}) gave no image")
        image = self._cv2.cvtColor(image, self._cv2.COLOR_BGR2RGB)
        if image.shape[:2] != (self.height, self.width):
            image = self._cv2.resize(image, (self.width, self.height))
        return np.ascontiguousarray(image, dtype=np.uint8)

    def close(self) -> None:
        """Release the camera."""
        self._capture.release()


def parse_camera(spec: str, robot: Robot) -> CameraSource:
    """A camera from ``NAME[=sim|opencv[:DEVICE][:WxH]]`` (default ``sim``, 128x96).

    Raises:
        ConfigurationError: the spec does not parse, or ``opencv`` without a device.
    """
    name, _, rest = spec.strip().partition("=")
    parts = rest.split(":") if rest else ["sim"]
    kind, parts = parts[0], parts[1:]
    size = DEFAULT_SIZE
    if parts and _SIZE.match(parts[-1]):
        width, height = parts.pop().split("x")
        size = (int(width), int(height))
    device = ":".join(parts) or None
    if not _NAME.match(name) or kind not in ("sim", "opencv"):
        raise ConfigurationError(
            f"--camera {spec!r}: expected NAME, NAME=sim[:WxH] or NAME=opencv:DEVICE[:WxH] "
            "(e.g. front, front=sim:128x96, wrist=opencv:0:640x480)"
        )
    if min(size) <= 0:
        raise ConfigurationError(f"--camera {spec!r}: the size must be positive")
    if kind == "sim":
        if device is not None:
            raise ConfigurationError(f"--camera {spec!r}: a sim camera takes no device")
        return SimCamera(name, robot, *size)
    if device is None:
        raise ConfigurationError(f"--camera {spec!r}: name the OpenCV device, e.g. {name}=opencv:0")
    return OpenCVCamera(name, int(device) if device.isdigit() else device, *size)
