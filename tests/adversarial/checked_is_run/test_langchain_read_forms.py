"""LangChain: fields that read their input as something else than what they give the
function (``Json[...]``, an alias, a secret) are judged as the function gets them and
handed in the form the schema reads: the call runs with the checked values (no false
refusal, no masked credential), and a forbidden one is refused."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import StructuredTool
from pydantic import AliasPath, Base64Str, BaseModel, Field, Json, SecretStr

from agentguard.enforcement.decision import Action, RunStopped
from agentguard.testing.langchain_models import ScriptedChatModel, call
from tests.adversarial._langchain_kit import Ran, assert_invariants, log_lines, spec_file
from tests.integrations.adapters import AgentGuardMiddleware

RAN: Ran = []

SPEC = """
spec read_forms
constraint no_danger severity HARD_STOP := G !configure(settings.mode = "danger")
constraint not_treasury severity HARD_STOP := G !move(from_ = "treasury")
constraint no_root severity SOFT_BLOCK(9) := G !login(password = "root")
"""


class MoveArgs(BaseModel):
    from_: str = Field(alias="from")  # a Python keyword as an argument's name
    to: str
    amount: float


class ConfigureArgs(BaseModel):
    settings: Json[dict[str, str]]


class LoginArgs(BaseModel):
    user: str
    password: SecretStr


def _move(from_: str, to: str, amount: float) -> str:
    RAN.append(("move", {"from_": from_, "to": to, "amount": amount}))
    return "moved"


def _configure(settings: dict[str, str]) -> str:
    RAN.append(("configure", {"settings": settings}))
    return "configured"


def _login(user: str, password: SecretStr) -> str:
    RAN.append(("login", {"user": user, "password": password.get_secret_value()}))
    return "logged in"


TOOLS = [
    StructuredTool.from_function(_move, name="move", description="Move.", args_schema=MoveArgs),
    StructuredTool.from_function(
        _configure, name="configure", description="Configure.", args_schema=ConfigureArgs
    ),
    StructuredTool.from_function(
        _login, name="login", description="Log in.", args_schema=LoginArgs
    ),
]


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def run(tmp_path: Path, script: list[Any], *, use_async: bool = False) -> AgentGuardMiddleware:
    guard = AgentGuardMiddleware(spec_file(tmp_path, SPEC)[0], log_path=tmp_path / "d.jsonl")
    agent = create_agent(ScriptedChatModel(script), TOOLS, middleware=[guard])
    task: Any = {"messages": [HumanMessage("go")]}
    with contextlib.suppress(RunStopped):
        asyncio.run(agent.ainvoke(task)) if use_async else agent.invoke(task)
    return guard


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_the_values_run_as_checked(
    tmp_path: Path, use_async: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each call runs with the values the model gave: the aliased ``from``, the JSON
    text decoded, the password itself (the guard used to hand ``from_``, which the
    schema rejects, the decoded dict, which ``Json`` rejects, and ``**********``)."""
    guard = run(
        tmp_path,
        [
            call("move", **{"from": "acct-1", "to": "acct-2", "amount": 10}),
            call("configure", settings='{"mode": "safe"}'),
            call("login", user="bob", password="hunter2"),
            "done",
        ],
        use_async=use_async,
    )
    assert RAN == [
        ("move", {"from_": "acct-1", "to": "acct-2", "amount": 10.0}),
        ("configure", {"settings": {"mode": "safe"}}),
        ("login", {"user": "bob", "password": "hunter2"}),
    ]
    report = guard.agentguard.report
    assert_invariants(report, spec_file(tmp_path, SPEC), RAN, tmp_path, capsys)


