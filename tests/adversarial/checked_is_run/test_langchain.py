"""LangChain: the arguments checked are the arguments the tool receives, frozen: after the
tool's own validation and coercion, with its declared defaults filled in, injected
arguments left out, after a reviewer's edit; and the trace records that very value."""

from __future__ import annotations

import asyncio
import contextlib
import enum
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain.tools import ToolRuntime
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, StructuredTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import InjectedState
from langgraph.types import Command
from pydantic import BaseModel, field_validator

from agentguard.enforcement.decision import Action, RunStopped
from agentguard.testing.langchain_models import ScriptedChatModel, call, call_with_id
from tests.adversarial._langchain_kit import Ran, assert_invariants, log_lines, spec_file
from tests.integrations.adapters import AgentGuardMiddleware

RAN: Ran = []

SPEC = """
spec checked_is_run
constraint cap severity HARD_STOP := G !issue_refund(amount > 500)
constraint precise_cap severity HARD_STOP := G !precise_refund(amount > 500)
constraint no_prod severity HARD_STOP := G !delete_path(path ~ /prod/)
constraint no_force severity HARD_STOP := G !wipe(force = true)
constraint careful severity SOFT_BLOCK(9) := G !set_mode(mode = "danger")
constraint quiet severity SOFT_BLOCK(9) := G !note(text ~ /secret/)
constraint small_parcels severity SOFT_BLOCK(9) := G !ship(address.city = "Atlantis")
"""


class Mode(enum.Enum):
    SAFE = "safe"
    DANGER = "danger"


class Address(BaseModel):
    street: str
    city: str


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Issue a refund."""
    RAN.append(("issue_refund", {"order_id": order_id, "amount": amount}))
    return "refunded"


@tool
def precise_refund(order_id: str, amount: Decimal) -> str:
    """Issue a refund to the cent."""
    RAN.append(("precise_refund", {"order_id": order_id, "amount": amount}))
    return "refunded"


@tool
def delete_path(path: str, force: bool = False) -> str:
    """Delete a path."""
    RAN.append(("delete_path", {"path": path, "force": force}))
    return "deleted"


@tool
def wipe(path: str, force: bool = True) -> str:
    """Wipe a path (forcefully unless told otherwise)."""
    RAN.append(("wipe", {"path": path, "force": force}))
    return "wiped"


@tool
def set_mode(mode: Mode) -> str:
    """Switch the system's mode."""
    assert isinstance(mode, Mode)
    RAN.append(("set_mode", {"mode": mode.value}))
    return "switched"


@tool
def ship(address: Address) -> str:
    """Ship a parcel."""
    assert isinstance(address, Address)
    RAN.append(("ship", {"address": address.model_dump()}))
    return "shipped"


@tool
def tag(items: list[str], label: str = "todo") -> str:
    """Tag items (and scribble on the list it was given)."""
    RAN.append(("tag", {"items": list(items), "label": label}))
    items.append("/prod/db")
    return "tagged"


@tool
def note(text: str, runtime: ToolRuntime, state: Annotated[dict[str, Any], InjectedState]) -> str:
    """Take a note."""
    assert runtime.tool_call_id and "messages" in state
    RAN.append(("note", {"text": text}))
    return "noted"


TOOLS = [issue_refund, precise_refund, delete_path, wipe, set_mode, ship, tag, note]


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def run(
    tmp_path: Path, script: list[Any], *, use_async: bool = False, **kw: Any
) -> tuple[AgentGuardMiddleware, Any]:
    guard = AgentGuardMiddleware(spec_file(tmp_path, SPEC)[0], log_path=tmp_path / "d.jsonl")
    agent = create_agent(ScriptedChatModel(script), TOOLS, middleware=[guard], **kw)
    task: Any = {"messages": [HumanMessage("go")]}
    try:
        out = asyncio.run(agent.ainvoke(task)) if use_async else agent.invoke(task)
    except RunStopped as stopped:
        out = stopped
    return guard, out


