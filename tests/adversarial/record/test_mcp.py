"""What the MCP gateway writes is a faithful, verifiable record: under a redactor no
output of it (report line, decision log, spans, its own error messages) holds a secret,
and a call whose request never reached a live server (it had exited) is withdrawn with
the reason, not recorded as a call that ran, live and in the message-log reader alike.
Real ``mcp`` SDK client and server."""

from __future__ import annotations

import contextlib
import logging
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from tests.integrations.mcp_servers.harness import (
    HERE,
    OPS,
    Run,
    Wire,
    assert_records_agree,
    assert_trace_is_what_ran,
    free_port,
    over_http,
    settled,
    text,
    through_proxy,
    wait_listening,
    wait_until,
)

SPEC = HERE / "ops.ltl"
SECRET = "tok-9f3c2a77e1"


def _hide_tokens(tool: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
    del tool
    return {k: ("***" if k == "token" else v) for k, v in args.items()}


def test_a_redactor_keeps_secrets_out_of_every_output(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Given a redactor through its firewall options, the gateway kept secrets out of
    the decision log but wrote them into the report file (the arguments, the result that
    echoed them, a tool error and a JSON-RPC error quoting them). Now none of its
    outputs holds the secret: report line, log, spans, its own warnings."""
    from agentguard.integrations.mcp import McpGateway
    from mcp.client.client import Client

    run = Run(tmp_path, SPEC, OPS)
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))

    async def scenario() -> list[Any]:
        gateway = McpGateway(
            SPEC,
            OPS,
            env=run.env(),
            report_path=run.report,
            firewall_kwargs={
                "log_path": run.log,
                "redact": _hide_tokens,
                "tracer_provider": provider,
            },
        )
        out: list[Any] = []
        async with gateway.connected(), Client(gateway.in_memory(), mode="legacy") as client:
            out.append(await client.call_tool("login", {"token": SECRET}))
            out.append(await client.call_tool("login", {"token": "bad-" + SECRET}))
            try:
                await client.call_tool("redeem", {"token": SECRET})
            except Exception as exc:  # noqa: BLE001 - the JSON-RPC error, forwarded
                out.append(exc)
        return out

    with caplog.at_level(logging.DEBUG, logger="agentguard"):
        ok, failed, error = anyio.run(scenario)
    assert SECRET in text(ok) and SECRET in text(failed) and SECRET in str(error)
    assert [c["tool"] for c in run.reached_server()] == ["login", "login", "redeem"]
    (report,) = run.reports()
    assert report["tool_sequence"] == ["login", "login", "redeem"]
    outputs = {
        "report": run.report.read_text(),
        "log": run.log.read_text(),
        "spans": repr([(s.attributes, s.events) for s in memory.get_finished_spans()]),
        "warnings": caplog.text,
    }
    for name, written in outputs.items():
        assert SECRET not in written, name
    assert memory.get_finished_spans()
    assert "redeem" in caplog.text  # the gateway did say what failed
    assert_records_agree(run, report)  # the redacted report reads as the redacted log


def test_a_call_after_the_server_died_did_not_run(tmp_path: Path) -> None:
    """The server answers exit_soon, then its process exits. A call sent after that was
    recorded as executed; it never reached a live server, so it is withdrawn with the
    reason (the log says why), refused to the client, and absent from the trace, live
    and in the client's JSON-RPC message log read back."""
    run = Run(tmp_path, SPEC, OPS)
    wire = Wire()

    async def scenario() -> list[Any]:
        async with through_proxy(run, wire=wire) as client:
            await client.list_tools()
            first = await client.call_tool("status", {})
            await client.call_tool("exit_soon", {})
            await anyio.sleep(1.5)  # the process has exited
            after = await client.call_tool("status", {})
            again = await client.call_tool("delete_path", {"path": "/tmp/x", "force": False})
            return [first, after, again]

    first, after, again = anyio.run(scenario)
    assert not first.is_error
    assert after.is_error and "not running" in text(after)
    assert again.is_error and "not running" in text(again)
    assert [c["tool"] for c in run.reached_server()] == ["status", "exit_soon"]
    (report,) = run.reports()
    assert report["tool_sequence"] == ["status", "exit_soon"]
    withdrawn = [e for e in run.events() if e["action"] == "withdrawn"]
    assert [e["tool"] for e in withdrawn] == ["status", "delete_path"]
    assert all("exited" in e["message"] or "not running" in e["message"] for e in withdrawn)
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report, wire)


def test_a_call_the_server_died_in_ran_with_its_error(tmp_path: Path) -> None:
    """A call the server dies in may have had its effect (shop's crash records itself
    first): it is in the trace with its error; every later call is withdrawn. Online =
    offline over the report, the log and the client's messages."""
    run = Run(tmp_path)
    wire = Wire()

    async def scenario() -> list[Any]:
        async with through_proxy(run, wire=wire) as client:
            await client.list_tools()
            await client.call_tool("lookup_order", {"order_id": "A1"})
            died = await client.call_tool("crash", {})
            later = await client.call_tool("lookup_order", {"order_id": "A1"})
            return [died, later]

    died, later = anyio.run(scenario)
    assert died.is_error and later.is_error
    assert wait_until(run.reports)
    (report,) = run.reports()
    assert report["tool_sequence"] == ["lookup_order", "crash"]
    assert report["trace"][1]["is_error"] is True
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report, wire)


def test_a_call_in_flight_when_the_proxy_stops_is_in_the_trace(tmp_path: Path) -> None:
    """SIGTERM while slow_charge runs on the server: the proxy finished the run with the
    call still in flight, waited for it half a minute on the blocked event loop and logged
    it as unfinished, though the server had charged. Now the SDK closes the session first
    (its calls settled), so the call is in the trace with the cancellation as its error."""
    run = Run(tmp_path)
    port = free_port()
    command = [sys.executable, *run.proxy_args("--http", str(port))]
    with run.stderr.open("ab") as err:
        proc = subprocess.Popen(command, env=run.env(), stdout=subprocess.DEVNULL, stderr=err)

    async def scenario() -> None:
        await anyio.to_thread.run_sync(wait_listening, port, proc, run.stderr)
        async with over_http(f"http://127.0.0.1:{port}/mcp") as client:
            await client.call_tool("lookup_order", {"order_id": "A1"})
            async with anyio.create_task_group() as group:

                async def charge() -> None:
                    with contextlib.suppress(Exception):  # the proxy stops under it
                        await client.call_tool("slow_charge", {"order_id": "A1"})

                group.start_soon(charge)
                assert await settled(lambda: len(run.reached_server()) == 2)
                proc.send_signal(signal.SIGTERM)
                await anyio.to_thread.run_sync(proc.wait)
                group.cancel_scope.cancel()

    with contextlib.suppress(Exception):  # the client's own DELETE finds no proxy
        anyio.run(scenario)
    assert proc.returncode == 0, run.stderr.read_text()
    (report,) = run.reports()
    assert report["tool_sequence"] == ["lookup_order", "slow_charge"]
    assert report["trace"][1]["is_error"] is True
    assert not [e for e in run.events() if e["action"] == "withdrawn"]
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report)
