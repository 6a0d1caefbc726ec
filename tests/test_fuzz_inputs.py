"""Hypothesis and hostile cases: actions, Robot and Commander verbs, env calls, programs, logs.

Each input is accepted or raises a :class:`JointLabError` (never a raw Python, numpy or
PyBullet exception) within the memory bound of ``tests/bounds.py``; an accepted action never
leaves the simulation poisoned: ``reset()`` restores a finite state.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from bounds import loads_or_refuses
from hypothesis import given, settings
from hypothesis import strategies as st

import jointlab
import jointlab.envs  # noqa: F401  (registers the environments)
from jointlab import NJointAction
from jointlab.controllers import Commander
from jointlab.errors import ActionError, ConfigurationError, JointLabError
from jointlab.program import VERBS, load_program, run_program
from jointlab.program_checks import ARGUMENT_KINDS
from jointlab.recording import Recorder, load_log
from jointlab.recording.bounds import MAX_LOG_BYTES
from jointlab.sim import SimRobot

pytestmark = pytest.mark.timeout(600)

HOSTILE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            1e300,
            -1e300,
            10**400,
            0,
            -1,
            2,
            1.5,
            True,
            "0.5",
            "abc",
            "",
            None,
            1j,
            [0.1, 0.2],
            [[1]],
            [1j, 1],
            ["1", "2"],
            {"a": 1},
            "../../x",
            "x" * 300,
        ]
    ),
)


@pytest.fixture(scope="module")
def robot() -> SimRobot:
    with SimRobot("planar2") as sim:
        yield sim


def _vectors(dof: int) -> st.SearchStrategy[Any]:
    return st.one_of(
        HOSTILE,
        st.lists(HOSTILE, min_size=dof, max_size=dof),
        st.lists(st.floats(-1e3, 1e3), min_size=0, max_size=dof + 1),
    )


# ------------------------------------------------------------------ actions
@settings(max_examples=100)
@given(st.sampled_from(["Torque", "Position", "TorqueAndPosition"]), st.data())
def test_hostile_actions_are_refused_or_leave_a_finite_state(
    robot: SimRobot, factory: str, data: st.DataObject
) -> None:
    arguments = [data.draw(_vectors(robot.dof)) for _ in range(2 if factory != "Torque" else 1)]

    def apply() -> None:
        robot.apply(getattr(NJointAction, factory)(*arguments))
        robot.step()

    loads_or_refuses(apply)
    state = robot.reset()
    assert np.isfinite(state.position).all() and np.isfinite(state.velocity).all()


# ------------------------------------------------------------------ Robot and Commander verbs
_ARITY = {
    "reset": 1,
    "configure_speed": 2,
    "configure_accel": 2,
    "power": 1,
    "brakes": 1,
    "apply": 1,
}


@settings(max_examples=100)
@given(st.sampled_from(sorted(_ARITY)), st.lists(HOSTILE, min_size=2, max_size=2))
def test_robot_verbs_refuse_hostile_arguments(robot: SimRobot, verb: str, args: list) -> None:
    args = args[: _ARITY[verb]]
    loads_or_refuses(lambda: getattr(robot, verb)(*args))
    robot.power(True)
    robot.brakes(False)
    robot.arm()
    robot.reset()


@settings(max_examples=150)
@given(
    st.sampled_from([v for v in VERBS if v != "wait"]),
    st.dictionaries(st.sampled_from(sorted(ARGUMENT_KINDS)), HOSTILE, max_size=3),
)
def test_commander_verbs_refuse_hostile_arguments(
    robot: SimRobot, verb: str, arguments: dict
) -> None:
    commander = Commander(robot)
    loads_or_refuses(lambda: getattr(commander, verb)(**arguments))
    robot.power(True)
    robot.brakes(False)
    robot.arm()
    robot.reset()


# ------------------------------------------------------------------ environments
@pytest.fixture(scope="module")
def env() -> gym.Env:
    environment = gym.make("jointlab/Reach-v0", robot="planar2")
    environment.reset(seed=0)
    yield environment
    environment.close()


@settings(max_examples=60)
@given(HOSTILE, HOSTILE)
def test_env_step_and_reset_refuse_hostile_input(env: gym.Env, action: Any, seed: Any) -> None:
    loads_or_refuses(lambda: env.step(action))
    loads_or_refuses(lambda: env.reset(seed=seed))
    loads_or_refuses(lambda: env.reset(options={"q": action}))
    env.reset(seed=0)


# ------------------------------------------------------------------ programs
_ARGUMENT_NAMES = st.sampled_from([*sorted(ARGUMENT_KINDS), "for", "pos", "positon", 3])


@settings(max_examples=150)
@given(
    st.lists(
        st.one_of(
            st.dictionaries(
                st.sampled_from([*VERBS, "hme", "fly"]),
                st.one_of(HOSTILE, st.dictionaries(_ARGUMENT_NAMES, HOSTILE, max_size=3)),
                min_size=1,
                max_size=2,
            ),
            HOSTILE,
        ),
        min_size=0,
        max_size=4,
    )
)
def test_hostile_programs_are_refused_before_running(robot: SimRobot, program: list) -> None:
    result = loads_or_refuses(lambda: load_program(program))
    if isinstance(result, JointLabError):
        assert isinstance(result, ConfigurationError)
        return
    for step in result:  # a short run of what loaded (bounded robot time per step)
        if step.verb in (
            "follow_trajectory",
            "hold",
            "set_velocity",
            "set_velocities",
            "set_effort",
            "set_current",
            "set_currents",
            "wait",
        ):
            return
    bounded = [{s.verb: {**s.arguments, "for": 0.02}} for s in result]
    loads_or_refuses(lambda: run_program(robot, bounded))
    robot.reset()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("- wait: abc", "expected a duration > 0"),
        ("- home: [1, 2]", "arguments must be a mapping"),
        ("- set_position: {positon: 1}", "did you mean 'position'?"),
        ("- set_position: {joint: 0, position: abc}", "argument 'position' = 'abc'"),
        ("- set_positions: {positions: ['1', '2']}", "argument 'positions'"),
        ("- set_positions: {positions: [0.1, 0.2, 0.3]}", "has 3 values, expected 2"),
        ("- set_position: {joint: elbw, position: 0.1}", "step 0 (set_position)"),
        ("- home: {}\n- set_position: {joint: 0, position: 99}", "program step 1 (set_position)"),
        ("- stop: {mode: slowly}", "'immediate' or 'decelerate'"),
        ("- follow_trajectory: {waypoints: [{position: [0, 0], time: 1}]}", "unknown key 'time'"),
    ],
)
def test_program_refusals_name_the_step(robot: SimRobot, text: str, fragment: str) -> None:
    with pytest.raises(JointLabError) as info:
        run_program(robot, text)
    assert fragment in str(info.value), str(info.value)
    robot.reset()


# ------------------------------------------------------------------ logs
@pytest.fixture(scope="module")
def log_bytes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("logs")
    result = {}
    with SimRobot("planar2") as sim:
        for suffix in ("csv", "npz"):
            path = folder / f"log.{suffix}"
            with Recorder(path) as recorder:
                for _ in range(20):
                    sim.step()
                    recorder.log(sim.time, state=sim.read())
            result[suffix] = path.read_bytes()
    return result


@settings(max_examples=150)
@given(
    st.sampled_from(["csv", "npz"]),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=8),
    st.integers(0, 10**6),
    st.binary(max_size=16),
)
def test_corrupted_logs_load_or_raise(
    tmp_path_factory: pytest.TempPathFactory,
    log_bytes: dict[str, bytes],
    kind: str,
    flips: list,
    cut: int,
    junk: bytes,
) -> None:
    data = bytearray(log_bytes[kind])
    for position, value in flips:
        data[position % len(data)] = value
    data = data[: max(1, len(data) - cut % len(data))] + junk
    path = tmp_path_factory.mktemp("bad") / f"bad.{kind}"
    path.write_bytes(bytes(data))
    result = loads_or_refuses(lambda: load_log(path))
    if isinstance(result, JointLabError):
        assert str(path) in str(result)


def _npz(tmp_path: Path, arrays: dict[str, bytes]) -> Path:
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, payload in arrays.items():
            archive.writestr(name, payload)
    return path


def _npy_header(shape: tuple[int, ...], dtype: str = "<f8") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    return buffer.getvalue()


def test_an_npz_bomb_is_refused_before_decompressing(tmp_path: Path) -> None:
    # 3 GB of zeros would compress to ~3 MB; a header claiming 3 GB is enough to test.
    path = _npz(tmp_path, {"time.npy": _npy_header((400_000_000,)) + b"\0" * 1024})
    message = str(loads_or_refuses(lambda: load_log(path)))
    assert "declares 3200000000 bytes" in message


def test_an_npz_larger_than_the_limit_decompressed_is_refused(tmp_path: Path) -> None:
    path = _npz(tmp_path, {"a.npy": b"\0" * 1024})
    with zipfile.ZipFile(path) as archive:
        info = archive.infolist()[0]
    raw = bytearray(path.read_bytes())  # rewrite the declared size in both headers
    declared = (MAX_LOG_BYTES + 1).to_bytes(4, "little")
    for start in (22, raw.rfind(b"PK\x01\x02") + 24):
        raw[start : start + 4] = declared
    path.write_bytes(bytes(raw))
    assert info.file_size == 1024
    result = loads_or_refuses(lambda: load_log(path))
    assert isinstance(result, JointLabError) and str(path) in str(result)


@pytest.mark.parametrize(
    "content",
    [
        b'# jointlab-log {"version": 1e999}\ntime\n',
        b"# jointlab-log [1, 2\ntime\n",
        b"time,a.b[0]\n1,2,3\n",
        b"time,\xff\xfe\n1\n",
        b"time,state.position[0]\n1,2,3,4\n",
        b'# jointlab-log {"metadata": 5}\ntime\n',
        b'# event {"kind": 1}\ntime\n',
    ],
)
def test_malformed_csv_logs_raise_a_log_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    result = loads_or_refuses(lambda: load_log(path))
    assert isinstance(result, JointLabError), result


def test_an_action_error_is_still_an_action_error(robot: SimRobot) -> None:
    with pytest.raises(ActionError):
        robot.apply(NJointAction.Torque([np.nan, 0.0]))


# ------------------------------------------------------------------ the command line
HOSTILE_FILES = Path(__file__).parent / "robots" / "hostile"


@pytest.mark.parametrize(
    "argv",
    [
        ["describe", str(HOSTILE_FILES / "alias_bomb_12.yaml")],
        ["describe", str(HOSTILE_FILES / "cycle_below_root.urdf")],
        ["describe", str(HOSTILE_FILES / "name_dotdot.yaml")],
        ["check", "serial://spy://loop://?file=/tmp/jointlab-never-written"],
        ["check", "emulated://planar2?rate=0"],
        ["plot", str(HOSTILE_FILES / "not_xml.urdf")],
    ],
)
def test_the_command_line_reports_hostile_input_in_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    from jointlab.cli import main

    assert main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"jointlab {argv[0]}: error: ") and "Traceback" not in error
    assert not Path("/tmp/jointlab-never-written").exists()