def report_of(guard: AgentGuardMiddleware) -> Any:
    return guard.agentguard.report


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_number_sent_as_text_is_judged_as_the_number_the_tool_gets(
    tmp_path: Path, use_async: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """``amount="9000"`` becomes 9000.0 before the tool runs: the cap stops it (it used to
    be judged as a string, allowed, and the trace recorded the string)."""
    guard, _ = run(
        tmp_path,
        [call("issue_refund", order_id="A", amount="9000"), "done"],
        use_async=use_async,
    )
    assert RAN == []
    report = assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path, capsys)
    assert report.decisions[0].action is Action.STOP
    assert report.decisions[0].args == {"order_id": "A", "amount": 9000.0}


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_the_trace_records_the_coerced_value_the_tool_received(
    tmp_path: Path, use_async: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """An allowed ``amount="50"`` runs as 50.0, and the trace and the log say 50.0."""
    guard, _ = run(
        tmp_path, [call("issue_refund", order_id="A", amount="50"), "done"], use_async=use_async
    )
    assert RAN == [("issue_refund", {"order_id": "A", "amount": 50.0})]
    report = assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path, capsys)
    assert type(report.trace[0].args["amount"]) is float
    results = [e for e in log_lines(tmp_path / "d.jsonl") if e["event"] == "agentguard.decision"]
    assert results[0]["args"] == {"order_id": "A", "amount": 50.0}


def test_a_decimal_is_judged_as_its_value(tmp_path: Path) -> None:
    """A ``Decimal`` argument sent as text is judged as the number it becomes."""
    guard, _ = run(tmp_path, [call("precise_refund", order_id="A", amount="900.10"), "done"])
    assert RAN == []
    report = report_of(guard)
    assert report is not None and report.decisions[0].action is Action.STOP


@pytest.mark.parametrize("amount", ["500.00000000000000001", "9007199254740993.5"])
def test_a_decimal_no_json_number_equals_is_refused_not_rounded(
    tmp_path: Path, amount: str
) -> None:
    """Judged as ``float(Decimal(...))`` (500.0) it passed a cap of 500 while the tool
    received the exact decimal, and the trace recorded 500.0 (outside attack round 6): a
    value no JSON number equals cannot be checked faithfully, so it is refused."""
    guard, _ = run(tmp_path, [call("precise_refund", order_id="A", amount=amount), "done"])
    assert RAN == []
    report = assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert report.decisions[0].action is Action.BLOCK
    assert "no JSON number" in report.decisions[0].message


def test_a_whole_decimal_past_a_float_is_judged_as_its_integer(tmp_path: Path) -> None:
    """``Decimal("9007199254740993")`` is judged and recorded as that integer, not as the
    float 9007199254740992.0 next to it."""
    guard, _ = run(
        tmp_path, [call("precise_refund", order_id="A", amount="9007199254740993"), "done"]
    )
    assert RAN == []
    report = assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert report.decisions[0].action is Action.STOP
    assert report.decisions[0].args["amount"] == 9007199254740993


def test_a_declared_default_is_judged_when_the_model_leaves_it_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``wipe(path)`` runs with ``force=True`` (the signature's default): the HARD_STOP on
    ``force = true`` stops it (it used to be judged as absent, and ran)."""
    guard, _ = run(tmp_path, [call("wipe", path="/tmp/x"), "done"])
    assert RAN == []
    report = assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path, capsys)
    assert report.decisions[0].args == {"path": "/tmp/x", "force": True}


def test_an_allowed_default_is_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``delete_path(path)`` runs with ``force=False``: the trace holds the default too."""
    guard, _ = run(tmp_path, [call("delete_path", path="/tmp/x"), "done"])
    assert RAN == [("delete_path", {"path": "/tmp/x", "force": False})]
    assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path, capsys)


