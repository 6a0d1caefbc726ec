"""A third engine in one folder: rigid-body dynamics in pure numpy, for the tests.

It implements the protocols of :mod:`jointlab.sim.engine` and nothing else: a world
(:class:`~.world.NumpyWorld`, a ``Scene``), a body (:class:`~.body.NumpyBody`) and the law
stepped on it (:class:`~.body.NumpyLoop`, a ``DriveLoop``). Physics: the description's own
rigid-body model (:class:`jointlab.robots.dynamics.DynamicsModel`: ``M(q)`` and recursive
Newton-Euler), integrated by semi-implicit Euler at ``dt``; no collision geometry, no
objects, no renderer. Registered by the tests as engine ``"numpy"``::

    register_engine("numpy", "numpy_engine", needs="numpy", install="(the tests' engine)")
"""

from numpy_engine.world import NumpyWorld

#: This engine's world.
World = NumpyWorld

__all__ = ["NumpyWorld", "World"]
