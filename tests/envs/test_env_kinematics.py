"""The tasks' fast chain kinematics equal the description's forward kinematics."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlab.envs.tasks import ChainKinematics, workspace_radius
from jointlab.errors import ConfigurationError
from jointlab.robots import builtin_robots, forward_kinematics, load_robot

ROBOTS = {name: load_robot(name) for name in builtin_robots()}
TOOLS = [(name, tool) for name, d in ROBOTS.items() for tool in d.tool_names]


@pytest.mark.parametrize(("robot", "tool"), TOOLS)
@settings(max_examples=20)
@given(u=st.lists(st.floats(0, 1), min_size=12, max_size=12))
def test_chain_matches_forward_kinematics(robot, tool, u):
    d = ROBOTS[robot]
    q = d.lower + np.array(u[: d.dof]) * (d.upper - d.lower)
    chain = ChainKinematics(d, tool)
    expected = forward_kinematics(d, q).tools[tool]
    np.testing.assert_allclose(chain.matrix(q), expected, atol=1e-12)


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_workspace_radius_bounds_every_tool(robot):
    d = ROBOTS[robot]
    q = np.random.default_rng(0).uniform(d.lower, d.upper, size=(256, d.dof))
    kin = forward_kinematics(d, q)
    base = np.asarray(d.base.position)
    for tool in d.tool_names:
        distance = np.linalg.norm(kin.tools[tool][:, :3, 3] - base, axis=1)
        assert np.all(distance <= workspace_radius(d) + 1e-9)


def test_unknown_frame_is_named():
    with pytest.raises(ConfigurationError, match="no frame 'hand'"):
        ChainKinematics(ROBOTS["arm6"], "hand")


@pytest.mark.parametrize(("robot", "tool"), TOOLS)
def test_position_matches_forward_kinematics_and_batches_row_for_row(robot, tool):
    """``positions`` (batched envs) gives each row bit-identical to ``position`` (one env)."""
    d = ROBOTS[robot]
    q = np.random.default_rng(2).uniform(d.lower, d.upper, size=(16, d.dof))
    chain = ChainKinematics(d, tool)
    single = np.array([chain.position(row) for row in q])
    np.testing.assert_array_equal(chain.positions(q), single)
    np.testing.assert_allclose(single, forward_kinematics(d, q).tools[tool][:, :3, 3], atol=1e-12)
    first = single[0].copy()
    chain.position(q[1])  # the preallocated buffers are not shared with returned arrays
    np.testing.assert_array_equal(single[0], first)
