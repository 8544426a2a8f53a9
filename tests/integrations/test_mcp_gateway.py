"""The MCP gateway end to end: the SDK's own client talks to ``agentguard mcp-proxy``
(a subprocess, over stdio or streamable HTTP) in front of a real MCP server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentguard.scoring import verify_trace
from agentguard.trace.loaders import iter_trace_file
from agentguard.trace.mcp_content import CANCELLED_TEXT

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from tests.integrations.mcp_servers.harness import (  # noqa: E402
    HERE,
    SHOP,
    Run,
    free_port,
    text,
    through_proxy,
    wait_listening,
)

SPEC = HERE / "shop.ltl"
SERVER = SHOP


@asynccontextmanager
async def direct(run: Run) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:], env=run.env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def test_allowed_calls_pass_and_refused_ones_never_reach_the_server(tmp_path: Path) -> None:
    """A refused call is an isError result naming the constraint and its repair; the
    allowed ones are the server's own results; the server saw only the allowed ones."""
    run = Run(tmp_path)

    async def scenario() -> list[Any]:
        async with through_proxy(run) as client:
            return [
                await client.call_tool("issue_refund", {"order_id": "A1", "amount": 5}),
                await client.call_tool("lookup_order", {"order_id": "A1"}),
                await client.call_tool("issue_refund", {"order_id": "A1", "amount": 5}),
            ]

    refused, looked_up, refunded = anyio.run(scenario)
    assert refused.is_error
    assert "lookup_first" in text(refused) and "To satisfy it: call lookup_order" in text(refused)
    assert not looked_up.is_error and json.loads(text(looked_up))["verified"] is True
    assert text(refunded) == "refunded 5.0 on A1"
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order", "issue_refund"]


def test_results_are_unwrapped_before_the_monitor_sees_them(tmp_path: Path) -> None:
    """`lookup_order(result.verified = true)` reads the JSON inside the text block: a
    refund after an unverified lookup is refused, after a verified one it runs."""
    run = Run(tmp_path)

    async def scenario() -> tuple[Any, Any]:
        async with through_proxy(run) as client:
            await client.call_tool("lookup_order", {"order_id": "B2"})
            unverified = await client.call_tool("issue_refund", {"order_id": "B2", "amount": 1})
            await client.call_tool("lookup_order", {"order_id": "A1"})
            verified = await client.call_tool("issue_refund", {"order_id": "A1", "amount": 1})
            return unverified, verified

    unverified, verified = anyio.run(scenario)
    assert unverified.is_error and "verified_refund" in text(unverified)
    assert not verified.is_error
    (report,) = run.reports()
    assert report["trace"][0]["tool_result"] == {"order_id": "B2", "verified": False, "amount": 80}


def test_tools_list_is_forwarded_unchanged_and_schemas_are_checked(tmp_path: Path) -> None:
    """tools/list through the proxy equals the server's own; a call breaking a tool's
    input schema (wrong type, below the minimum, unknown tool) is refused before the server."""
    run = Run(tmp_path)

    async def scenario() -> tuple[Any, Any, list[Any]]:
        async with direct(run) as server:
            own = await server.list_tools()
        async with through_proxy(run) as client:
            listed = await client.list_tools()
            await client.call_tool("lookup_order", {"order_id": "A1"})
            bad = [
                await client.call_tool("issue_refund", {"order_id": "A1", "amount": "ten"}),
                await client.call_tool("issue_refund", {"order_id": "A1", "amount": -3}),
                await client.call_tool("no_such_tool", {}),
            ]
            return own, listed, bad

    own, listed, bad = anyio.run(scenario)
    assert listed.model_dump() == own.model_dump()
    assert all(r.is_error for r in bad)
    assert "argument 'amount' must be a number" in text(bad[0])
    assert "amount" in text(bad[1]) and ">= 0" in text(bad[1])
    assert "unknown tool 'no_such_tool'" in text(bad[2])
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order"]


