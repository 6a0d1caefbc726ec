"""How a body's declared contact friction is set on PyBullet."""

from __future__ import annotations

__all__ = ["OBJECT_FRICTION_ANCHOR", "contact_friction"]

#: ``changeDynamics`` option given to every object a scene adds (boxes, spheres, URDF
#: objects), never to robot links or the ground plane.
#:
#: Without friction anchors Bullet's friction impulses correct velocities only, so a contact
#: that should stick creeps a little every step (a cube held by two capsule jaws crept down
#: and out of the grip while carried: PyBullet's PickPlace expert 11/20, Stack 8/20).
#: Anchored, a sticking contact holds its position, as MuJoCo's constraint-based friction
#: does; sliding contacts still obey Coulomb's law. Bullet anchors a contact when either of
#: its two bodies asks for it (``btManifoldResult::addContactPoint`` ORs the bodies'
#: ``CF_HAS_FRICTION_ANCHOR`` flags), so the object's flag anchors its contacts with the jaws,
#: the ground and other objects; contacts between a robot and the ground keep Bullet's
#: default (anchoring those changed how a robot's feet and mount track its commands).
OBJECT_FRICTION_ANCHOR: dict[str, int] = {"frictionAnchor": 1}


def contact_friction(friction: float, torsional: float = 0.0) -> dict[str, float]:
    """PyBullet's ``changeDynamics`` options realising a body's declared contact friction.

    Bullet multiplies the two bodies' coefficients, which is the declared combination rule
    (:func:`jointlab.sim.scene.combined_friction`): the coefficient is set as it is. Rolling
    friction is 0, as on MuJoCo; spinning friction is the declared torsional friction (m;
    ``link.torsional_friction``, 0 but for gripper jaws), which Bullet combines with the other
    body's lateral coefficient (1 for the objects of a scene), as MuJoCo's ``condim`` 4 does.
    Objects of a scene also get :data:`OBJECT_FRICTION_ANCHOR`.
    """
    return {
        "lateralFriction": float(friction),
        "rollingFriction": 0.0,
        "spinningFriction": float(torsional),
    }