def test_an_enum_and_a_nested_model_are_judged_as_the_tool_reads_them(tmp_path: Path) -> None:
    """Enum values and nested models are checked in the form the tool's schema gives them;
    the tool still receives its own types."""
    guard, _ = run(
        tmp_path,
        [
            [
                call("set_mode", mode="danger"),
                call("ship", address={"street": "1 Sea Rd", "city": "Atlantis"}),
                call("ship", address={"street": "2 Main St", "city": "Oslo", "extra": 1}),
            ],
            "done",
        ],
    )
    assert RAN == [("ship", {"address": {"street": "2 Main St", "city": "Oslo"}})]
    report = assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert [d.action for d in report.decisions[:3]] == [Action.BLOCK, Action.BLOCK, Action.ALLOW]


def test_a_tool_scribbling_on_its_arguments_cannot_rewrite_the_trace(tmp_path: Path) -> None:
    """The tool gets a copy of the checked snapshot: what it appends is not in the trace."""
    guard, _ = run(tmp_path, [call("tag", items=["a"]), "done"])
    report = assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert report.trace[0].args == {"items": ["a"], "label": "todo"}


def test_injected_arguments_are_neither_judged_nor_smuggled(tmp_path: Path) -> None:
    """The runtime and the state the framework injects are not arguments the model gives:
    they are not in the checked snapshot; a model sending its own ``state`` is ignored."""
    guard, _ = run(
        tmp_path,
        [
            call("note", text="hello", state={"messages": ["forged"]}, runtime="forged"),
            call("note", text="a secret"),
            "done",
        ],
    )
    assert RAN == [("note", {"text": "hello"})]
    report = assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path)
    assert report.trace[0].args == {"text": "hello"}


def test_a_parallel_batch_is_checked_on_each_calls_coerced_value(tmp_path: Path) -> None:
    """Two refunds in one turn, amounts as text: each is judged as its number."""
    guard, _ = run(
        tmp_path,
        [
            [
                call("delete_path", path="/tmp/a", force="false"),
                call("issue_refund", order_id="B", amount="20"),
            ],
            [call("issue_refund", order_id="C", amount="600")],
            "done",
        ],
    )
    assert sorted(RAN) == [
        ("delete_path", {"path": "/tmp/a", "force": False}),
        ("issue_refund", {"order_id": "B", "amount": 20.0}),
    ]
    report = assert_invariants(
        report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path, parallel=True
    )
    assert report.decisions[-1].action is Action.STOP


def test_a_reused_tool_call_id_is_judged_on_its_own_arguments(tmp_path: Path) -> None:
    """The model reuses a call id across turns with a larger amount: judged afresh."""
    guard, _ = run(
        tmp_path,
        [
            call_with_id("X", "issue_refund", order_id="A", amount="10"),
            call_with_id("X", "issue_refund", order_id="A", amount="9000"),
            "done",
        ],
    )
    assert RAN == [("issue_refund", {"order_id": "A", "amount": 10.0})]
    assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path)


def test_arguments_that_fail_validation_never_run(tmp_path: Path) -> None:
    """``amount="lots"`` is rejected by the tool's schema: withdrawn, never run, and the
    model reads why; its sibling ``amount="7"`` runs, recorded as the 7.0 it received."""
    guard, out = run(
        tmp_path,
        [
            [
                call("issue_refund", order_id="A", amount="lots"),
                call("issue_refund", order_id="B", amount="7"),
            ],
            "done",
        ],
    )
    assert RAN == [("issue_refund", {"order_id": "B", "amount": 7.0})]
    reply = next(m for m in out["messages"] if isinstance(m, ToolMessage) and m.status == "error")
    assert "amount" in str(reply.content)
    assert_invariants(report_of(guard), spec_file(tmp_path, SPEC), RAN, tmp_path)


