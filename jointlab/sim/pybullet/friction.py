"""How a body's declared contact friction is set on PyBullet."""

from __future__ import annotations

__all__ = ["contact_friction"]


def contact_friction(friction: float) -> dict[str, float]:
    """PyBullet's ``changeDynamics`` options realising a body's declared contact friction.

    Bullet multiplies the two bodies' coefficients, which is the declared combination rule
    (:func:`jointlab.sim.scene.combined_friction`): the coefficient is set as it is. Rolling
    and spinning friction are 0, as on MuJoCo (whose contacts have no torsional or rolling
    component, ``condim`` 3).
    """
    return {"lateralFriction": float(friction), "rollingFriction": 0.0, "spinningFriction": 0.0}