def test_forbidden_values_are_refused_as_the_function_would_get_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``settings='{"mode": "danger"}'`` is the dict ``{"mode": "danger"}`` to the
    function: the HARD_STOP stops it; the password "root" is refused as itself."""
    guard = run(
        tmp_path,
        [
            call("login", user="bob", password="root"),
            call("configure", settings='{"mode": "danger"}'),
        ],
    )
    assert RAN == []
    report = guard.agentguard.report
    assert [d.action for d in report.decisions] == [Action.BLOCK, Action.STOP]
    assert report.decisions[1].args == {"settings": {"mode": "danger"}}
    assert_invariants(report, spec_file(tmp_path, SPEC), RAN, tmp_path, capsys)


def test_arguments_the_tool_rejects_at_its_door_never_ran(tmp_path: Path) -> None:
    """A value the tool's own schema rejects when it reads the checked snapshot (here:
    JSON text that is no JSON) is withdrawn, not recorded as a call that ran."""
    guard = run(tmp_path, [call("configure", settings="not json"), "done"])
    assert RAN == []
    report = guard.agentguard.report
    assert "configure" not in report.trace.names
    events = [(e["event"], e.get("tool")) for e in log_lines(tmp_path / "d.jsonl")]
    assert ("agentguard.result", "configure") not in events


class Leg(BaseModel):
    from_: str = Field(alias="from")
    settings: Json[dict[str, str]]


class TripArgs(BaseModel):
    legs: list[Leg]
    main: Leg | None = None


def test_json_and_aliases_nested_in_models_read_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``Json`` field and an aliased field inside nested models (a list of them, an
    optional one) are handed in the form each model reads: the call runs with the
    values checked, where it used to be rejected at the tool's door."""
    ran: list[tuple[str, dict[str, Any]]] = []

    def trip(legs: list[Leg], main: Leg | None = None) -> str:
        plain = [{"from_": leg.from_, "settings": leg.settings} for leg in legs]
        assert main is not None
        ran.append(
            ("trip", {"legs": plain, "main": {"from_": main.from_, "settings": main.settings}})
        )
        return "planned"

    tool = StructuredTool.from_function(
        trip, name="trip", description="Plan.", args_schema=TripArgs
    )
    leg = {"from": "paris", "settings": '{"mode": "fast"}'}
    guard = AgentGuardMiddleware(spec_file(tmp_path, SPEC)[0], log_path=tmp_path / "d.jsonl")
    script = [call("trip", legs=[leg, leg], main=leg), "done"]
    create_agent(ScriptedChatModel(script), [tool], middleware=[guard]).invoke(
        {"messages": [HumanMessage("go")]}
    )
    decoded = {"from_": "paris", "settings": {"mode": "fast"}}
    assert ran == [("trip", {"legs": [decoded, decoded], "main": decoded})]
    report = guard.agentguard.report
    assert_invariants(report, spec_file(tmp_path, SPEC), ran, tmp_path, capsys)


class WipeOptions(BaseModel):
    force: bool = Field(True, exclude=True)  # left out of pydantic's dumps


class WipeArgs(BaseModel):
    path: str
    opts: WipeOptions


class Target(BaseModel):
    cfgs: list[Json[dict[str, str]]]
    by_name: dict[str, Json[dict[str, int]]]
    where: str = Field(validation_alias=AliasPath("target", "path"))