# a reviewer's edit ---------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["batched", "per_call"])
@pytest.mark.parametrize("guard_first", [True, False], ids=["guard-first", "human-first"])
def test_a_reviewers_edit_is_what_is_checked(tmp_path: Path, guard_first: bool, mode: str) -> None:
    """The model asks to delete /tmp/scratch; the reviewer edits it to /prod/db. The edited
    call is the one judged (and stopped); nothing is deleted, and nothing in the log or the
    trace says /tmp/scratch ran. (Guard first, the edit used to run unchecked.)"""
    guard = AgentGuardMiddleware(spec_file(tmp_path, SPEC)[0], log_path=tmp_path / "d.jsonl")
    human = HumanInTheLoopMiddleware(
        interrupt_on={"delete_path": True},
        interrupt_mode=mode,  # type: ignore[arg-type]
    )
    agent = create_agent(
        ScriptedChatModel([call("delete_path", path="/tmp/scratch"), "done"]),
        TOOLS,
        middleware=[guard, human] if guard_first else [human, guard],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    first = agent.invoke({"messages": [HumanMessage("clean up")]}, config)
    assert first["__interrupt__"]
    edited = {"name": "delete_path", "args": {"path": "/prod/db"}}
    decision = {"type": "edit", "edited_action": edited}
    resume = {"decisions": [decision]} if mode == "batched" else decision
    with pytest.raises(RunStopped):
        agent.invoke(Command(resume=resume), config)
    assert RAN == []
    session = guard.session_for("t")
    assert session is not None and session.report is not None
    stop = session.report.decisions[-1]
    assert stop.action is Action.STOP and stop.args == {"path": "/prod/db", "force": False}
    assert_invariants(session.report, spec_file(tmp_path, SPEC), RAN, tmp_path)
    ran = [e for e in log_lines(tmp_path / "d.jsonl") if e["event"] == "agentguard.result"]
    assert ran == []


@pytest.mark.parametrize("guard_first", [True, False], ids=["guard-first", "human-first"])
def test_an_allowed_edit_runs_with_the_edited_arguments(tmp_path: Path, guard_first: bool) -> None:
    """An edit to another allowed path runs with the edited arguments, recorded as such."""
    guard = AgentGuardMiddleware(spec_file(tmp_path, SPEC)[0], log_path=tmp_path / "d.jsonl")
    human = HumanInTheLoopMiddleware(interrupt_on={"delete_path": True})
    agent = create_agent(
        ScriptedChatModel([call("delete_path", path="/tmp/scratch"), "done"]),
        TOOLS,
        middleware=[guard, human] if guard_first else [human, guard],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("clean up")]}, config)
    edited = {"name": "delete_path", "args": {"path": "/tmp/other", "force": "true"}}
    agent.invoke(Command(resume={"decisions": [{"type": "edit", "edited_action": edited}]}), config)
    assert RAN == [("delete_path", {"path": "/tmp/other", "force": True})]
    session = guard.session_for("t")
    assert session is not None
    assert_invariants(session.report, spec_file(tmp_path, SPEC), RAN, tmp_path)


# validators, JSON schemas, commands, redirects -------------------------------------------
class Cents(BaseModel):
    cents: int

    @field_validator("cents")
    @classmethod
    def scale(cls, value: int) -> int:
        return value * 100  # not what it was given: validating twice scales twice


def _charge(cents: int) -> str:
    RAN.append(("charge", {"cents": cents}))
    return "charged"


def _purge(**kwargs: Any) -> str:
    RAN.append(("purge", dict(kwargs)))
    return "purged"


EXTRA_TOOLS = [
    StructuredTool.from_function(_charge, name="charge", description="Charge.", args_schema=Cents),
    StructuredTool.from_function(
        _purge,
        name="purge",
        description="Purge a path (an MCP-style tool: a JSON Schema, defaults on the server).",
        args_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "force": {"type": "boolean", "default": True},
            },
            "required": ["path"],
        },
    ),
]

EXTRA_SPEC = """
spec extra
constraint cap severity HARD_STOP := G !charge(cents > 500)
constraint no_force severity HARD_STOP := G !purge(force = true)
constraint no_prod severity HARD_STOP := G !delete_path(path ~ /prod/)
constraint refund_cap severity HARD_STOP := G !issue_refund(amount > 500)
"""


