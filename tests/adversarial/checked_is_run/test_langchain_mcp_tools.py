"""LangChain tools whose schema is an MCP server's JSON Schema (as langchain-mcp-adapters
builds them: ``args_schema=inputSchema``, the body forwarding the model's arguments to the
server): the check judges what the *server* acts on, by the MCP gateway's rule. A real
``MCPServer`` behind the SDK's ``Client``, in process; the server's tool bodies record
what they received."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from mcp import Client
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from agentguard.enforcement.decision import RunStopped
from agentguard.testing.langchain_models import ScriptedChatModel, call
from tests.adversarial._langchain_kit import Ran, assert_invariants, spec_file
from tests.integrations.adapters import AgentGuardMiddleware

SPEC = """
spec mcp_tools
constraint cap severity HARD_STOP := G !issue_refund(amount > 500)
constraint no_force severity HARD_STOP := G !deploy(opts.force = true)
constraint no_prod severity HARD_STOP := G !erase(targets ~ /prod/)
"""


class Opts(BaseModel):
    env: str
    force: bool = True


def shop(ran: Ran) -> MCPServer:
    app = MCPServer("shop")

    @app.tool()
    def issue_refund(order_id: str, amount: float) -> str:
        """Refund an order."""
        ran.append(("issue_refund", {"order_id": order_id, "amount": amount}))
        return f"refunded {amount}"

    @app.tool()
    def deploy(opts: Opts) -> str:
        """Deploy."""
        ran.append(("deploy", {"opts": opts.model_dump()}))
        return "deployed"

    @app.tool()
    def erase(targets: list[str] | str) -> str:
        """Erase paths."""
        ran.append(("erase", {"targets": targets}))
        return "erased"

    return app


async def _run(tmp_path: Path, script: list[Any]) -> tuple[AgentGuardMiddleware, Ran, list[Any]]:
    ran: Ran = []
    async with Client(shop(ran)) as client:
        tools = []
        for listed in (await client.list_tools()).tools:

            async def forward(_name: str = listed.name, **arguments: Any) -> str:
                result = await client.call_tool(_name, arguments)
                return "\n".join(getattr(c, "text", "") for c in result.content)

            tools.append(
                StructuredTool(
                    name=listed.name,
                    description=listed.description or listed.name,
                    args_schema=listed.input_schema,
                    coroutine=forward,
                )
            )
        guard = AgentGuardMiddleware(spec_file(tmp_path, SPEC)[0], log_path=tmp_path / "d.jsonl")
        agent = create_agent(ScriptedChatModel(script), tools, middleware=[guard])
        messages: list[Any] = []
        with contextlib.suppress(RunStopped):
            out = await agent.ainvoke({"messages": [HumanMessage("go")]})
            messages = out["messages"]
    return guard, ran, messages


def _tool_texts(messages: list[Any]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


def test_text_the_server_would_convert_is_refused_never_judged_as_text(tmp_path: Path) -> None:
    guard, ran, messages = asyncio.run(
        _run(tmp_path, [call("issue_refund", order_id="A1", amount="9000"), "done"])
    )
    assert ran == []  # the server would have refunded 9000.0
    (text,) = _tool_texts(messages)
    assert "did not run issue_refund" in text and "'amount'" in text
    assert_invariants(guard.agentguard.report, spec_file(tmp_path, SPEC), ran, tmp_path)


def test_a_nested_default_the_server_fills_in_is_judged(tmp_path: Path) -> None:
    guard, ran, _ = asyncio.run(_run(tmp_path, [call("deploy", opts={"env": "prod"}), "done"]))
    assert ran == []  # the server would have deployed with force=True
    report = guard.agentguard.report
    assert report is not None and report.stopped
    assert_invariants(report, spec_file(tmp_path, SPEC), ran, tmp_path)


def test_json_in_text_the_server_decodes_is_refused(tmp_path: Path) -> None:
    guard, ran, messages = asyncio.run(
        _run(tmp_path, [call("erase", targets='["/var/db"]'), "done"])
    )
    # MCPServer would json.loads it and erase the list: judged as text, the check would
    # judge another value than the one acted on, whatever the spec says of either
    assert ran == []
    (text,) = _tool_texts(messages)
    assert "did not run erase" in text
    assert_invariants(guard.agentguard.report, spec_file(tmp_path, SPEC), ran, tmp_path)


def test_an_allowed_call_records_what_the_server_acted_on(tmp_path: Path) -> None:
    script = [
        call("deploy", opts={"env": "staging", "force": False}),
        call("issue_refund", order_id="A1", amount=20),
        "done",
    ]
    guard, ran, _ = asyncio.run(_run(tmp_path, script))
    assert ran == [
        ("deploy", {"opts": {"env": "staging", "force": False}}),
        ("issue_refund", {"order_id": "A1", "amount": 20.0}),
    ]
    assert_invariants(guard.agentguard.report, spec_file(tmp_path, SPEC), ran, tmp_path)