def test_hard_stop_ends_the_session_and_the_report_is_written_on_disconnect(
    tmp_path: Path,
) -> None:
    """After a HARD_STOP every call of the session is refused; on disconnect the report
    (stopped) and the decision log are on disk, and the report equals verify_trace of
    the trace loaded back from either file (online = offline)."""
    run = Run(tmp_path)

    async def scenario() -> tuple[Any, Any]:
        async with through_proxy(run) as client:
            await client.call_tool("lookup_order", {"order_id": "A1"})
            stopped = await client.call_tool("wipe_database", {})
            after = await client.call_tool("lookup_order", {"order_id": "A1"})
            return stopped, after

    stopped, after = anyio.run(scenario)
    assert stopped.is_error and "no_wipe" in text(stopped) and "stopped the run" in text(stopped)
    assert after.is_error
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order"]
    (report,) = run.reports()
    assert report["stopped"] is True and report["tool_sequence"] == ["lookup_order"]
    for path in (run.report, run.log):
        (loaded,) = list(iter_trace_file(path))
        assert loaded.trace is not None
        offline = verify_trace(loaded.trace, str(SPEC))
        assert offline.to_dict() == report["compliance"]


def test_a_server_that_crashes_is_handled_and_logged(tmp_path: Path) -> None:
    """The call the server died in is an isError result and stays in the trace with its
    error; later calls are refused and withdrawn; the proxy still writes its report."""
    run = Run(tmp_path)

    async def scenario() -> tuple[Any, Any]:
        async with through_proxy(run) as client:
            await client.call_tool("lookup_order", {"order_id": "A1"})
            died = await client.call_tool("crash", {})
            later = await client.call_tool("lookup_order", {"order_id": "A1"})
            return died, later

    died, later = anyio.run(scenario)
    assert died.is_error and "failed while running crash" in text(died)
    assert later.is_error and "not running" in text(later)
    (report,) = run.reports()
    assert report["tool_sequence"] == ["lookup_order", "crash"]
    assert report["trace"][1].get("is_error") is True
    events = [json.loads(line) for line in run.log.read_text().splitlines()]
    assert any(e["action"] == "withdrawn" and e["tool"] == "lookup_order" for e in events)


def test_tool_errors_enter_the_trace_with_their_error(tmp_path: Path) -> None:
    """A tool that answers isError ran: the client gets the error, the trace marks it."""
    run = Run(tmp_path)

    async def scenario() -> Any:
        async with through_proxy(run) as client:
            return await client.call_tool("lookup_order", {"order_id": "Z9"})

    failed = anyio.run(scenario)
    assert failed.is_error and "no order Z9" in text(failed)
    (report,) = run.reports()
    assert report["trace"][0]["is_error"] is True
    assert report["trace"][0]["tool_result"] == text(failed)


def test_json_rpc_errors_are_told_apart_by_their_code(tmp_path: Path) -> None:
    """A request the server refuses as it reads it (invalid params) never ran: withdrawn,
    the log says so. An internal error may come from a tool that had begun (this one
    charged): it ran, with its error. The client gets both errors as they are, and the
    report equals verify_trace of the trace loaded back from the report, the decision
    log and the JSON-RPC messages of the exchange (online = offline)."""
    run = Run(tmp_path)

    async def scenario() -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        calls = [
            ("lookup_order", {"order_id": "A1"}),
            ("reserve", {"slot": "9am"}),
            ("charge", {"order_id": "A1"}),
            ("lookup_order", {"order_id": "A1"}),
        ]
        async with through_proxy(run) as client:
            for number, (name, args) in enumerate(calls, start=1):
                params = {"name": name, "arguments": args}
                messages.append(
                    {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}
                )
                try:
                    result = await client.call_tool(name, args)
                except mcp.MCPError as exc:
                    error = {"code": exc.code, "message": exc.message}
                    messages.append({"jsonrpc": "2.0", "id": number, "error": error})
                else:
                    answer = result.model_dump(by_alias=True, mode="json", exclude_none=True)
                    messages.append({"jsonrpc": "2.0", "id": number, "result": answer})
        return messages

    messages = anyio.run(scenario)
    assert [m["error"]["code"] for m in messages if "error" in m] == [-32602, -32603]
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order", "charge", "lookup_order"]
    (report,) = run.reports()
    assert report["tool_sequence"] == ["lookup_order", "charge", "lookup_order"]
    charged = report["trace"][1]
    assert charged["is_error"] is True
    assert (
        charged["tool_result"]
        == "the server answered with JSON-RPC error -32603: ledger unavailable"
    )
    events = [json.loads(line) for line in run.log.read_text().splitlines()]
    (withdrawn,) = [e for e in events if e["action"] == "withdrawn"]
    assert withdrawn["tool"] == "reserve" and "-32602" in withdrawn["message"]
    _assert_every_record_scores_alike(run, report, messages, tmp_path / "messages.jsonl")