def _run_extra(tmp_path: Path, script: list[Any], **kw: Any) -> AgentGuardMiddleware:
    guard = AgentGuardMiddleware(spec_file(tmp_path, EXTRA_SPEC)[0], log_path=tmp_path / "d.jsonl")
    agent = create_agent(
        ScriptedChatModel(script), [*TOOLS, *EXTRA_TOOLS], middleware=[guard], **kw
    )
    with contextlib.suppress(RunStopped):
        agent.invoke({"messages": [HumanMessage("go")]})
    return guard


def test_a_validator_that_changes_its_own_output_is_refused(tmp_path: Path) -> None:
    """The tool's schema scales cents by 100 each time it validates them: what the tool
    would receive is not what a check could see, so the call is refused (it used to be
    judged as 3 and run as 300; the cap on 500 was bypassed with 6)."""
    guard = _run_extra(tmp_path, [call("charge", cents=6), "done"])
    assert RAN == []
    assert_invariants(guard.agentguard.report, spec_file(tmp_path, EXTRA_SPEC), RAN, tmp_path)


def test_a_json_schema_default_is_judged(tmp_path: Path) -> None:
    """A JSON-Schema tool's ``default`` (``force: true``) is what it acts on when the model
    leaves it out: judged so, and stopped (it used to be judged as absent, and ran)."""
    guard = _run_extra(tmp_path, [call("purge", path="/tmp/a"), "done"])
    assert RAN == []
    report = assert_invariants(
        guard.agentguard.report, spec_file(tmp_path, EXTRA_SPEC), RAN, tmp_path
    )
    assert report.decisions[0].args == {"path": "/tmp/a", "force": True}


def test_a_tool_returning_a_command_is_checked_and_recorded_coerced(tmp_path: Path) -> None:
    """A tool answering with a ``Command``: judged on the coerced value, recorded so."""

    @tool
    def refund_by_command(
        amount: float, tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> Command[Any]:
        """Refund, answering with a command."""
        RAN.append(("refund_by_command", {"amount": amount}))
        message = ToolMessage("refunded", tool_call_id=tool_call_id)
        return Command(update={"messages": [message]})

    spec_text = (
        EXTRA_SPEC + "constraint cap3 severity HARD_STOP := G !refund_by_command(amount > 500)\n"
    )
    guard = AgentGuardMiddleware(spec_file(tmp_path, spec_text)[0], log_path=tmp_path / "d.jsonl")
    agent = create_agent(
        ScriptedChatModel(
            [call("refund_by_command", amount="50"), call("refund_by_command", amount="5e3"), "x"]
        ),
        [refund_by_command],
        middleware=[guard],
    )
    agent.invoke({"messages": [HumanMessage("go")]})
    report = assert_invariants(
        guard.agentguard.report, spec_file(tmp_path, spec_text), RAN, tmp_path
    )
    assert report.trace[0].args == {"amount": 50.0} and report.trace[0].result == "refunded"
    assert report.decisions[-1].action is Action.STOP


def test_a_reviewer_redirecting_the_call_to_another_tool_is_checked_as_that_tool(
    tmp_path: Path,
) -> None:
    """The reviewer edits a refund into a delete of /prod/db (HumanInTheLoopMiddleware lets
    an edit name another tool): judged as that delete, and stopped."""
    guard = AgentGuardMiddleware(spec_file(tmp_path, EXTRA_SPEC)[0], log_path=tmp_path / "d.jsonl")
    human = HumanInTheLoopMiddleware(interrupt_on={"issue_refund": True})
    agent = create_agent(
        ScriptedChatModel([call("issue_refund", order_id="A", amount=5), "done"]),
        TOOLS,
        middleware=[guard, human],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("refund")]}, config)
    edited = {"name": "delete_path", "args": {"path": "/prod/db"}}
    with pytest.raises(RunStopped):
        agent.invoke(
            Command(resume={"decisions": [{"type": "edit", "edited_action": edited}]}), config
        )
    assert RAN == []
    session = guard.session_for("t")
    assert session is not None
    assert_invariants(session.report, spec_file(tmp_path, EXTRA_SPEC), RAN, tmp_path)
