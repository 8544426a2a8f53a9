"""Every tool the MCP server offers is checked by the gateway, including one it adds
mid-session: the proxy relays ``notifications/tools/list_changed``, learns the new
tool list, and judges a call to the new tool like any other (its schema's defaults
too); a tool the server removed is refused, not forwarded. Real ``mcp`` SDK client and
server, over stdio and streamable HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
import mcp_types as types

from tests.integrations.mcp_servers.harness import (
    HERE,
    OPS,
    Run,
    Wire,
    assert_records_agree,
    assert_trace_is_what_ran,
    drive,
    text,
)

SPEC = HERE / "ops.ltl"
TRANSPORTS = ["stdio", "http"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_tool_added_mid_session_is_checked_like_any_other(tmp_path: Path, transport: str) -> None:
    """enable_admin adds admin_wipe and says so: the client is told (the proxy relays the
    notification), lists it, and a call to it is judged: with force = false it runs,
    with force left out (defaulted to true) the HARD_STOP refuses it. It used to be
    refused as an unknown tool though the client saw it."""
    run = Run(tmp_path, SPEC, OPS)
    wire = Wire()
    told = anyio.Event()

    async def handler(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            told.set()

    async def scenario(client: Any) -> list[Any]:
        await client.list_tools()
        await client.call_tool("enable_admin", {})
        with anyio.fail_after(20):
            await told.wait()
        listed = [t.name for t in (await client.list_tools()).tools]
        assert "admin_wipe" in listed
        return [
            await client.call_tool("admin_wipe", {"target": "cache", "force": False}),
            await client.call_tool("admin_wipe", {"target": "db"}),
        ]

    careful, forced = drive(run, transport, scenario, wire=wire, message_handler=handler)
    assert not careful.is_error, text(careful)
    assert forced.is_error and "no_forced_wipe" in text(forced)
    assert [c["tool"] for c in run.reached_server()] == ["enable_admin", "admin_wipe"]
    (report,) = run.reports()
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report, wire)


def test_a_tool_added_without_a_word_is_learned_when_called(tmp_path: Path) -> None:
    """A server that adds a tool and does not say so: the client sees it in a listing
    (forwarded as the server gives it); the proxy lists again before judging a call to a
    tool it does not know, so the call is checked, not refused as unknown."""
    run = Run(tmp_path, SPEC, OPS)

    async def scenario(client: Any) -> list[Any]:
        await client.call_tool("enable_admin_quietly", {})
        return [
            await client.call_tool("admin_wipe", {"target": "cache", "force": False}),
            await client.call_tool("admin_wipe", {"target": "db"}),
        ]

    careful, forced = drive(run, "stdio", scenario)
    assert not careful.is_error, text(careful)
    assert forced.is_error and "no_forced_wipe" in text(forced)
    (report,) = run.reports()
    assert report["tool_sequence"] == ["enable_admin_quietly", "admin_wipe"]
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_tool_the_server_removed_is_refused(tmp_path: Path, transport: str) -> None:
    """After disable_admin the server no longer lists admin_wipe: a call to it is
    refused by the proxy (it would only come back as an unknown-tool error) and is not
    in the trace."""
    run = Run(tmp_path, SPEC, OPS)
    wire = Wire()

    async def scenario(client: Any) -> Any:
        await client.list_tools()
        await client.call_tool("enable_admin", {})
        await client.call_tool("admin_wipe", {"target": "cache", "force": False})
        await client.call_tool("disable_admin", {})
        await anyio.sleep(0.5)
        return await client.call_tool("admin_wipe", {"target": "cache", "force": False})

    gone = drive(run, transport, scenario, wire=wire)
    assert gone.is_error and "admin_wipe" in text(gone)
    tools = [c["tool"] for c in run.reached_server()]
    assert tools == ["enable_admin", "admin_wipe", "disable_admin"]
    (report,) = run.reports()
    assert report["tool_sequence"] == tools
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report, wire)
