"""Docstring defaults match signatures; registration ids, errors and suggestions."""

import ast
import inspect
import re

import gymnasium
import pytest

import jointlab
import jointlab.envs
from jointlab.envs import ENV_SPECS, TASKS, JointLabEnv
from jointlab.envs.env import ENV_PARAMETERS
from jointlab.envs.tasks import task_class
from jointlab.errors import ConfigurationError

IDS = [entry.id for entry in ENV_SPECS]


def _documented_defaults(cls):
    """Parse ``name: ... Defaults to X.`` entries of a Google-style Args section."""
    doc = inspect.getdoc(cls)
    args = doc.split("Args:", 1)[1]
    entries = re.split(r"\n(?=    \w+:)", "\n" + args)
    result = {}
    for entry in entries:
        match = re.match(r"\s*(\w+):(.*)", entry, re.S)
        if not match:
            continue
        name, text = match.group(1), " ".join(match.group(2).split())
        default = re.search(r"Defaults to (.+?)\.$", text)
        result[name] = default.group(1) if default else None
    return result


@pytest.mark.parametrize("cls", list(TASKS.values()), ids=list(TASKS))
def test_task_docstring_defaults_match_the_signature(cls):
    documented = _documented_defaults(cls)
    parameters = {
        n: p for n, p in inspect.signature(cls.__init__).parameters.items() if n != "self"
    }
    assert set(documented) == set(parameters), "every keyword is documented, nothing else"
    for name, parameter in parameters.items():
        assert documented[name] is not None, f"{cls.__name__}.{name}: no 'Defaults to'"
        assert ast.literal_eval(documented[name]) == parameter.default, name


@pytest.mark.parametrize("cls", list(TASKS.values()), ids=list(TASKS))
def test_task_weights_are_keyword_only(cls):
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name != "self":
            assert p.kind is inspect.Parameter.KEYWORD_ONLY, name


def test_env_docstring_lists_every_parameter():
    doc = inspect.getdoc(JointLabEnv)
    for name in ENV_PARAMETERS:
        assert re.search(rf"^    {name}:", doc, re.M), name
    signature = inspect.signature(JointLabEnv.__init__).parameters
    assert set(ENV_PARAMETERS) == set(signature) - {"self", "task_kwargs"}


def test_ids_are_registered_with_episode_lengths():
    for entry in ENV_SPECS:
        spec = gymnasium.spec(entry.id)
        assert spec.max_episode_steps == entry.max_episode_steps
        assert spec.entry_point.startswith("jointlab.envs.registration:")


def test_registration_is_idempotent():
    before = len(gymnasium.registry)
    jointlab.envs.register_envs()
    assert len(gymnasium.registry) == before


def test_unknown_id_gets_a_suggestion():
    with pytest.raises(gymnasium.error.Error, match="Reach"):
        gymnasium.make("jointlab/Rech-v0")


def test_unknown_task_name_gets_a_suggestion():
    with pytest.raises(ConfigurationError, match="did you mean 'reach'"):
        task_class("raech")


def test_unknown_keyword_is_reraised_with_id_and_suggestion():
    with pytest.raises(ConfigurationError) as info:
        gymnasium.make("jointlab/Reach-v0", succes_threshold=0.1)
    message = str(info.value)
    assert "jointlab/Reach-v0" in message
    assert "did you mean 'success_threshold'" in message


def test_unknown_action_mode_is_reraised_with_id():
    with pytest.raises(ConfigurationError, match=r"jointlab/Hold-v0.*did you mean 'torque'"):
        gymnasium.make("jointlab/Hold-v0", action_mode="torqe")


def test_unknown_robot_is_reraised_with_id():
    with pytest.raises(jointlab.DescriptionError, match=r"jointlab/Reach-v0.*did you mean 'arm6'"):
        gymnasium.make("jointlab/Reach-v0", robot="arm7")
