"""Loading a description's URDF straight into a PyBullet client (no SimRobot in between)."""

from __future__ import annotations

import os
import tempfile

import pybullet

from jointlab.robots import RobotDescription, description_to_urdf


def load_urdf(client: int, description: RobotDescription, *, armature: bool = False) -> int:
    """Body id of ``description_to_urdf(description, armature)`` in ``client``, fixed base."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"{description.name}.urdf")
        with open(path, "w") as handle:
            handle.write(description_to_urdf(description, armature=armature))
        return pybullet.loadURDF(
            path,
            useFixedBase=True,
            physicsClientId=client,
            flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
        )
