"""The MCP gateway's ``--offer``: ``tools/list`` without the tools refused now (or with
them marked), ``notifications/tools/list_changed`` when that set changes, and every call
still judged. The SDK's own client, ``agentguard mcp-proxy`` (over stdio and HTTP) and a
real MCP server; the relay changes nothing else of what the client sees, and nothing at
all without the option or in shadow mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp import types  # noqa: E402

from agentguard.enforcement.options import FirewallConfigError  # noqa: E402
from agentguard.language import load_spec  # noqa: E402
from tests.integrations.mcp_servers.harness import (  # noqa: E402
    SHOP,
    Run,
    Wire,
    drive,
    text,
    through_proxy,
)

REFUND = {"order_id": "A1", "amount": 5}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_narrow_lists_the_refund_once_the_lookup_ran_and_says_so(
    tmp_path: Path, transport: str
) -> None:
    """Before the lookup, issue_refund (lookup_first) and wipe_database (no_wipe) are not
    listed; after a verified lookup the client is told the list changed (over HTTP on
    its session's own stream), and the refund is listed again. A refund called while
    withheld is refused, never forwarded."""
    run = Run(tmp_path)
    told = anyio.Event()

    async def handler(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            told.set()

    async def scenario(client: Any) -> tuple[list[str], Any, list[str]]:
        before = [t.name for t in (await client.list_tools()).tools]
        refused = await client.call_tool("issue_refund", REFUND)
        await client.call_tool("lookup_order", {"order_id": "A1"})
        with anyio.fail_after(20):
            await told.wait()
        after = [t.name for t in (await client.list_tools()).tools]
        return before, refused, after

    before, refused, after = drive(
        run, transport, scenario, "--offer", "narrow", message_handler=handler
    )
    assert "issue_refund" not in before and "wipe_database" not in before
    assert "lookup_order" in before
    assert refused.is_error and "lookup_first" in text(refused)
    assert "Allowed now: lookup_order" in text(refused)
    assert "issue_refund" in after and "wipe_database" not in after
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order"]


def test_annotate_lists_every_tool_and_marks_the_refused(tmp_path: Path) -> None:
    """``annotate``: every tool listed; a refused one's description says so and why, and
    nothing else of the listing differs from the server's own (the raw JSON-RPC result)."""
    run = Run(tmp_path)
    plain, marked = Wire(), Wire()

    async def scenario(*extra: str, wire: Wire) -> list[types.Tool]:
        async with through_proxy(run, *extra, wire=wire) as client:
            return list((await client.list_tools()).tools)

    anyio.run(lambda: scenario(wire=plain))
    tools = {t.name: t for t in anyio.run(lambda: scenario("--offer", "annotate", wire=marked))}
    assert {"issue_refund", "lookup_order", "wipe_database"} <= set(tools)
    assert (tools["issue_refund"].description or "").startswith(
        "[agentguard: refused now (lookup_first"
    )
    assert not (tools["lookup_order"].description or "").startswith("[agentguard")
    server, offered = _listing(plain), _listing(marked)
    assert {k: v for k, v in offered.items() if k != "tools"} == {
        k: v for k, v in server.items() if k != "tools"
    }
    assert [t["name"] for t in offered["tools"]] == [t["name"] for t in server["tools"]]
    for mine, theirs in zip(offered["tools"], server["tools"], strict=True):
        note = mine.get("description", "").removesuffix(theirs.get("description", ""))
        assert {**mine, "description": ""} == {**theirs, "description": ""}
        assert (note != "") == (mine["name"] in {"issue_refund", "wipe_database"}), note


def _listing(wire: Wire) -> dict[str, Any]:
    """The result of the one ``tools/list`` the client sent, as it crossed the wire."""
    (asked,) = [m["id"] for m in wire.messages if m.get("method") == "tools/list"]
    (result,) = [m["result"] for m in wire.messages if "result" in m and m["id"] == asked]
    return dict(result)


def test_without_the_option_the_list_is_the_servers(tmp_path: Path) -> None:
    """No ``--offer``: tools/list is forwarded as the server answers it."""
    run = Run(tmp_path)

    async def scenario() -> list[str]:
        async with through_proxy(run) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert {"issue_refund", "lookup_order", "wipe_database"} <= set(anyio.run(scenario))


def test_without_the_option_a_refusal_is_the_firewalls_own(tmp_path: Path) -> None:
    """No ``--offer``: a refused call's text lists no alternatives, and the client is
    never told of a list change the server did not make."""
    run = Run(tmp_path)
    told: list[Any] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            told.append(message)

    async def scenario() -> Any:
        async with through_proxy(run, message_handler=handler) as client:
            await client.list_tools()
            refused = await client.call_tool("issue_refund", REFUND)
            await client.call_tool("lookup_order", {"order_id": "A1"})
            await client.list_tools()  # a round trip after the calls: a notice came first
            return refused

    refused = anyio.run(scenario)
    assert refused.is_error and "lookup_first" in text(refused)
    assert "Allowed now" not in text(refused)
    assert told == []


def test_shadow_mode_changes_nothing_the_client_sees(tmp_path: Path) -> None:
    """In shadow mode the offer is ignored: the server's whole list before and after the
    calls, the refund runs (it would have been refused), and no list change is sent."""
    from agentguard.integrations.mcp import McpGateway
    from mcp import ClientSession

    run = Run(tmp_path)
    told: list[Any] = []

    async def handler(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            told.append(message)

    async def scenario() -> tuple[list[str], Any, list[str]]:
        gateway = McpGateway(
            load_spec(run.spec),
            SHOP,
            env=run.env(),
            firewall_kwargs={"mode": "shadow"},
            offer="narrow",
        )
        async with (
            gateway.connected(),
            gateway.in_memory() as (read, write),
            ClientSession(read, write, message_handler=handler) as client,
        ):
            await client.initialize()
            before = [t.name for t in (await client.list_tools()).tools]
            refund = await client.call_tool("issue_refund", REFUND)
            await client.call_tool("lookup_order", {"order_id": "A1"})
            after = [t.name for t in (await client.list_tools()).tools]
            return before, refund, after

    before, refund, after = anyio.run(scenario)
    assert {"issue_refund", "lookup_order", "wipe_database"} <= set(before)
    assert after == before
    assert not refund.is_error
    assert [c["tool"] for c in run.reached_server()] == ["issue_refund", "lookup_order"]
    assert told == []


def test_an_unknown_offer_is_refused_naming_the_choices(tmp_path: Path) -> None:
    from agentguard.integrations.mcp import McpGateway

    with pytest.raises(FirewallConfigError, match="narrow, annotate"):
        McpGateway(load_spec(Run(tmp_path).spec), SHOP, offer="wide")  # type: ignore[arg-type]
