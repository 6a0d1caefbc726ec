"""The contact dynamics on MuJoCo: Bullet's hard contacts, expressed as MuJoCo's parameters.

JointLab's contact model is the one PyBullet realises with its defaults: a contact resists
penetration and sliding rigidly (no creep under a sustained load), recovers a penetration at
a fixed rate per physics step without bouncing (restitution 0), and its friction cone is
round (Bullet's cone friction). MuJoCo's contacts are soft by default (``solref`` 20 ms,
``solimp`` 0.9-0.95, a pyramidal cone): a frictional jam that holds on PyBullet creeps open
on MuJoCo, which is what made a pushed box topple on MuJoCo where it wedged on PyBullet.
:func:`hard_contacts` gives every contact of a MuJoCo world (geoms and explicit pairs):

* ``solref = (CONTACT_STEPS · dt, 1)``: time constant :data:`CONTACT_STEPS` physics steps,
  critically damped. Measured, not derived: a box released 1, 3 or 6 mm deep in the ground
  leaves it at 0.08 m/s per mm at ``dt`` = 1 ms on both engines (within 4 %,
  ``benchmarks/push_parity.py``); Bullet's rate scales as ``1/dt``, and five steps agree as
  well at ``dt`` 0.5 and 2 ms.
* ``solimp`` = :data:`~jointlab.sim.mujoco.mjcf.RIGID_SOLIMP` (impedance 0.99-0.999), as the
  joints' hard stops: a box below its slip angle or wedged against an arm does not creep.
* ``cone`` elliptic: the friction force lies in a disc of radius ``μ·N``, as Bullet's.
"""

from __future__ import annotations

from typing import Any

from jointlab.sim.mujoco.library import import_mujoco
from jointlab.sim.mujoco.mjcf import RIGID_SOLIMP

__all__ = ["CONTACT_STEPS", "contact_solref", "hard_contacts"]

#: Contact time constant in physics steps (MuJoCo ``solref[0] / dt``), matched to Bullet's
#: penetration recovery.
CONTACT_STEPS = 5.0


def contact_solref(dt: float) -> list[float]:
    """MuJoCo ``solref`` of contacts at physics step ``dt`` seconds: ``[5·dt, 1]``."""
    return [CONTACT_STEPS * float(dt), 1.0]


def hard_contacts(spec: Any, dt: float) -> None:
    """Give every geom and contact pair of ``spec`` (an ``MjSpec``) the hard contact model.

    Also sets the elliptic friction cone; call before every compile (the world does, in its
    recompile), so geoms added later (robots, objects, explicit friction pairs) get it too.
    """
    spec.option.cone = int(import_mujoco().mjtCone.mjCONE_ELLIPTIC)
    solref = contact_solref(dt)
    solimp = list(RIGID_SOLIMP)
    for element in (*spec.geoms, *spec.pairs):
        element.solref = solref
        element.solimp = solimp
