"""The firewall compares the spec's tools with the agent's, in every adapter that knows them."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from agentguard.enforcement.firewall import Firewall
from agentguard.errors import ToolMismatchWarning
from agentguard.language import parse_spec
from agentguard.testing.script import call

SPEC = """
tool get_user_detail(user_id: str)
constraint not_for_admin := G !get_user_detail(user_id = "admin")
"""

AGENT_TOOLS: dict[str, Any] = {
    "get_user_details": {
        "type": "object",
        "properties": {"user_id": {"type": "string"}},
        "required": ["user_id"],
    },
    "final_answer": None,
}


def _no_warnings(fn: Any) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn()
    return [w for w in seen if issubclass(w.category, ToolMismatchWarning)]


def test_a_misspelled_tool_warns_and_is_logged(tmp_path: Path) -> None:
    """Firewall(agent_tools=...) warns with the closest agent tool and logs the difference."""
    log = tmp_path / "log.jsonl"
    with pytest.warns(ToolMismatchWarning, match="the agent has 'get_user_details'"):
        fw = Firewall(parse_spec(SPEC), agent_tools=AGENT_TOOLS, log_path=log)
    assert [m.kind for m in fw.tool_mismatches] == ["missing-tool"]
    assert fw.tool_mismatches[0].suggestion == "get_user_details"
    fw.finish()
    events = [json.loads(line) for line in log.read_text().splitlines()]
    mismatch = [e for e in events if e["event"] == "agentguard.tool_mismatch"]
    assert len(mismatch) == 1 and mismatch[0]["tool"] == "get_user_detail"


def test_matching_tools_are_silent() -> None:
    """No warning when the agent has every tool the spec names, with matching schemas."""
    spec = parse_spec(SPEC.replace("get_user_detail", "get_user_details"))
    assert _no_warnings(lambda: Firewall(spec, agent_tools=AGENT_TOOLS)) == []


def test_dialogue_events_are_no_tools_the_agent_lacks() -> None:
    """A spec judging user_message / assistant_message warns of no missing tool: those
    are the conversation's events, never an agent's tools."""
    text = SPEC.replace("get_user_detail", "get_user_details")
    spec = parse_spec(text + "\nconstraint heard := G(user_message -> F assistant_message)\n")
    assert _no_warnings(lambda: Firewall(spec, agent_tools=AGENT_TOOLS)) == []


def test_without_agent_tools_nothing_is_compared() -> None:
    """A bare Firewall (tools unknown) compares nothing."""
    assert _no_warnings(lambda: Firewall(parse_spec(SPEC))) == []
    assert Firewall(parse_spec(SPEC)).tool_mismatches == ()


def test_a_parameter_type_mismatch_is_named() -> None:
    """A declared type the agent's schema contradicts is a type-mismatch."""
    spec = parse_spec("tool get_user_details(user_id: number)\nconstraint c := G !get_user_details")
    with pytest.warns(ToolMismatchWarning, match="declared number"):
        fw = Firewall(spec, agent_tools=AGENT_TOOLS)
    assert [m.kind for m in fw.tool_mismatches] == ["type-mismatch"]


def test_smolagents_guard_compares_the_agents_tools() -> None:
    """guard() on a ToolCallingAgent passes its tools: the misspelled spec tool warns."""
    from smolagents import ToolCallingAgent, tool

    import agentguard
    from agentguard.testing.smolagents_models import ScriptedModel

    @tool
    def get_user_details(user_id: str) -> str:
        """Look a user up.

        Args:
            user_id: the user's id.
        """
        return json.dumps({"user_id": user_id})

    model = ScriptedModel(
        [call("get_user_details", user_id="u1"), call("final_answer", answer="ok")]
    )
    agent = ToolCallingAgent(tools=[get_user_details], model=model, max_steps=3)
    with pytest.warns(ToolMismatchWarning, match="the agent has 'get_user_details'") as seen:
        agentguard.guard(agent, parse_spec(SPEC))  # reported here, not when a run starts
    (warning,) = [w for w in seen if issubclass(w.category, ToolMismatchWarning)]
    assert warning.filename == __file__  # at the guard() line of the user's code
    assert _no_warnings(lambda: agent.run("look the user up")) == []  # not warned twice
    firewall = agent.agentguard.firewall
    assert [m.tool for m in firewall.tool_mismatches] == ["get_user_detail"]  # still logged


def test_smolagents_guard_with_strict_tools_refuses_the_spec() -> None:
    """guard(..., strict_tools=True): a ToolMismatchError at guard(), listing each
    difference with the closest tool; the agent is left unguarded."""
    from smolagents import ToolCallingAgent, tool

    import agentguard
    from agentguard.analysis import ToolMismatchError
    from agentguard.testing.smolagents_models import ScriptedModel

    @tool
    def get_user_details(user_id: str) -> str:
        """Look a user up.

        Args:
            user_id: the user's id.
        """
        return "found"

    agent = ToolCallingAgent(tools=[get_user_details], model=ScriptedModel([]), max_steps=3)
    with pytest.raises(ToolMismatchError, match="the agent has 'get_user_details'") as caught:
        agentguard.guard(agent, parse_spec(SPEC), strict_tools=True)
    assert [m.suggestion for m in caught.value.mismatches] == ["get_user_details"]
    assert getattr(agent, "agentguard", None) is None


