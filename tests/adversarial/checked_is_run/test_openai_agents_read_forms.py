"""OpenAI Agents SDK: a ``Json[...]`` parameter is judged as the value the function gets
(it used to be judged as its JSON text, so ``G !configure(settings.mode = "danger")``
never matched), and a ``SecretStr`` reaches the function as the model gave it (it used to
arrive as ``**********``)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from pydantic import Base64Str, BaseModel, Field, Json, SecretStr, model_serializer

from tests.adversarial._openai_agents import assert_invariants, guarded, sdk_defaults

agents = pytest.importorskip("agents")
from agents import Agent, Runner, ToolInputGuardrailTripwireTriggered, function_tool  # noqa: E402

import agentguard  # noqa: E402
from agentguard.enforcement.decision import Action  # noqa: E402
from agentguard.testing.openai_agents_models import ScriptedAgentsModel, call  # noqa: E402

__all__ = ["sdk_defaults"]

SPEC = agentguard.parse_spec(
    """
constraint no_danger severity HARD_STOP := G !configure(settings.mode = "danger")
constraint no_root severity SOFT_BLOCK(9) := G !login(password = "root")
"""
)


def _agent(ran: list[tuple[str, dict[str, Any]]], script: list[Any]) -> Agent[Any]:
    @function_tool
    def configure(settings: Json[dict[str, str]]) -> str:
        """Apply settings given as JSON text."""
        ran.append(("configure", {"settings": settings}))
        return "configured"

    @function_tool
    def login(user: str, password: SecretStr) -> str:
        """Log in."""
        ran.append(("login", {"user": user, "password": password.get_secret_value()}))
        return "logged in"

    return Agent(name="ops", tools=[configure, login], model=ScriptedAgentsModel(script))


def test_the_values_run_as_checked(tmp_path: Path) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    script = [
        call("configure", settings='{"mode": "safe"}'),
        call("login", user="bob", password="hunter2"),
        "done",
    ]
    log = tmp_path / "d.jsonl"
    agent = guarded(_agent(ran, script), SPEC, log)
    Runner.run_sync(agent, "go")
    assert ran == [
        ("configure", {"settings": {"mode": "safe"}}),
        ("login", {"user": "bob", "password": "hunter2"}),
    ]
    report = agent.agentguard.report
    assert [dict(c.args) for c in report.trace if c.name in ("configure", "login")] == [
        args for _, args in ran
    ]
    assert_invariants(None, report, SPEC, log, tmp_path)


def test_forbidden_values_are_refused_as_the_function_would_get_them(tmp_path: Path) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    script = [
        call("login", user="bob", password="root"),
        call("configure", settings='{"mode": "danger"}'),
        "done",
    ]
    log = tmp_path / "d.jsonl"
    agent = guarded(_agent(ran, script), SPEC, log)
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        Runner.run_sync(agent, "go")
    assert ran == []
    report = agent.agentguard.report
    assert [d.action for d in report.decisions] == [Action.BLOCK, Action.STOP]
    assert report.decisions[1].args == {"settings": {"mode": "danger"}}
    assert_invariants(None, report, SPEC, log, tmp_path)


class Options(BaseModel):
    settings: Json[dict[str, str]]
    token: SecretStr


NESTED = agentguard.parse_spec(
    'constraint no_danger severity HARD_STOP := G !deploy(opts.settings.mode = "danger")\n'
)


def test_json_and_secrets_nested_in_a_model_are_judged_as_the_function_gets_them(
    tmp_path: Path,
) -> None:
    """A ``Json`` field inside a nested model is judged decoded too (as text it passed
    ``opts.settings.mode = "danger"``), its secret as its text; the allowed call gets
    both as the model gave them."""
    ran: list[tuple[str, dict[str, Any]]] = []

    @function_tool
    def deploy(opts: Options) -> str:
        """Deploy with options."""
        token = opts.token.get_secret_value()
        ran.append(("deploy", {"opts": {"settings": opts.settings, "token": token}}))
        return "deployed"

    script = [
        call("deploy", opts={"settings": '{"mode": "safe"}', "token": "t-1"}),
        call("deploy", opts={"settings": '{"mode": "danger"}', "token": "t-2"}),
        "done",
    ]
    log = tmp_path / "d.jsonl"
    agent = guarded(
        Agent(name="ops", tools=[deploy], model=ScriptedAgentsModel(script)), NESTED, log
    )
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        Runner.run_sync(agent, "go")
    assert ran == [("deploy", {"opts": {"settings": {"mode": "safe"}, "token": "t-1"}})]
    report = agent.agentguard.report
    assert report.decisions[-1].action is Action.STOP
    assert report.decisions[-1].args == {"opts": {"settings": {"mode": "danger"}, "token": "t-2"}}
    assert_invariants(None, report, NESTED, log, tmp_path)


class Opts(BaseModel):
    force: bool = Field(True, exclude=True)  # left out of pydantic's dumps


EXCLUDED = agentguard.parse_spec(
    "constraint no_force severity HARD_STOP := G !wipe(opts.force = true)\n"
    "constraint unlimited severity HARD_STOP := G !limit(policy.max = null)\n"
)


def test_arguments_the_function_gets_otherwise_than_handed_never_run(tmp_path: Path) -> None:
    """A nested field left out of pydantic's dumps (the function would get its default,
    ``True``, for the model's ``False``) and a ``Json`` number JSON cannot carry (the
    function would get ``None`` for the ``Infinity`` judged) are withdrawn, never run."""
    ran: list[tuple[str, dict[str, Any]]] = []

    @function_tool
    def wipe(path: str, opts: Opts) -> str:
        """Wipe a path."""
        ran.append(("wipe", {"path": path, "force": opts.force}))
        return "wiped"

    @function_tool
    def limit(policy: Json[dict[str, Any]]) -> str:
        """Set limits."""
        ran.append(("limit", {"policy": policy}))
        return "set"

    script = [
        call("wipe", path="/data", opts={"force": False}),
        call("limit", policy='{"max": 1e999}'),
        "done",
    ]
    log = tmp_path / "d.jsonl"
    agent = guarded(
        Agent(name="ops", tools=[wipe, limit], model=ScriptedAgentsModel(script)), EXCLUDED, log
    )
    Runner.run_sync(agent, "go")
    assert ran == []
    report = agent.agentguard.report
    assert [c.name for c in report.trace if c.name in ("wipe", "limit")] == []
    assert_invariants(None, report, EXCLUDED, log, tmp_path)


class Deploy(BaseModel):
    env: str
    force: bool = True

    @model_serializer
    def _public(self) -> dict[str, Any]:  # a dump that leaves force out
        return {"env": self.env}


ENCODED = agentguard.parse_spec(
    'constraint no_shadow severity HARD_STOP := G !read_file(path = "/etc/shadow")\n'
    "constraint no_force severity HARD_STOP := G !deploy(opts.force = true)\n"
)


def test_values_are_judged_as_the_function_holds_them_not_as_dumped(tmp_path: Path) -> None:
    """A ``Base64Str`` is judged decoded (its dump is base64: the spec saw the encoded
    text while the function read /etc/shadow), and a model whose serializer leaves a
    field out is not handed a dump the function would read with the default: the
    forbidden read is stopped, the deploy never runs with ``force`` it was not given."""
    ran: list[tuple[str, dict[str, Any]]] = []

    @function_tool
    def read_file(path: Base64Str) -> str:
        """Read a file (its path base64-encoded)."""
        ran.append(("read_file", {"path": path}))
        return "contents"

    @function_tool
    def deploy(opts: Deploy) -> str:
        """Deploy."""
        ran.append(("deploy", {"env": opts.env, "force": opts.force}))
        return "deployed"

    script = [
        call("deploy", opts={"env": "prod", "force": False}),
        call("read_file", path=base64.b64encode(b"/tmp/notes").decode()),
        call("read_file", path=base64.b64encode(b"/etc/shadow").decode()),
        "done",
    ]
    log = tmp_path / "d.jsonl"
    agent = guarded(
        Agent(name="ops", tools=[deploy, read_file], model=ScriptedAgentsModel(script)),
        ENCODED,
        log,
    )
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        Runner.run_sync(agent, "go")
    assert ran == [("read_file", {"path": "/tmp/notes"})]
    report = agent.agentguard.report
    assert report.decisions[-1].action is Action.STOP
    assert report.decisions[-1].args == {"path": "/etc/shadow"}
    assert_invariants(None, report, ENCODED, log, tmp_path)