def test_a_call_the_client_cancels_ran_with_its_error(tmp_path: Path) -> None:
    """The client gives up on slow_charge (a read timeout: the SDK sends
    notifications/cancelled): the request had reached the server, which charged, so the
    call is in the trace with the cancellation as its error, the session goes on, and
    the report equals verify_trace of the trace read back from the report, the log and
    the JSON-RPC messages of the exchange (the request, the cancellation, no response)."""
    run = Run(tmp_path)

    async def scenario() -> list[dict[str, Any]]:
        async with through_proxy(run) as client:
            first = await client.call_tool("lookup_order", {"order_id": "A1"})
            with pytest.raises(mcp.MCPError, match="timed out"):
                await client.call_tool("slow_charge", {"order_id": "A1"}, read_timeout_seconds=1.0)
            again = await client.call_tool("lookup_order", {"order_id": "A1"})
        assert first == again
        lookup = {"name": "lookup_order", "arguments": {"order_id": "A1"}}
        found = first.model_dump(by_alias=True, mode="json", exclude_none=True)
        return [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": lookup},
            {"jsonrpc": "2.0", "id": 1, "result": found},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "slow_charge", "arguments": {"order_id": "A1"}},
            },
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": lookup},
            {"jsonrpc": "2.0", "id": 3, "result": found},
        ]

    messages = anyio.run(scenario)
    assert [c["tool"] for c in run.reached_server()] == [
        "lookup_order",
        "slow_charge",
        "lookup_order",
    ]
    (report,) = run.reports()
    assert report["tool_sequence"] == ["lookup_order", "slow_charge", "lookup_order"]
    assert report["trace"][1]["is_error"] is True
    assert report["trace"][1]["tool_result"] == CANCELLED_TEXT
    events = [json.loads(line) for line in run.log.read_text().splitlines()]
    assert not [e for e in events if e["action"] == "withdrawn"]
    _assert_every_record_scores_alike(run, report, messages, tmp_path / "messages.jsonl")


def test_a_call_cancelled_before_it_was_sent_is_withdrawn(tmp_path: Path) -> None:
    """The client's cancellation arrives while the call waits to start (its approval
    relied on a call in flight): nothing was sent, so the server never ran it and the
    call is withdrawn, the log saying why, not recorded as a call that ran."""
    from agentguard.integrations.mcp import McpGateway

    run = Run(tmp_path)

    async def scenario() -> bool:
        gateway = McpGateway(SPEC, SERVER, env=run.env(), firewall_kwargs={"log_path": run.log})
        async with gateway.connected():
            session = gateway.session("client")
            decision = await session.start(session.propose("lookup_order", {"order_id": "A1"}, "1"))
            upstream = gateway._upstream.session
            assert upstream is not None
            with anyio.CancelScope() as scope:
                scope.cancel()  # the client's notifications/cancelled, meanwhile
                await gateway._forward(session, decision, upstream, {"order_id": "A1"})
            return scope.cancelled_caught

    assert anyio.run(scenario)
    assert run.reached_server() == []
    events = [json.loads(line) for line in run.log.read_text().splitlines()]
    (withdrawn,) = [e for e in events if e["action"] == "withdrawn"]
    assert withdrawn["tool"] == "lookup_order" and "before it was sent" in withdrawn["message"]
    assert not [e for e in events if e["event"] == "agentguard.result"]