def test_smolagents_guard_is_silent_on_a_matching_spec() -> None:
    """Spec and agent agree: running the guarded agent warns nothing."""
    from smolagents import ToolCallingAgent, tool

    import agentguard
    from agentguard.testing.smolagents_models import ScriptedModel

    @tool
    def get_user_details(user_id: str) -> str:
        """Look a user up.

        Args:
            user_id: the user's id.
        """
        return "found"

    model = ScriptedModel(
        [call("get_user_details", user_id="u1"), call("final_answer", answer="ok")]
    )
    agent = ToolCallingAgent(tools=[get_user_details], model=model, max_steps=3)
    agentguard.guard(agent, parse_spec(SPEC.replace("get_user_detail", "get_user_details")))
    assert _no_warnings(lambda: agent.run("look the user up")) == []


def test_langchain_middleware_compares_the_bound_tools() -> None:
    """AgentGuardMiddleware compares the tools of the first model request, once."""
    from agentguard.integrations.langchain import AgentGuardMiddleware
    from langchain.agents import create_agent
    from langchain_core.tools import tool as lc_tool

    from agentguard.testing.langchain_models import ScriptedChatModel

    @lc_tool
    def get_user_details(user_id: str) -> str:
        """Look a user up."""
        return "found"

    middleware = AgentGuardMiddleware(parse_spec(SPEC))
    model = ScriptedChatModel([call("get_user_details", user_id="u1"), "done"])
    agent = create_agent(model, [get_user_details], middleware=[middleware])
    with pytest.warns(ToolMismatchWarning, match="the agent has 'get_user_details'") as seen:
        agent.invoke({"messages": [{"role": "user", "content": "look the user up"}]})
    assert len([w for w in seen if issubclass(w.category, ToolMismatchWarning)]) == 1


def test_langchain_middleware_with_strict_tools_refuses_every_invocation() -> None:
    """strict_tools=True: the first model request raises ToolMismatchError (no tool ran),
    and so does the next invocation: a strict agent never runs on a misfit."""
    from agentguard.integrations.langchain import AgentGuardMiddleware
    from langchain.agents import create_agent
    from langchain_core.tools import tool as lc_tool

    from agentguard.analysis import ToolMismatchError
    from agentguard.testing.langchain_models import ScriptedChatModel

    ran: list[str] = []

    @lc_tool
    def get_user_details(user_id: str) -> str:
        """Look a user up."""
        ran.append(user_id)
        return "found"

    middleware = AgentGuardMiddleware(parse_spec(SPEC), strict_tools=True)
    model = ScriptedChatModel([call("get_user_details", user_id="u1"), "done"] * 2)
    agent = create_agent(model, [get_user_details], middleware=[middleware])
    for _ in range(2):
        with pytest.raises(ToolMismatchError, match="get_user_details"):
            agent.invoke({"messages": [{"role": "user", "content": "look the user up"}]})
    assert ran == []


def test_strict_firewall_raises_after_logging(tmp_path: Path) -> None:
    """Firewall(agent_tools=..., strict_tools=True): no warning, the difference logged,
    then ToolMismatchError; a matching spec builds as usual."""
    from agentguard.analysis import ToolMismatchError

    log = tmp_path / "log.jsonl"
    seen: list[warnings.WarningMessage] = []

    def build() -> None:
        with pytest.raises(ToolMismatchError, match="strict_tools"):
            Firewall(parse_spec(SPEC), agent_tools=AGENT_TOOLS, log_path=log, strict_tools=True)

    seen = _no_warnings(build)
    assert seen == []
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["tool"] for e in events if e["event"] == "agentguard.tool_mismatch"] == [
        "get_user_detail"
    ]
    spec = parse_spec(SPEC.replace("get_user_detail", "get_user_details"))
    Firewall(spec, agent_tools=AGENT_TOOLS, strict_tools=True).finish()


def test_openai_agents_tools_are_gathered_over_handoffs() -> None:
    """The Agents SDK adapter compares the function tools of every agent handoffs reach."""
    from agentguard.integrations.openai_agents import agent_tool_schemas
    from agents import Agent, function_tool

    @function_tool
    def get_user_details(user_id: str) -> str:
        """Look a user up."""
        return "found"

    @function_tool
    def issue_refund(amount: float) -> str:
        """Refund."""
        return "ok"

    billing = Agent(name="billing", tools=[issue_refund])
    front = Agent(name="front", tools=[get_user_details], handoffs=[billing])
    schemas = agent_tool_schemas(front)
    assert schemas is not None and set(schemas) == {"get_user_details", "issue_refund"}
    assert schemas["issue_refund"]["properties"]["amount"]["type"] == "number"
    with pytest.warns(ToolMismatchWarning, match="get_user_details"):
        Firewall(parse_spec(SPEC), agent_tools=schemas)


def test_openai_agents_guard_reports_at_guard_time() -> None:
    """guard() on an agents.Agent warns at the guard() line; strict_tools raises there."""
    from agents import Agent, function_tool

    import agentguard
    from agentguard.analysis import ToolMismatchError

    @function_tool
    def get_user_details(user_id: str) -> str:
        """Look a user up."""
        return "found"

    with pytest.warns(ToolMismatchWarning, match="the agent has 'get_user_details'") as seen:
        agentguard.guard(Agent(name="front", tools=[get_user_details]), parse_spec(SPEC))
    (warning,) = [w for w in seen if issubclass(w.category, ToolMismatchWarning)]
    assert warning.filename == __file__
    strict = Agent(name="strict", tools=[get_user_details])
    with pytest.raises(ToolMismatchError, match="get_user_details"):
        agentguard.guard(strict, parse_spec(SPEC), strict_tools=True)
