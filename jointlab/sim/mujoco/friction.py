"""The product friction rule on MuJoCo: explicit contact pairs where priorities cannot do it.

JointLab's rule is that two bodies slide against each other with the product of their
sliding friction coefficients (:func:`jointlab.sim.scene.combined_friction`), Bullet's own
rule. MuJoCo takes the larger of two geoms' coefficients, or that of the geom with the higher
``priority``. A geom whose coefficient differs from 1 gets priority 1
(:func:`jointlab.sim.mujoco.mjcf.contact_friction`, :meth:`World.set_object_dynamics
<jointlab.sim.scene.Scene.set_object_dynamics>`), which makes every contact with a body at 1
(the ground, default links and objects) use the product. Where **both** bodies differ from 1,
:func:`product_pairs` excludes the two bodies' dynamic contacts and adds an explicit
``<pair>`` for each pair of their geoms, with the product as its friction; MuJoCo then uses
the pair's parameters for those contacts.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

__all__ = ["PREFIX", "product_pairs"]

#: Name prefix of the pairs, excludes and geom names this module adds.
PREFIX = "jointlab-friction/"


def _collide(first: Any, second: Any) -> bool:
    """MuJoCo's contype/conaffinity test of two geoms."""
    return bool((first.contype & second.conaffinity) or (second.contype & first.conaffinity))


def _wanted(spec: Any) -> dict[tuple[str, str], list[tuple[Any, Any, float]]]:
    """Body pairs that need explicit pairs: ``{(body1, body2): [(geom1, geom2, mu)]}``."""
    geoms = [g for g in spec.geoms if g.contype or g.conaffinity]
    by_body: dict[str, list[Any]] = {}
    for geom in geoms:
        by_body.setdefault(geom.parent.name, []).append(geom)
    special = sorted(
        {name for name, group in by_body.items() if any(float(g.friction[0]) != 1.0 for g in group)}
    )
    wanted: dict[tuple[str, str], list[tuple[Any, Any, float]]] = {}
    for first, second in combinations(special, 2):
        pairs = [
            (a, b, float(a.friction[0]) * float(b.friction[0]))
            for a in by_body[first]
            for b in by_body[second]
            if _collide(a, b)
        ]
        if any(float(a.friction[0]) != 1.0 and float(b.friction[0]) != 1.0 for a, b, _ in pairs):
            wanted[(first, second)] = pairs
    return wanted


def product_pairs(spec: Any, model: Any | None = None) -> bool:
    """Bring the spec's explicit friction pairs in line with the geoms' coefficients.

    Args:
        spec: The world's ``MjSpec``.
        model: Its compiled model; when the set of pairs is unchanged, their friction is
            updated in it in place too.

    Returns:
        True when pairs or excludes were added or removed (the spec needs a recompile).
    """
    wanted = _wanted(spec)
    ours = [p for p in spec.pairs if p.name.startswith(PREFIX)]
    excludes = [e for e in spec.excludes if e.name.startswith(PREFIX)]
    names = {f"{PREFIX}{b1}|{b2}" for b1, b2 in wanted}
    if {e.name for e in excludes} == names and len(ours) == sum(map(len, wanted.values())):
        for (b1, b2), pairs in wanted.items():  # the same pairs: only their coefficients
            for k, (_, _, mu) in enumerate(pairs):
                pair = spec.pair(f"{PREFIX}{b1}|{b2}|{k}")
                pair.friction = [mu, mu, 0.0, 0.0, 0.0]
                if model is not None:
                    model.pair(pair.name).friction[:] = [mu, mu, 0.0, 0.0, 0.0]
        return False
    for element in ours + excludes:
        spec.delete(element)
    for count, geom in enumerate(spec.geoms):
        if not geom.name:
            geom.name = f"{PREFIX}geom{count}"
    for (b1, b2), pairs in wanted.items():
        spec.add_exclude(name=f"{PREFIX}{b1}|{b2}", bodyname1=b1, bodyname2=b2)
        for k, (a, b, mu) in enumerate(pairs):
            spec.add_pair(
                name=f"{PREFIX}{b1}|{b2}|{k}",
                geomname1=a.name,
                geomname2=b.name,
                condim=3,
                friction=[mu, mu, 0.0, 0.0, 0.0],
            )
    return bool(wanted) or bool(ours or excludes)
