"""Two ways an MCP answer could reach the client around the gateway's judgement, closed
(outside attack round 8): a prompt that embeds a resource the spec refuses to let the
client read (``prompts/get`` is a read of what it embeds), and a task-augmented
``tools/call``, whose result would come through ``tasks/result``, never recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from agentguard.integrations._mcp_embedded import embedded_resources
from mcp.shared.exceptions import MCPError

from tests.integrations.mcp_servers.harness import HERE, OPS, Run, text, through_proxy

SPEC = HERE / "ops.ltl"


def test_a_prompt_embedding_a_refused_read_is_withheld(tmp_path: Path) -> None:
    """``review("secret")`` embeds docs://secret, which ``resources/read`` may not
    read: the client gets the refusal, not the secret; ``review("readme")`` passes as the
    server wrote it, and its read is in the trace."""
    run = Run(tmp_path, SPEC, OPS)

    async def scenario() -> tuple[Any, str]:
        async with through_proxy(run) as client:
            readme = await client.get_prompt("review", {"name": "readme"})
            with pytest.raises(MCPError) as refused:
                await client.get_prompt("review", {"name": "secret"})
            return readme, str(refused.value)

    readme, refused = anyio.run(scenario)
    assert readme.messages[1].content.resource.text == "public readme"
    assert "no_secrets" in refused and "docs://secret" in refused
    assert "sk-live" not in refused
    events = run.events()
    reads = [e for e in events if e.get("tool") == "resources/read"]
    assert [(e["event"], e["args"]["uri"], e["action"]) for e in reads] == [
        ("agentguard.decision", "docs://readme", "allow"),
        ("agentguard.result", "docs://readme", "executed"),
        ("agentguard.decision", "docs://secret", "block"),
    ]
    (report,) = run.reports()
    assert report["tool_sequence"] == ["resources/read"]


def test_a_tool_result_embedding_a_refused_read_is_withheld(tmp_path: Path) -> None:
    """``show("secret")`` runs (it is in the trace, with what it returned), but the client
    gets a tool error instead of the secret it embeds; ``show("readme")`` passes."""
    run = Run(tmp_path, SPEC, OPS)

    async def scenario() -> list[Any]:
        async with through_proxy(run) as client:
            return [
                await client.call_tool("show", {"name": "readme"}),
                await client.call_tool("show", {"name": "secret"}),
            ]

    readme, secret = anyio.run(scenario)
    assert readme.content[0].resource.text == "public readme"
    assert secret.is_error
    assert "no_secrets" in text(secret) and "sk-live" not in text(secret)
    assert [r["args"] for r in run.reached_server()] == [{"name": "readme"}, {"name": "secret"}]
    (report,) = run.reports()
    assert report["tool_sequence"] == ["show", "resources/read", "show"]


def test_a_task_augmented_tool_call_is_refused_before_it_runs(tmp_path: Path) -> None:
    record = tmp_path / "ran.jsonl"
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "tag", "arguments": {"label": "x"}, "task": {"ttl": 60000}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "tag", "arguments": {"label": "y"}},
        },
    ]
    command = [sys.executable, "-m", "agentguard", "mcp-proxy", str(SPEC), "--", *OPS]
    out = subprocess.run(
        command,
        input="".join(json.dumps(m) + "\n" for m in lines).encode(),
        capture_output=True,
        env={**os.environ, "SHOP_RECORD": str(record)},
        timeout=60,
    ).stdout
    answers = {a["id"]: a for a in map(json.loads, out.splitlines())}
    assert answers[2]["error"]["code"] == -32602
    assert "task-augmented" in answers[2]["error"]["message"]
    assert answers[3]["result"]["isError"] is False
    ran = [json.loads(line)["args"] for line in record.read_text().splitlines()]
    assert ran == [{"label": "y"}]


def test_only_resources_embedded_whole_are_reads() -> None:
    """A ``resource_link`` names a uri without its content: the client's read of it is
    judged when it comes; text and images are no reads."""
    result = {
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "docs://secret"}},
            {"role": "user", "content": {"type": "resource_link", "uri": "file://x", "name": "x"}},
            {
                "role": "user",
                "content": {"type": "resource", "resource": {"uri": "file://a", "text": "A"}},
            },
        ]
    }
    assert [uri for uri, _ in embedded_resources(result)] == ["file://a"]
    assert embedded_resources({"messages": "nonsense"}) == []


RAW_DOCS = [sys.executable, str(HERE / "raw_docs.py")]
SECRETS = HERE / "secrets.ltl"


def _raw_session(tmp_path: Path, requests: list[dict[str, Any]]) -> tuple[dict[Any, Any], str]:
    """The proxy's answers by id (everything it sent the client, as text too) for
    ``requests`` after the handshake, against the bare docs server."""
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *requests,
    ]
    log = tmp_path / "decisions.jsonl"
    command = [sys.executable, "-m", "agentguard", "mcp-proxy", str(SECRETS), "--log", str(log)]
    out = subprocess.run(
        [*command, "--", *RAW_DOCS],
        input="".join(json.dumps(m) + "\n" for m in lines).encode(),
        capture_output=True,
        env={**os.environ, "SHOP_RECORD": str(tmp_path / "server.jsonl")},
        timeout=60,
    ).stdout.decode()
    return {a.get("id"): a for a in map(json.loads, out.splitlines())}, out


def test_a_read_handing_over_other_resources_is_judged_for_each(tmp_path: Path) -> None:
    """A read of the directory ``docs://`` answers with every file under it: the
    secret's read is refused, so the client gets the refusal, not the directory."""
    read = {"jsonrpc": "2.0", "id": 2, "method": "resources/read"}
    answers, out = _raw_session(tmp_path, [{**read, "params": {"uri": "docs://"}}])
    assert answers[2]["error"]["code"] == -32010
    assert "docs://secret" in answers[2]["error"]["message"]
    assert "sk-live" not in out


def test_a_sampling_request_embedding_a_refused_read_never_reaches_the_client(
    tmp_path: Path,
) -> None:
    """The server's ``sampling/createMessage`` embeds the secret in a tool result: it is
    answered to the server with the refusal and never reaches the client."""
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    answers, out = _raw_session(tmp_path, [{**call, "params": {"name": "ask_model"}}])
    assert answers[2]["result"]["content"][0]["text"] == "asked"
    assert "sk-live" not in out and "sampling/createMessage" not in out
    told = [json.loads(line) for line in (tmp_path / "server.jsonl").read_text().splitlines()]
    (refusal,) = [m for m in told if m.get("id") == "s1"]
    assert refusal["error"]["code"] == -32010
