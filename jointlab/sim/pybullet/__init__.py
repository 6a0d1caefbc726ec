"""The PyBullet engine: worlds, robot bodies, the per-physics-step torque loop, batches.

Modules: :mod:`.client` (quiet start-up of a physics client), :mod:`.world` (``World`` on
PyBullet), :mod:`.body` (a description as one multibody), :mod:`.loop` (the NJointAction law
stepped with ``TORQUE_CONTROL``), :mod:`.batch` (several robots stepped together),
:mod:`.dynamics` (the description's rigid-body model evaluated by Bullet, no world).
"""

from jointlab.sim.pybullet.client import quiet_output  # first: PyBullet's banner goes nowhere
from jointlab.sim.pybullet.dynamics import bullet_model
from jointlab.sim.pybullet.world import PybulletWorld

#: This engine's world (``jointlab.sim.engine.World`` builds it for ``engine="pybullet"``).
World = PybulletWorld

__all__ = ["PybulletWorld", "World", "bullet_model", "quiet_output"]
