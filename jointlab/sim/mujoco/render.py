"""Offscreen RGB rendering of a MuJoCo world, with a clear error where OpenGL is missing.

MuJoCo renders through an OpenGL context chosen by the ``MUJOCO_GL`` environment variable
when ``mujoco`` is first imported: ``egl`` (headless, needs ``libEGL``: Debian ``libegl1``
and ``libegl-mesa0``), ``osmesa`` (headless software rendering, needs ``libOSMesa``: Debian
``libosmesa6``) or ``glfw`` (needs a display). JointLab sets ``egl`` on machines without a
display unless the variable is set (:func:`jointlab.sim.mujoco.library.import_mujoco`). When the
context cannot be made, :meth:`Renderer.render` raises
:class:`~jointlab.errors.SimulationError` naming the backend that failed and how to get one.

Cameras are :class:`jointlab.sim.Camera` (PyBullet's target/distance/yaw/pitch form), so one
camera frames the same view on both engines: MuJoCo's azimuth is ``yaw + 90°``, its
elevation the pitch.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError, SimulationError

__all__ = ["GL_HELP", "Renderer", "gl_backend"]

#: How to get a working OpenGL backend for MuJoCo's offscreen renderer.
GL_HELP = (
    "MuJoCo's offscreen renderer needs OpenGL: set MUJOCO_GL=egl (headless; needs libEGL, "
    "Debian: apt-get install libegl1 libegl-mesa0) or MUJOCO_GL=osmesa (headless software "
    "rendering; needs libOSMesa, Debian: apt-get install libosmesa6) before importing "
    "jointlab or mujoco, or MUJOCO_GL=glfw with a display"
)


def gl_backend() -> str:
    """The OpenGL backend MuJoCo was asked for (``MUJOCO_GL``; ``glfw`` when unset)."""
    return os.environ.get("MUJOCO_GL", "") or "glfw"


class Renderer:
    """Renders one world's model at any size up to the model's offscreen buffer.

    The GL context is made on the first :meth:`render` and kept per image size; call
    :meth:`close` (the world does) to release it, and :meth:`invalidate` when the world's
    model was recompiled.
    """

    def __init__(self, mujoco: Any) -> None:
        self._mujoco = mujoco
        self._renderers: dict[tuple[int, int], Any] = {}
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FREE

    def render(self, model: Any, data: Any, width: int, height: int, camera: Any) -> np.ndarray:
        """RGB pixels of ``data``'s current state, shape ``(height, width, 3)``, uint8.

        Raises:
            ConfigurationError: the size exceeds the model's offscreen buffer.
            SimulationError: no OpenGL context can be made (see :data:`GL_HELP`).
        """
        mujoco = self._mujoco
        limit = (model.vis.global_.offwidth, model.vis.global_.offheight)
        if width > limit[0] or height > limit[1]:
            raise ConfigurationError(
                f"render size {width}x{height} exceeds MuJoCo's offscreen buffer "
                f"{limit[0]}x{limit[1]}"
            )
        renderer = self._renderers.get((width, height))
        if renderer is None:
            try:
                renderer = mujoco.Renderer(model, height=height, width=width)
            except Exception as exc:  # GL failures surface as several types
                raise SimulationError(
                    f"cannot render with MuJoCo: no OpenGL context with MUJOCO_GL="
                    f"{gl_backend()!r} ({type(exc).__name__}: {exc}). {GL_HELP}"
                ) from exc
            self._renderers[(width, height)] = renderer
        view = self._camera
        view.lookat[:] = camera.target
        view.distance = float(camera.distance)
        view.azimuth = float(camera.yaw) + 90.0
        view.elevation = float(camera.pitch)
        model.vis.global_.fovy = float(camera.fov)
        extent = max(float(model.stat.extent), 1e-9)
        model.vis.map.znear = float(camera.near) / extent
        model.vis.map.zfar = float(camera.far) / extent
        mujoco.mj_kinematics(model, data)  # poses of the current state (mj_step leaves the last)
        mujoco.mj_camlight(model, data)
        renderer.update_scene(data, camera=view)
        return np.array(renderer.render(), dtype=np.uint8)

    def invalidate(self) -> None:
        """Drop the contexts (the model changed; they are made again on the next render)."""
        self.close()

    def close(self) -> None:
        """Release every GL context; safe to call twice."""
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()
