"""Loading a description's URDF straight into a PyBullet client (no SimRobot in between)."""

from __future__ import annotations

import os
import tempfile

import pybullet

from jointlab.robots import RobotDescription


def load_urdf(client: int, description: RobotDescription, *, armature: bool = False) -> int:
    """Body id of ``description.to_urdf(armature=...)`` in ``client``, fixed base, file inertia."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"{description.name}.urdf")
        with open(path, "w") as handle:
            handle.write(description.to_urdf(armature=armature))
        return pybullet.loadURDF(path, useFixedBase=True, physicsClientId=client,
                                 flags=pybullet.URDF_USE_INERTIA_FROM_FILE)