def test_an_excluded_field_of_a_nested_model_is_judged_and_handed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``force`` is left out of a dump: the snapshot used to hold ``opts: {}``, so the
    tool got its default (``True``) whatever the model said, and the HARD_STOP on
    ``opts.force = true`` never saw it. Now ``force=False`` runs as ``False``, and
    ``force=True`` is stopped."""
    ran: list[tuple[str, dict[str, Any]]] = []
    spec = SPEC + "constraint no_force severity HARD_STOP := G !wipe(opts.force = true)\n"

    def wipe(path: str, opts: WipeOptions) -> str:
        ran.append(("wipe", {"path": path, "opts": {"force": opts.force}}))
        return "wiped"

    tool = StructuredTool.from_function(
        wipe, name="wipe", description="Wipe.", args_schema=WipeArgs
    )
    guard = AgentGuardMiddleware(spec_file(tmp_path, spec)[0], log_path=tmp_path / "d.jsonl")
    script = [
        call("wipe", path="/data", opts={"force": False}),
        call("wipe", path="/prod", opts={"force": True}),
    ]
    with contextlib.suppress(RunStopped):
        create_agent(ScriptedChatModel(script), [tool], middleware=[guard]).invoke(
            {"messages": [HumanMessage("go")]}
        )
    assert ran == [("wipe", {"path": "/data", "opts": {"force": False}})]
    report = guard.agentguard.report
    assert report.decisions[-1].action is Action.STOP
    assert_invariants(report, spec_file(tmp_path, spec), ran, tmp_path, capsys)


def test_json_in_lists_and_maps_and_an_alias_path_are_handed_as_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``list[Json[...]]``, ``dict[str, Json[...]]`` and ``AliasPath("target", "path")``
    were handed as one text, one text and under the field's name, and the tool's schema
    refused each: they run now, judged decoded and by field name."""
    ran: list[tuple[str, dict[str, Any]]] = []

    def aim(cfgs: list[dict[str, str]], by_name: dict[str, dict[str, int]], where: str) -> str:
        ran.append(("aim", {"cfgs": cfgs, "by_name": by_name, "where": where}))
        return "aimed"

    tool = StructuredTool.from_function(aim, name="aim", description="Aim.", args_schema=Target)
    guard = AgentGuardMiddleware(spec_file(tmp_path, SPEC)[0], log_path=tmp_path / "d.jsonl")
    args = {"cfgs": ['{"m": "x"}'], "by_name": {"a": '{"n": 1}'}, "target": {"path": "/p"}}
    create_agent(
        ScriptedChatModel([call("aim", **args), "done"]), [tool], middleware=[guard]
    ).invoke({"messages": [HumanMessage("go")]})
    assert ran == [("aim", {"cfgs": [{"m": "x"}], "by_name": {"a": {"n": 1}}, "where": "/p"})]
    assert_invariants(guard.agentguard.report, spec_file(tmp_path, SPEC), ran, tmp_path, capsys)


class ReadArgs(BaseModel):
    path: Base64Str
    pair: tuple[Json[dict[str, str]], int]


def test_an_encoded_value_and_json_in_a_tuple_are_handed_as_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``Base64Str`` is judged decoded and handed encoded, and a ``Json`` position of a
    fixed tuple as its text: the tool's own reading gives the values checked (both were
    refused at the tool's door, the decoded values handed back as they were)."""
    ran: list[tuple[str, dict[str, Any]]] = []
    spec = SPEC + 'constraint no_shadow severity HARD_STOP := G !read(path = "/etc/shadow")\n'

    def read(path: str, pair: tuple[dict[str, str], int]) -> str:
        ran.append(("read", {"path": path, "pair": [pair[0], pair[1]]}))
        return "read"

    tool = StructuredTool.from_function(
        read, name="read", description="Read.", args_schema=ReadArgs
    )
    guard = AgentGuardMiddleware(spec_file(tmp_path, spec)[0], log_path=tmp_path / "d.jsonl")
    pair = ['{"mode": "safe"}', 1]
    script = [
        call("read", path=base64.b64encode(b"/tmp/notes").decode(), pair=pair),
        call("read", path=base64.b64encode(b"/etc/shadow").decode(), pair=pair),
    ]
    with contextlib.suppress(RunStopped):
        create_agent(ScriptedChatModel(script), [tool], middleware=[guard]).invoke(
            {"messages": [HumanMessage("go")]}
        )
    assert ran == [("read", {"path": "/tmp/notes", "pair": [{"mode": "safe"}, 1]})]
    report = guard.agentguard.report
    assert report.decisions[-1].action is Action.STOP
    assert report.decisions[-1].args["path"] == "/etc/shadow"
    assert_invariants(report, spec_file(tmp_path, spec), ran, tmp_path, capsys)
