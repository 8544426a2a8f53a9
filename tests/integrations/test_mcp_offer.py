"""The MCP gateway's ``--offer``: ``tools/list`` without the tools refused now (or with
them marked), ``notifications/tools/list_changed`` when that set changes, and every call
still judged. The SDK's own client, ``agentguard mcp-proxy`` and a real MCP server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp import types  # noqa: E402

from tests.integrations.mcp_servers.harness import Run, text, through_proxy  # noqa: E402


def test_narrow_lists_the_refund_once_the_lookup_ran_and_says_so(tmp_path: Path) -> None:
    """Before the lookup, issue_refund (lookup_first) and wipe_database (no_wipe) are not
    listed; after a verified lookup the client is told the list changed, and the refund
    is listed again. A refund called while withheld is refused, never forwarded."""
    run = Run(tmp_path)
    told = anyio.Event()

    async def handler(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            told.set()

    async def scenario() -> tuple[list[str], Any, list[str]]:
        async with through_proxy(run, "--offer", "narrow", message_handler=handler) as client:
            before = [t.name for t in (await client.list_tools()).tools]
            refused = await client.call_tool("issue_refund", {"order_id": "A1", "amount": 5})
            await client.call_tool("lookup_order", {"order_id": "A1"})
            with anyio.fail_after(20):
                await told.wait()
            after = [t.name for t in (await client.list_tools()).tools]
            return before, refused, after

    before, refused, after = anyio.run(scenario)
    assert "issue_refund" not in before and "wipe_database" not in before
    assert "lookup_order" in before
    assert refused.is_error and "lookup_first" in text(refused)
    assert "Allowed now: lookup_order" in text(refused)
    assert "issue_refund" in after and "wipe_database" not in after
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order"]


def test_annotate_lists_every_tool_and_marks_the_refused(tmp_path: Path) -> None:
    """``annotate``: every tool listed; a refused one's description says so and why."""
    run = Run(tmp_path)

    async def scenario() -> list[types.Tool]:
        async with through_proxy(run, "--offer", "annotate") as client:
            return list((await client.list_tools()).tools)

    tools = {t.name: t for t in anyio.run(scenario)}
    assert {"issue_refund", "lookup_order", "wipe_database"} <= set(tools)
    assert (tools["issue_refund"].description or "").startswith(
        "[agentguard: refused now (lookup_first"
    )
    assert not (tools["lookup_order"].description or "").startswith("[agentguard")


def test_without_the_option_the_list_is_the_servers(tmp_path: Path) -> None:
    """No ``--offer``: tools/list is forwarded as the server answers it."""
    run = Run(tmp_path)

    async def scenario() -> list[str]:
        async with through_proxy(run) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert {"issue_refund", "lookup_order", "wipe_database"} <= set(anyio.run(scenario))
