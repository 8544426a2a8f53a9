"""The MCP gateway keeps one run per MCP session, from its first call to the session's
real end: no request of an attacker (a DELETE to another path, a session id reused or
guessed) ends it early or starts it afresh, a call in flight when it ends is in its
trace, and no client's calls decide another's (clients of the stateless protocol
included). Real ``mcp`` SDK client and server, over streamable HTTP and stdio."""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
import httpx2

from agentguard.enforcement.audit import verify_lines
from tests.integrations.mcp_servers.harness import (
    SHOP,
    Run,
    Wire,
    assert_records_agree,
    assert_trace_is_what_ran,
    http_proxy,
    over_http,
    settled,
    text,
    wait_until,
)

LOOKUP = ("lookup_order", {"order_id": "A1"})
REFUND = ("issue_refund", {"order_id": "A1", "amount": 5})
JSON_RPC = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def test_a_delete_elsewhere_does_not_end_the_session(tmp_path: Path) -> None:
    """After a HARD_STOP, a DELETE carrying the client's session id to another path, or
    to the endpoint in another protocol era (which does not end the MCP session), left
    the firewall's run ended while the session went on: the next call started a fresh
    run and ran. Now the session's run goes on (stopped), and it has one report."""
    run = Run(tmp_path)
    ids: list[str] = []

    async def scenario(url: str) -> list[Any]:
        async with over_http(url, session_ids=ids) as client:
            await client.call_tool(*LOOKUP)
            stopped = await client.call_tool("wipe_database", {})
            async with httpx2.AsyncClient() as attacker:
                for target, extra in [
                    (url.replace("/mcp", "/elsewhere"), {}),
                    (url + "/", {}),
                    (url, {"mcp-protocol-version": "2026-07-28"}),
                ]:
                    await attacker.delete(target, headers={"mcp-session-id": ids[0], **extra})
            await anyio.sleep(0.5)
            assert run.reports() == []  # the session's run has not ended
            after = await client.call_tool(*LOOKUP)
            return [stopped, after]

    with http_proxy(run) as url:
        stopped, after = anyio.run(scenario, url)
    assert stopped.is_error and after.is_error
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order"]
    (report,) = run.reports()
    assert report["stopped"] is True
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report)


def test_a_call_in_flight_when_the_session_ends_is_in_its_trace(tmp_path: Path) -> None:
    """The client ends its session (DELETE) while slow_charge runs on the server: the
    report was written at once and the call, which ran, was missing from it. Now the
    run ends with the session: the call is in the trace with the cancellation as its
    error, and requests with the ended session's id never reach a firewall again."""
    run = Run(tmp_path)
    ids: list[str] = []

    async def scenario(url: str) -> int:
        async with over_http(url, session_ids=ids) as client:
            await client.call_tool(*LOOKUP)
            async with anyio.create_task_group() as group:

                async def charge() -> None:
                    with contextlib.suppress(Exception):  # the session is ended under it
                        await client.call_tool("slow_charge", {"order_id": "A1"})

                group.start_soon(charge)
                assert await settled(lambda: len(run.reached_server()) == 2)
                async with httpx2.AsyncClient() as http:
                    ended = await http.delete(url, headers={"mcp-session-id": ids[0]})
                    assert ended.status_code == 200
                    await anyio.sleep(0.5)
                    body = {"jsonrpc": "2.0", "id": 9, "method": "tools/call"}
                    body["params"] = {"name": "lookup_order", "arguments": {"order_id": "A1"}}
                    late = await http.post(
                        url, json=body, headers={**JSON_RPC, "mcp-session-id": ids[0]}
                    )
                group.cancel_scope.cancel()
        return late.status_code

    with http_proxy(run) as url:
        late = anyio.run(scenario, url)
        assert wait_until(run.reports)
    assert late == 404
    (report,) = run.reports()
    assert report["tool_sequence"] == ["lookup_order", "slow_charge"]
    assert report["trace"][1]["is_error"] is True
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report)


