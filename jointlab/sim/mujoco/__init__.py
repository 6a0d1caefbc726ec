"""The MuJoCo engine: the same robot files, actions and environments on a second simulator.

Chosen with ``engine="mujoco"`` (``World``, ``SimRobot``, the environments) or
``sim://NAME?engine=mujoco``; needs the ``mujoco`` extra (``pip install 'jointlab[mujoco]'``)::

    from jointlab import NJointAction, connect

    with connect("sim://arm6?engine=mujoco&control_dt=0.02") as robot:
        robot.apply(NJointAction.Position(robot.description.home))
        robot.step()                 # 20 physics steps inside one mj_step call
        state = robot.read()

Modules: :mod:`.mjcf` (a description as MJCF), :mod:`.world` (``MujocoWorld``), :mod:`.body`
(the robot in the model), :mod:`.loop` (the NJointAction law as MuJoCo actuators, or in
Python where MuJoCo cannot express it), :mod:`.render` (offscreen images). Importing this
package does not import ``mujoco``; building a world does.
"""

from jointlab.sim.mujoco.mjcf import description_to_mjcf
from jointlab.sim.mujoco.world import MujocoWorld

#: This engine's world (``jointlab.sim.engine.World`` builds it for ``engine="mujoco"``).
World = MujocoWorld

__all__ = ["MujocoWorld", "World", "description_to_mjcf"]
