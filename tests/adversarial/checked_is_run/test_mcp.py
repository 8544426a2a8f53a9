"""The MCP gateway judges the arguments the server acts on: an argument the client left
out is judged with the default the server's ``inputSchema`` fills in (nested ones too),
and text the server would convert into a number or a boolean is refused rather than
judged as text; the request still reaches the server as the client sent it. Real
``mcp`` SDK client and server, over stdio and streamable HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

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
def test_an_argument_left_out_is_judged_with_the_servers_default(
    tmp_path: Path, transport: str
) -> None:
    """delete_path(path) leaves out force, which the schema defaults to true: judged as
    force = true, the HARD_STOP refuses it and the server never runs it. The calls that
    ran are in the trace with the arguments the server acted on (its defaults filled
    in), and the requests reached the server as the client sent them."""
    run = Run(tmp_path, SPEC, OPS)
    wire = Wire()

    async def scenario(client: Any) -> list[Any]:
        await client.list_tools()
        return [
            await client.call_tool("delete_path", {"path": "/tmp/a", "force": False}),
            await client.call_tool("maybe_transfer", {}),
            await client.call_tool("delete_path", {"path": "/prod"}),
        ]

    safe, nothing, forced = drive(run, transport, scenario, wire=wire)
    assert not safe.is_error and not nothing.is_error
    assert forced.is_error and "no_recursive_delete" in text(forced)
    ran = run.reached_server()
    assert [c["tool"] for c in ran] == ["delete_path", "maybe_transfer"]
    assert ran[1]["sent"] == {}  # forwarded as sent: the server filled in amount itself
    (report,) = run.reports()
    assert report["stopped"] is True
    assert report["trace"][1]["arguments"] == {"amount": None}
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report, wire)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_nested_default_is_judged(tmp_path: Path, transport: str) -> None:
    """deploy(opts={env}) leaves out opts.force, which the nested model defaults to true:
    the HARD_STOP on opts.force = true refuses it."""
    run = Run(tmp_path, SPEC, OPS)
    wire = Wire()

    async def scenario(client: Any) -> list[Any]:
        await client.list_tools()
        return [
            await client.call_tool("deploy", {"opts": {"env": "dev", "force": False}}),
            await client.call_tool("deploy", {"opts": {"env": "prod"}}),
        ]

    careful, forced = drive(run, transport, scenario, wire=wire)
    assert not careful.is_error
    assert forced.is_error and "no_forced_deploy" in text(forced)
    assert [c["args"] for c in run.reached_server()] == [{"opts": {"env": "dev", "force": False}}]
    (report,) = run.reports()
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report, wire)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_text_the_server_would_convert_is_refused(tmp_path: Path, transport: str) -> None:
    """The server (pydantic) turns "9000" into 9000.0 and "on" into true: a check of the
    text would let an over-limit amount and a recursive delete through. Such text is
    refused with a message naming the argument and the type to send; typed values are
    judged as they are."""
    run = Run(tmp_path, SPEC, OPS)
    wire = Wire()

    async def scenario(client: Any) -> list[Any]:
        await client.list_tools()
        return [
            await client.call_tool("maybe_transfer", {"amount": "9000"}),
            await client.call_tool("pay", {"amount": "9000"}),
            await client.call_tool("delete_path", {"path": "/prod", "force": "on"}),
            await client.call_tool("pay", {"amount": 9000}),
            await client.call_tool("pay", {"amount": 20}),
        ]

    optional, decimal, switch, over, fine = drive(run, transport, scenario, wire=wire)
    assert optional.is_error and "argument 'amount' is the text '9000'" in text(optional)
    assert "send it as a number" in text(optional)
    assert decimal.is_error and "send it as a number" in text(decimal)
    assert switch.is_error and "argument 'force'" in text(switch)
    assert over.is_error and "small_amounts" in text(over)
    assert not fine.is_error
    assert run.reached_server() == [{"tool": "pay", "args": {"amount": 20.0}}]
    (report,) = run.reports()
    assert report["stopped"] is False
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report, wire)


def test_text_is_refused_without_schema_checks_too(tmp_path: Path) -> None:
    """--no-schema-checks turns the schemas' declarations off, not the reading of what
    the server acts on: transfer(amount="9000") is still refused, never judged as text."""
    run = Run(tmp_path, SPEC, OPS)

    async def scenario(client: Any) -> Any:
        return await client.call_tool("transfer", {"amount": "9000"})

    refused = drive(run, "stdio", scenario, "--no-schema-checks")
    assert refused.is_error and "argument 'amount'" in text(refused)
    assert run.reached_server() == []
    (report,) = run.reports()
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report)