def test_a_finished_session_is_never_judged_afresh(tmp_path: Path) -> None:
    """A call for a client session whose run ended is refused by that run's finished
    firewall, and logged on its chain, never judged by a new one."""
    from agentguard.integrations.mcp import McpGateway

    run = Run(tmp_path)

    async def scenario() -> Any:
        gateway = McpGateway(run.spec, SHOP, env=run.env(), firewall_kwargs={"log_path": run.log})
        async with gateway.connected():
            session = gateway.session("client")
            looked = await session.start(session.propose(*LOOKUP, "1"))
            session.ran(looked, {"order_id": "A1", "verified": True})
            gateway.end_session("client")
            return gateway.session("client").propose(*REFUND, "2")

    late = anyio.run(scenario)
    assert not late.executes and "already ended" in late.message
    events = run.events()
    assert len({e["run_id"] for e in events}) == 1
    assert events[-1]["event"] == "agentguard.decision" and events[-1]["action"] == "block"
    assert verify_lines(run.log.read_text().splitlines(), require_finish=True).ok


def test_stateless_clients_never_share_a_run(tmp_path: Path) -> None:
    """Clients of the stateless (2026) protocol shared one firewall: A's lookup allowed
    B's refund, and A's HARD_STOP blocked B. Now a client that can open a session gets
    its own (the SDK's default client falls back to the handshake), and a call that
    carries no session is refused, never judged with another client's history."""
    from mcp.client.client import Client

    run = Run(tmp_path)

    async def scenario(url: str) -> list[Any]:
        async with Client(url) as a, Client(url) as b:
            await a.call_tool(*LOOKUP)
            refund = await b.call_tool(*REFUND)
            await a.call_tool("wipe_database", {})
            lookup = await b.call_tool(*LOOKUP)
        async with Client(url, mode="2026-07-28") as c:
            sessionless = await c.call_tool(*LOOKUP)
        return [refund, lookup, sessionless]

    with http_proxy(run) as url:
        refund, lookup, sessionless = anyio.run(scenario, url)
    assert refund.is_error and "lookup_first" in text(refund)
    assert not lookup.is_error
    assert sessionless.is_error and "session" in text(sessionless)
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order", "lookup_order"]
    reports = run.reports()
    assert sorted(r["stopped"] for r in reports) == [False, True]
    for report in reports:
        assert_records_agree(run, report)


def test_stateless_requests_can_be_runs_of_their_own(tmp_path: Path) -> None:
    """With --stateless per-request each session-less call is a run of its own: the
    lookup of one request licenses no refund in another, and each has its report."""
    from mcp.client.client import Client

    run = Run(tmp_path)

    async def scenario(url: str) -> list[Any]:
        async with Client(url, mode="2026-07-28") as c:
            return [await c.call_tool(*LOOKUP), await c.call_tool(*REFUND)]

    with http_proxy(run, "--stateless", "per-request") as url:
        lookup, refund = anyio.run(scenario, url)
    assert not lookup.is_error
    assert refund.is_error and "lookup_first" in text(refund)
    reports = run.reports()
    assert sorted(r["tool_sequence"] for r in reports) == [[], ["lookup_order"]]
    for report in reports:
        assert_records_agree(run, report)


def test_guessed_and_concurrent_sessions_stay_apart(tmp_path: Path) -> None:
    """Five clients at once each get a run of their own (each looked up, then refunded);
    a request with a guessed session id reaches no run; every report agrees with its
    own decision log and JSON-RPC messages."""
    run = Run(tmp_path)
    wires = [Wire() for _ in range(5)]

    async def one(url: str, wire: Wire) -> None:
        async with over_http(url, wire=wire) as client:
            await client.list_tools()
            first = await client.call_tool(*REFUND)
            await client.call_tool(*LOOKUP)
            again = await client.call_tool(*REFUND)
            assert first.is_error and not again.is_error

    async def scenario(url: str) -> int:
        async with anyio.create_task_group() as group:
            for wire in wires:
                group.start_soon(one, url, wire)
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        body["params"] = {"name": "lookup_order", "arguments": {"order_id": "A1"}}
        async with httpx2.AsyncClient() as http:
            guessed = await http.post(
                url, json=body, headers={**JSON_RPC, "mcp-session-id": uuid.uuid4().hex}
            )
        return guessed.status_code

    with http_proxy(run) as url:
        assert anyio.run(scenario, url) == 404
    reports = run.reports()
    assert [r["tool_sequence"] for r in reports] == [["lookup_order", "issue_refund"]] * 5
    assert len({r["run_id"] for r in reports}) == 5
    for report, wire in zip(reports, wires, strict=True):  # alike: any pairing agrees
        assert_records_agree(run, report, wire)