def _assert_every_record_scores_alike(
    run: Run, report: dict[str, Any], messages: list[dict[str, Any]], wire: Path
) -> None:
    """Online = offline: the session's report, its decision log and the JSON-RPC
    ``messages`` of the exchange (written to ``wire``) each load back into the calls
    the report names, and verify_trace of each equals the report's compliance."""
    wire.write_text("".join(json.dumps(m) + "\n" for m in messages))
    for path in (run.report, run.log, wire):
        (loaded,) = list(iter_trace_file(path))
        assert loaded.trace is not None
        assert [c.name for c in loaded.trace.calls] == report["tool_sequence"], path
        assert verify_trace(loaded.trace, str(SPEC)).to_dict() == report["compliance"], path


def test_streamable_http_gives_each_client_session_its_own_firewall(tmp_path: Path) -> None:
    """Two HTTP client sessions are judged separately (one's lookup does not license the
    other's refund); closing a session writes its report; stopping the proxy writes the rest."""
    run = Run(tmp_path)
    port = free_port()
    errors = tmp_path / "proxy.stderr"
    command = [sys.executable, *run.proxy_args("--http", str(port))]
    with (
        errors.open("wb") as err,
        subprocess.Popen(command, env=run.env(), stdout=subprocess.DEVNULL, stderr=err) as proc,
    ):
        try:
            wait_listening(port, proc, errors)
            ok, refused = anyio.run(_two_sessions, f"http://127.0.0.1:{port}/mcp")
            assert not ok.is_error
            assert refused.is_error and "lookup_first" in text(refused)
            deadline = time.monotonic() + 20
            while not _lines(run.report) and time.monotonic() < deadline:
                time.sleep(0.1)  # the first session's report is written on its DELETE
            assert len(_lines(run.report)) >= 1
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert proc.returncode == 0, errors.read_text()
    sequences = sorted(r["tool_sequence"] for r in run.reports())
    assert sequences == [[], ["lookup_order", "issue_refund"]]


async def _two_sessions(url: str) -> tuple[Any, Any]:
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as (r1, w1), ClientSession(r1, w1) as first:
        await first.initialize()
        await first.call_tool("lookup_order", {"order_id": "A1"})
        ok = await first.call_tool("issue_refund", {"order_id": "A1", "amount": 2})
        async with streamable_http_client(url) as (r2, w2), ClientSession(r2, w2) as second:
            await second.initialize()
            refused = await second.call_tool("issue_refund", {"order_id": "A1", "amount": 2})
    return ok, refused


def _lines(path: Path) -> Sequence[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_a_spec_tool_the_server_lacks_is_logged_with_the_closest_name(tmp_path: Path) -> None:
    """The server's tools/list is compared with the spec: a misspelled tool is a
    tool_mismatch event in the session's log (and a ToolMismatchWarning on stderr)."""
    spec = tmp_path / "typo.ltl"
    spec.write_text(SPEC.read_text() + "\nconstraint typo := G !lookup_ordr\n")
    run = Run(tmp_path, spec)

    async def scenario() -> Any:
        async with through_proxy(run) as client:
            return await client.call_tool("lookup_order", {"order_id": "A1"})

    assert not anyio.run(scenario).is_error
    events = [json.loads(line) for line in run.log.read_text().splitlines()]
    mismatch = [e for e in events if e["event"] == "agentguard.tool_mismatch"]
    assert [e["tool"] for e in mismatch] == ["lookup_ordr"]
    assert "the agent has 'lookup_order'" in mismatch[0]["message"]


def test_strict_tools_refuses_to_start_on_a_misspelt_tool(tmp_path: Path) -> None:
    """mcp-proxy --strict-tools: the server's tools are compared at startup; a spec tool
    it lacks exits 2 before any client is served, naming the closest tool."""
    spec = tmp_path / "typo.ltl"
    spec.write_text(SPEC.read_text() + "\nconstraint typo := G !lookup_ordr\n")
    run = Run(tmp_path, spec)
    done = subprocess.run(
        [sys.executable, *run.proxy_args("--strict-tools")],
        env=run.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "the agent has 'lookup_order'" in done.stderr and "strict_tools" in done.stderr
    assert not run.reached_server()
