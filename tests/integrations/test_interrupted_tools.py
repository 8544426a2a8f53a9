"""A tool ended midway by Ctrl-C or a cancellation began, and may have acted: its call
ran, with that error on it, in every adapter, and the run's report still equals what its
decision log scores offline.

These are ``BaseException``s, not ``Exception``s: an adapter catching only the latter
left such a call in flight, so that it was withdrawn ("started but had not finished")
at the end of the run, or never settled at all.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool as langchain_tool
from smolagents import ToolCallingAgent, tool  # smolagents reads the decorator: `@tool`

from agentguard.enforcement.decision import Action
from agentguard.guard import guard
from agentguard.language import load_spec
from agentguard.testing.langchain_models import ScriptedChatModel
from agentguard.testing.langchain_models import call as langchain_call
from agentguard.testing.smolagents_models import ScriptedModel
from agentguard.testing.smolagents_models import call as smolagents_call

from ._offline import assert_online_is_offline, log_events
from .adapters import AgentGuardMiddleware

SPEC = "constraint looked_up := G(charge -> O lookup)\n"
RAN: list[str] = []


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "spec.ltl"
    path.write_text(SPEC)
    return path


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def _interrupted(report: Any, log: Path, error_type: str) -> None:
    """The run ended with ``charge`` in its trace, ran, with ``error_type`` as its
    error, and nothing withdrawn."""
    assert report is not None
    assert report.trace.names == ("lookup", "charge")
    charged = report.trace[1]
    assert charged.error and error_type in str(charged.result)
    assert not log_events(log, "agentguard.withdrawn")
    (result,) = [e for e in log_events(log, "agentguard.result") if e["tool"] == "charge"]
    assert result["is_error"] is True


# ---------------------------------------------------------------- smolagents
@tool
def lookup(order_id: str) -> str:
    """Look an order up.

    Args:
        order_id: The order number.
    """
    RAN.append("lookup")
    return "found"


@tool
def charge(order_id: str) -> str:
    """Charge an order; the user presses Ctrl-C while it runs.

    Args:
        order_id: The order number.
    """
    RAN.append("charge")
    raise KeyboardInterrupt


def test_smolagents_a_tool_stopped_by_ctrl_c_ran_with_its_error(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "run.jsonl"
    script = [
        smolagents_call("lookup", order_id="A1"),
        smolagents_call("charge", order_id="A1"),
        smolagents_call("final_answer", answer="charged"),
    ]
    agent = guard(
        ToolCallingAgent(
            tools=[lookup, charge], model=ScriptedModel(script), verbosity_level=-1, max_steps=5
        ),
        load_spec(spec_file),
        log_path=log,
    )
    with pytest.raises(KeyboardInterrupt):
        agent.run("charge A1")
    assert RAN == ["lookup", "charge"]
    report = agent.agentguard.report
    _interrupted(report, log, "KeyboardInterrupt")
    assert_online_is_offline(spec_file, report, log, capsys)


# ---------------------------------------------------------------- LangChain
@langchain_tool("lookup")
def lc_lookup(order_id: str) -> str:
    """Look an order up."""
    RAN.append("lookup")
    return "found"


@langchain_tool("charge")
def lc_charge(order_id: str) -> str:
    """Charge an order; the user presses Ctrl-C while it runs."""
    RAN.append("charge")
    raise KeyboardInterrupt


@langchain_tool("charge")
async def lc_slow_charge(order_id: str) -> str:
    """Charge an order; the caller gives up waiting and cancels the run."""
    RAN.append("charge")
    await asyncio.sleep(30)
    return "charged"


def _lc_script() -> list[Any]:
    return [
        [langchain_call("lookup", order_id="A1")],
        [langchain_call("charge", order_id="A1")],
        "charged",
    ]


def test_langchain_a_tool_stopped_by_ctrl_c_ran_with_its_error(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "run.jsonl"
    middleware = AgentGuardMiddleware(load_spec(spec_file), log_path=log)
    agent = create_agent(
        ScriptedChatModel(_lc_script()), [lc_lookup, lc_charge], middleware=[middleware]
    )
    with pytest.raises(KeyboardInterrupt):
        agent.invoke({"messages": [HumanMessage("charge A1")]})
    assert RAN == ["lookup", "charge"]
    report = middleware.agentguard.report
    _interrupted(report, log, "KeyboardInterrupt")
    assert_online_is_offline(spec_file, report, log, capsys)


def test_langchain_a_cancelled_async_tool_ran_with_its_error(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``asyncio.wait_for`` gives up on the run while ``charge`` sleeps: the tool is
    cancelled midway; the session is finished before the cancellation completes."""
    log = tmp_path / "run.jsonl"
    middleware = AgentGuardMiddleware(load_spec(spec_file), log_path=log)
    agent = create_agent(
        ScriptedChatModel(_lc_script()), [lc_lookup, lc_slow_charge], middleware=[middleware]
    )

    async def run() -> None:
        await asyncio.wait_for(agent.ainvoke({"messages": [HumanMessage("charge A1")]}), 2.0)

    with pytest.raises(TimeoutError):
        asyncio.run(run())
    assert RAN == ["lookup", "charge"]
    session = middleware.agentguard
    assert [d.action for d in session.attempts] == [Action.ALLOW, Action.ALLOW]
    _interrupted(session.report, log, "CancelledError")
    assert_online_is_offline(spec_file, session.report, log, capsys)


# ---------------------------------------------------------------- OpenAI Agents SDK
OPENAI_RUN = """
import asyncio, json, sys
from agents import Agent, Runner, function_tool, set_tracing_disabled
import agentguard
from agentguard.testing.openai_agents_models import ScriptedAgentsModel, call

set_tracing_disabled(True)

@function_tool
def lookup(order_id: str) -> str:
    \"\"\"Look an order up.\"\"\"
    return "found"

@function_tool
def charge(order_id: str) -> str:
    \"\"\"Charge an order; the user presses Ctrl-C while it runs.\"\"\"
    raise KeyboardInterrupt

script = [call("lookup", order_id="A1"), call("charge", order_id="A1"), "charged"]
agent = agentguard.guard(
    Agent(name="shop", instructions="help", tools=[lookup, charge],
          model=ScriptedAgentsModel(script)),
    agentguard.load_spec(sys.argv[1]),
    log_path=sys.argv[2],
)
try:
    asyncio.run(Runner.run(agent, "charge A1"))
except KeyboardInterrupt:
    (report,) = agent.agentguard.finish_running()
    print(json.dumps(list(report.trace.names)))
"""


def test_openai_agents_a_tool_stopped_by_ctrl_c_ran_and_the_process_exits(
    spec_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The call ran, with its error; the process exits: the firewall's ``start`` ran in
    an AnyIO worker thread, which the loop left pending by the interrupt never stopped,
    so the interpreter waited for it forever at exit."""
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(OPENAI_RUN))
    log = tmp_path / "run.jsonl"
    done = subprocess.run(
        [sys.executable, str(script), str(spec_file), str(log)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["lookup", "charge"]
    (result,) = [e for e in log_events(log, "agentguard.result") if e["tool"] == "charge"]
    assert result["is_error"] is True and "KeyboardInterrupt" in result["result"]
    (finished,) = log_events(log, "agentguard.finish")
    assert finished["verdict"] == "FULL"
