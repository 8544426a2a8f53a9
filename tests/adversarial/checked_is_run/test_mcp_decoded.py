"""What an ``MCPServer`` decodes before it acts is judged decoded, or refused: JSON text in
an argument whose parameter is not annotated ``str`` (the SDK runs ``json.loads`` on it
and acts on the list, object or null), and percent-escapes in a ``resources/read``'s uri
(its resource templates match the decoded uri). Real ``mcp`` SDK client and server
through ``agentguard mcp-proxy``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

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


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_json_text_the_server_would_decode_is_refused(tmp_path: Path, transport: str) -> None:
    """``erase('["/prod"]')`` (``str | list[str]``), ``search('{"env": "prod"}')``
    (``Any``) and ``purge('["/prod"]')`` (unannotated, listed as a string) would each be
    judged as text and acted on as a list or object: each is refused naming the type to
    send, and none reaches the server. Plain text and a typed list pass, judged as the
    server acts on them."""
    run = Run(tmp_path, SPEC, OPS)

    async def scenario(client: Any) -> list[Any]:
        await client.list_tools()
        return [
            await client.call_tool("erase", {"target": '["/prod"]'}),
            await client.call_tool("search", {"query": '{"env": "prod"}'}),
            await client.call_tool("purge", {"paths": '["/prod"]'}),
            await client.call_tool("purge", {"paths": "null"}),
            await client.call_tool("erase", {"target": "/tmp/a"}),
            await client.call_tool("erase", {"target": ["/tmp/b"]}),
            await client.call_tool("search", {"query": "plain words"}),
        ]

    wire = Wire()
    *refused, plain, typed, words = drive(run, transport, scenario, wire=wire)
    for result, kind in zip(refused, ["a list", "an object", "a list", "null"], strict=True):
        assert result.is_error
        assert "is JSON for " + kind in text(result) and f"send it as {kind}" in text(result)
    assert not plain.is_error and not typed.is_error and not words.is_error
    ran = run.reached_server()
    assert [(c["tool"], c["args"]) for c in ran] == [
        ("erase", {"target": "/tmp/a"}),
        ("erase", {"target": ["/tmp/b"]}),
        ("search", {"query": "plain words"}),
    ]
    (report,) = run.reports()
    assert_trace_is_what_ran(run, report)
    assert_records_agree(run, report, wire)


def test_a_str_parameter_takes_json_text_as_text(tmp_path: Path) -> None:
    """A parameter annotated ``str`` is never decoded by the server: JSON text in it is
    judged as the text it is, and runs (no false refusal)."""
    run = Run(tmp_path, SPEC, OPS)

    async def scenario(client: Any) -> list[Any]:
        return [await client.call_tool("delete_path", {"path": '["/tmp/x"]', "force": False})]

    (result,) = drive(run, "stdio", scenario)
    assert not result.is_error, text(result)
    assert run.reached_server()[0]["args"] == {"path": '["/tmp/x"]', "force": False}


async def _read_directly(uri: str) -> str:
    params = StdioServerParameters(command=OPS[0], args=list(OPS[1:]))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        found = await client.read_resource(uri)
        return str(found.contents[0].text)  # type: ignore[union-attr]


def test_a_percent_encoded_uri_is_judged_as_the_resource_it_names(tmp_path: Path) -> None:
    """``docs://%73ecret`` is the secret to the server (read directly, it answers
    with it), so the gateway judges it as ``docs://secret``: refused, and the trace
    and log name what it read. Double encoding (``%2573``) is decoded too, and a path's
    ``..`` and repeated slashes are resolved."""
    assert "sk-live" in anyio.run(_read_directly, "docs://%73ecret")
    run = Run(tmp_path, SPEC, OPS)

    async def scenario(client: Any) -> list[Any]:
        out: list[Any] = []
        for uri in (
            "docs://%73ecret",
            "docs://%2573ecret",
            "docs://x/../secret",
            "docs://%72eadme",
        ):
            try:
                out.append(await client.read_resource(uri))
            except MCPError as exc:
                out.append(str(exc))
        return out

    wire = Wire()
    encoded, twice, dotted, readme = drive(run, "stdio", scenario, wire=wire)
    for refused in (encoded, twice, dotted):
        assert isinstance(refused, str) and "no_secrets" in refused and "sk-live" not in refused
    assert readme.contents[0].text == "public readme"
    reads = [e for e in run.events() if e.get("tool") == "resources/read"]
    assert [(e["args"]["uri"], e["action"]) for e in reads] == [
        ("docs://secret", "block"),
        ("docs://secret", "block"),
        ("docs://secret", "block"),
        ("docs://readme", "allow"),
        ("docs://readme", "executed"),
    ]
    (report,) = run.reports()
    assert [(c["tool_name"], c["arguments"]) for c in report["trace"]] == [
        ("resources/read", {"uri": "docs://readme"})
    ]
    assert_records_agree(run, report, wire)
