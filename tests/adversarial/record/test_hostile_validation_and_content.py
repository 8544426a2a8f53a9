"""What a tool's own code raises or returns at awkward moments does not falsify the
record: a call whose function never ran (its validator raised something else than a
``ValueError`` at the last validation, or at the OpenAI adapter's hand-over) is
withdrawn, never counted as run; a call that ran with a result whose content cannot be
shown as text is in the trace, never left started (LangChain, OpenAI Agents SDK)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from agents import Agent, Runner
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool, tool
from pydantic import AfterValidator, BaseModel, field_validator

import agentguard
from agentguard.testing.langchain_models import ScriptedChatModel
from agentguard.testing.langchain_models import call as lc_call
from agentguard.testing.openai_agents_models import ScriptedAgentsModel, call
from tests.adversarial._openai_agents import function_tool, sdk_defaults
from tests.integrations.adapters import AgentGuardMiddleware

__all__ = ["sdk_defaults"]  # the OpenAI tests' fixture: no trace export, our own loop
ONCE = "constraint once severity SOFT_BLOCK := CalledN(send, 1, <=)\n"


def _events(log: Path) -> list[tuple[str, Any, Any]]:
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [(d["event"].split(".")[1], d.get("tool"), d.get("action")) for d in lines]


class Flaky:
    """A lookup that fails once, at the n-th validation (a service hiccup)."""

    def __init__(self, failing: int) -> None:
        self.seen = 0
        self.failing = failing

    def __call__(self, value: str) -> str:
        self.seen += 1
        if self.seen == self.failing:
            raise KeyError("address book unavailable")
        return value


def test_langchain_a_validator_raising_at_the_door_withdraws_the_call(tmp_path: Path) -> None:
    ran: list[str] = []
    lookup = Flaky(3)  # the model turn's check, the call's check, then the door: fails

    class SendArgs(BaseModel):
        to: str

        @field_validator("to")
        @classmethod
        def known(cls, value: str) -> str:
            return lookup(value)

    def _send(to: str) -> str:
        ran.append(to)
        return "sent"

    send = StructuredTool.from_function(
        _send, name="send", description="Send.", args_schema=SendArgs
    )
    log = tmp_path / "d.jsonl"
    guard = AgentGuardMiddleware(agentguard.parse_spec(ONCE), log_path=log)
    model = ScriptedChatModel([lc_call("send", to="a"), lc_call("send", to="a"), "done"])
    create_agent(model, [send], middleware=[guard]).invoke({"messages": [("user", "go")]})
    assert ran == ["a"]  # the retry ran: the first call never counted
    events = _events(log)
    assert ("withdrawn", "send", "withdrawn") in events
    assert [e for e in events if e[0] == "result" and e[1] == "send"] == [
        ("result", "send", "executed")
    ]
    report = guard.agentguard.report
    assert report is not None and [c.name for c in report.trace].count("send") == 1


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("not loaded")

    __repr__ = __str__


def test_langchain_a_result_part_that_cannot_be_shown_is_in_the_trace(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool(response_format="content_and_artifact")
    def send(to: str) -> tuple[list[dict[str, Any]], None]:
        """Send mail."""
        ran.append(to)
        return [{"type": "text", "text": Unprintable()}], None

    log = tmp_path / "d.jsonl"
    guard = AgentGuardMiddleware(agentguard.parse_spec(ONCE), log_path=log)
    model = ScriptedChatModel([lc_call("send", to="a"), lc_call("send", to="b"), "done"])
    agent = create_agent(model, [send], middleware=[guard])
    try:
        out = agent.invoke({"messages": [("user", "go")]})
        refusals = [m for m in out["messages"] if isinstance(m, ToolMessage)][1:]
        assert all("blocked" in str(m.content) for m in refusals)
    except RuntimeError:  # the framework's own rendering of the content may raise
        pass
    assert ran == ["a"]
    assert ("result", "send", "executed") in _events(log)
    assert ("withdrawn", "send", "withdrawn") not in _events(log)


HAND_OVER = Flaky(3)  # the SDK's validation, the check's, then agentguard's hand-over
SENT: list[str] = []


@function_tool
def send_mail(to: Annotated[str, AfterValidator(HAND_OVER)]) -> str:
    """Send mail."""
    SENT.append(to)
    return "sent"


def test_openai_agents_a_validator_raising_at_the_hand_over_withdraws_the_call(
    tmp_path: Path,
) -> None:
    HAND_OVER.seen = 0
    SENT.clear()
    spec = agentguard.parse_spec(ONCE.replace("send", "send_mail"))
    model = ScriptedAgentsModel([call("send_mail", to="a"), call("send_mail", to="a"), "done"])
    log = tmp_path / "d.jsonl"
    agent: Any = agentguard.guard(
        Agent(name="a", model=model, tools=[send_mail]), spec, log_path=log
    )
    Runner.run_sync(agent, "send it")
    assert SENT == ["a"]
    events = _events(log)
    assert ("withdrawn", "send_mail", "withdrawn") in events
    assert [e for e in events if e[0] == "result" and e[1] == "send_mail"] == [
        ("result", "send_mail", "executed")
    ]
