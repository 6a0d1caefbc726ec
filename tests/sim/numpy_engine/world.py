"""The numpy engine's world: gravity and robots, no objects (the ``Engine`` protocol)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jointlab.errors import SimulationError
from jointlab.robots.description import RobotDescription
from jointlab.sim.markers import MarkerLook, MarkerSet
from jointlab.sim.scene import Attached, Camera, Scene, check_dt, vector
from numpy_engine.body import NumpyBody, NumpyLoop


def _refuse(what: str) -> SimulationError:
    return SimulationError(f"engine 'numpy' has no {what}")


class NumpyMarkers(MarkerSet):
    """Markers as remembered positions (nothing renders them)."""

    def __init__(self) -> None:
        super().__init__()
        self.positions: dict[int, np.ndarray] = {}

    def _create(self, look: MarkerLook, centre: np.ndarray) -> int:
        handle = -1 - len(self.positions)
        self.positions[handle] = np.array(centre)
        return handle

    def _move(self, body: int, centre: np.ndarray) -> None:
        self.positions[body] = np.array(centre)

    def _remove(self, body: int) -> None:
        self.positions.pop(body, None)


class NumpyWorld(Scene):
    """Robots integrated in numpy; the ground and objects are not modelled."""

    engine = "numpy"

    def __init__(
        self,
        dt: float = 0.001,
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
        gui: bool = False,
        ground: bool = True,
    ) -> None:
        if gui:
            raise _refuse("GUI")
        self.dt = check_dt(dt)
        self.gravity = np.array(vector("World gravity", gravity))
        self.gui = False
        self.steps = 0
        self.ground_id = None
        self._robots: list[Attached] = []
        self._bodies: dict[int, NumpyBody] = {}
        self._next = 1
        self._closed = False
        self.markers = NumpyMarkers()

    def _attach_robot(
        self, description: RobotDescription, dt: float
    ) -> tuple[NumpyBody, NumpyLoop]:
        """Refuses what the model cannot represent, naming the engine, the joint and why."""
        if not description.base.fixed:
            raise SimulationError(
                f"engine 'numpy' cannot load robot {description.name!r}: "
                "its base floats (only fixed bases)"
            )
        for spec in description.joints:
            if spec.coupling is not None:
                raise SimulationError(
                    f"engine 'numpy' cannot load robot {description.name!r}: joint "
                    f"{spec.name!r} is coupled to {[n for n, _ in spec.coupling.alpha_leading]}"
                    " (no coupling constraints)"
                )
        body = NumpyBody(self, description, self._next)
        self._bodies[self._next] = body
        self._next += 1
        return body, NumpyLoop(body, dt)

    def _physics_step(self) -> None:
        for body in self._bodies.values():
            body.integrate(self.dt)

    def _contacts(self, body_id: int) -> list[tuple[int, Any, float]]:
        return []  # no collision geometry: nothing ever touches

    def _render(self, width: int, height: int, camera: Camera) -> np.ndarray:
        raise _refuse("renderer")

    def _add_box(self, *args: Any) -> int:
        raise _refuse("objects")

    def _add_sphere(self, *args: Any) -> int:
        raise _refuse("objects")

    def _add_urdf(self, *args: Any) -> int:
        raise _refuse("objects")

    def _set_object_dynamics(self, *args: Any) -> None:
        raise _refuse("objects")

    def remove(self, body_id: int) -> None:
        raise _refuse("objects")

    @property
    def num_bodies(self) -> int:
        return len(self._bodies)

    def body_pose(self, body_id: int) -> tuple[np.ndarray, np.ndarray]:
        raise _refuse("objects")

    def body_velocity(self, body_id: int) -> tuple[np.ndarray, np.ndarray]:
        raise _refuse("objects")

    def reset_body(
        self,
        body_id: int,
        position: Sequence[float],
        orientation: Sequence[float] = (0.0, 0.0, 0.0),
    ) -> None:
        raise _refuse("objects")

    def close(self) -> None:
        self._close_robots()
