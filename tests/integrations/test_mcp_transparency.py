"""The MCP gateway is transparent: against real servers nobody here wrote (from npm), the
SDK's own client sees through ``agentguard mcp-proxy`` what it sees directly: the same
``initialize``, every method's result as the server wrote it, the notifications and the
server's own requests to the client (sampling, elicitation, roots) relayed; and the
client's roots narrow the server exactly as they do directly (the server itself refuses
a read outside them)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")
import mcp_types as types  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from agentguard.trace.mcp_content import RESOURCE_READ  # noqa: E402
from tests.integrations.mcp_servers.harness import (  # noqa: E402
    SHOP,
    Run,
    Wire,
    assert_records_agree,
    free_port,
    http_proxy,
    text,
    wait_listening,
)
from tests.integrations.mcp_servers.npm import npm_server  # noqa: E402

PERMISSIVE = "spec open\nconstraint no_writes\n    severity HARD_STOP\n  := G !write_file\n"


@asynccontextmanager
async def session(
    command: Sequence[str], run: Run, wire: Wire, **callbacks: Any
) -> AsyncIterator[ClientSession]:
    """The SDK's client session to ``command`` over stdio, its messages on ``wire``."""
    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=run.env())
    with run.stderr.open("a") as errlog:
        async with stdio_client(params, errlog) as (read, write):
            read, write = wire.wrap(read, write)
            async with ClientSession(read, write, **callbacks) as client:
                await client.initialize()
                yield client


@asynccontextmanager
async def over_http_with(url: str, **callbacks: Any) -> AsyncIterator[ClientSession]:
    """The SDK's client session to the proxy over streamable HTTP, with ``callbacks``."""
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, **callbacks) as client,
    ):
        await client.initialize()
        yield client


def proxied(run: Run, server: Sequence[str]) -> list[str]:
    run.server = list(server)
    return [sys.executable, *run.proxy_args()]


def answers(wire: Wire) -> list[dict[str, Any]]:
    """The answers the client received, as JSON (results exactly as written)."""
    return [m for m in wire.messages if "method" not in m and ("result" in m or "error" in m)]


# ------------------------------------------------------------------------------ roots
@pytest.mark.parametrize("served", ["stdio", "http"])
def test_roots_narrow_the_server_through_the_proxy_as_directly(tmp_path: Path, served: str) -> None:
    """server-filesystem is given fs/ and the client's root is fs/work: directly, reading
    fs/secret is "Access denied" by the server. Through the proxy (which relays the
    server's roots/list to the client), served over stdio or streamable HTTP, it is
    denied the same way, by the server."""
    fs = tmp_path / "fs"
    (fs / "work").mkdir(parents=True)
    (fs / "secret").mkdir()
    (fs / "work" / "note.txt").write_text("hello")
    (fs / "secret" / "key.txt").write_text("TOPSECRET-42")
    spec = tmp_path / "open.ltl"
    spec.write_text(PERMISSIVE)
    server = [*npm_server("mcp-server-filesystem"), str(fs)]
    asked: list[str] = []

    async def roots(context: Any) -> types.ListRootsResult:
        del context
        asked.append("roots/list")
        return types.ListRootsResult(roots=[types.Root(uri=(fs / "work").as_uri())])

    async def scenario(command: Sequence[str] | str, run: Run) -> list[Any]:
        opened = (
            session(command, run, Wire(), list_roots_callback=roots)
            if not isinstance(command, str)
            else over_http_with(command, list_roots_callback=roots)
        )
        async with opened as client:
            with anyio.fail_after(30):  # the server applies the roots once it has them
                while "work" not in text(await client.call_tool("list_allowed_directories", {})):
                    await anyio.sleep(0.1)
            allowed = await client.call_tool("list_allowed_directories", {})
            note = await client.call_tool("read_text_file", {"path": str(fs / "work" / "note.txt")})
            key = await client.call_tool("read_text_file", {"path": str(fs / "secret" / "key.txt")})
            return [allowed, note, key]

    direct_run = Run(tmp_path / "direct", spec)
    proxy_run = Run(tmp_path / "proxy", spec)
    for r in (direct_run, proxy_run):
        r.root.mkdir()
    direct = anyio.run(scenario, server, direct_run)
    if served == "stdio":
        through = anyio.run(scenario, proxied(proxy_run, server), proxy_run)
    else:
        proxy_run.server = server
        with http_proxy(proxy_run) as url:
            through = anyio.run(scenario, url, proxy_run)
    assert asked == ["roots/list", "roots/list"]
    for results in (direct, through):
        allowed, note, key = results
        assert str(fs / "secret") not in text(allowed) and str(fs / "work") in text(allowed)
        assert text(note) == "hello"
        assert key.is_error and "Access denied" in text(key) and "TOPSECRET" not in text(key)
    assert [r.model_dump() for r in through] == [r.model_dump() for r in direct]
    (report,) = proxy_run.reports()
    assert report["tool_sequence"][-2:] == ["read_text_file", "read_text_file"]
    assert report["trace"][-1]["is_error"] is True  # refused by the server: it ran, failing


# ------------------------------------------------------------------ everything else
class Client:
    """What a client with every capability received: the server's requests it answered,
    its notifications, progress."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        self.logs: list[Any] = []
        self.notifications: list[str] = []
        self.progress: list[float] = []

    def callbacks(self) -> dict[str, Any]:
        async def sampling(context: Any, params: Any) -> types.CreateMessageResult:
            del context, params
            self.requests.append("sampling/createMessage")
            content = types.TextContent(type="text", text="sampled by the client")
            return types.CreateMessageResult(role="assistant", content=content, model="scripted")

        async def elicitation(context: Any, params: Any) -> types.ElicitResult:
            del context, params
            self.requests.append("elicitation/create")
            return types.ElicitResult(action="decline")

        async def roots(context: Any) -> types.ListRootsResult:
            del context
            self.requests.append("roots/list")
            return types.ListRootsResult(roots=[types.Root(uri=self.root.as_uri(), name="work")])

        async def logged(params: Any) -> None:
            self.logs.append(params)

        async def note(message: Any) -> None:
            method = getattr(message, "method", None)
            if isinstance(method, str):
                self.notifications.append(method)

        return {
            "sampling_callback": sampling,
            "elicitation_callback": elicitation,
            "list_roots_callback": roots,
            "logging_callback": logged,
            "message_handler": note,
        }


async def exercise(client: ClientSession, seen: Client) -> None:
    """Every kind of request and notification of the specification, once."""
    await client.list_tools()
    await client.list_resources()
    await client.list_resource_templates()
    await client.read_resource("demo://resource/static/document/features.md")
    await client.subscribe_resource("demo://resource/static/document/features.md")
    await client.unsubscribe_resource("demo://resource/static/document/features.md")
    await client.list_prompts()
    await client.get_prompt("args-prompt", {"city": "Paris", "state": "IDF"})
    ref = types.PromptReference(type="ref/prompt", name="completable-prompt")
    await client.complete(ref, {"name": "department", "value": "En"})
    await client.set_logging_level("debug")
    await client.send_ping()
    await client.call_tool("echo", {"message": "hi"})
    await client.call_tool("get-sum", {"a": 2, "b": 3})
    await client.call_tool("get-structured-content", {"location": "Chicago"})
    await client.call_tool("get-annotated-message", {"messageType": "success"})

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        del total, message
        seen.progress.append(progress)

    args = {"duration": 1, "steps": 2}
    await client.call_tool("trigger-long-running-operation", args, progress_callback=progressed)
    await client.call_tool("trigger-sampling-request", {"prompt": "hello", "maxTokens": 10})
    await client.call_tool("trigger-elicitation-request", {})
    await client.call_tool("get-roots-list", {})


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # subscribe
def test_everything_passes_through_unchanged(tmp_path: Path) -> None:
    """server-everything, driven by the same client directly and through the proxy: the
    initialize result (serverInfo with its title, every capability, the instructions)
    and every answer are the same JSON (no "isError": false added); progress, the
    server's sampling, elicitation and roots requests reach the client through it."""
    spec = tmp_path / "open.ltl"
    spec.write_text(PERMISSIVE)
    server = npm_server("mcp-server-everything")

    async def scenario(command: Sequence[str], run: Run) -> tuple[Wire, Client]:
        wire, seen = Wire(), Client(tmp_path)
        async with session(command, run, wire, **seen.callbacks()) as client:
            await exercise(client, seen)
        return wire, seen

    runs = {name: Run(tmp_path / name, spec) for name in ("direct", "proxy")}
    for r in runs.values():
        r.root.mkdir()
    direct, direct_seen = anyio.run(scenario, server, runs["direct"])
    through, seen = anyio.run(scenario, proxied(runs["proxy"], server), runs["proxy"])
    # every answer, as JSON, exactly; in any order (the client's own answers to the
    # server's requests may come before or after the server's, as the two run apart)
    assert sorted(map(json.dumps, answers(through))) == sorted(map(json.dumps, answers(direct)))
    init = answers(through)[0]["result"]
    assert init["serverInfo"]["title"] == "Everything Reference Server"
    assert set(init["capabilities"]) >= {"logging", "prompts", "resources", "tools", "completions"}
    assert seen.requests == direct_seen.requests
    assert set(seen.requests) == {"sampling/createMessage", "elicitation/create", "roots/list"}
    assert seen.progress and seen.progress == direct_seen.progress
    (report,) = runs["proxy"].reports()
    assert report["tool_sequence"][0] == RESOURCE_READ
    assert report["trace"][0]["arguments"] == {"uri": "demo://resource/static/document/features.md"}


# ------------------------------------------------------------------ upstream over HTTP
@pytest.mark.parametrize("transport", ["http", "sse"])
def test_a_remote_server_is_fronted_over_http(tmp_path: Path, transport: str) -> None:
    """The shop server runs on its own over streamable HTTP (or SSE); the proxy fronts it
    by URL (`--url`): refused calls never reach it, allowed ones return its results, and
    the run's records agree."""
    run = Run(tmp_path)
    port = free_port()
    kind = "streamable-http" if transport == "http" else "sse"
    url = f"http://127.0.0.1:{port}/mcp" if transport == "http" else f"http://127.0.0.1:{port}/sse"
    with (
        run.stderr.open("ab") as err,
        subprocess.Popen(
            [*SHOP, kind, str(port)], env=run.env(), stdout=subprocess.DEVNULL, stderr=err
        ) as server,
    ):
        try:
            wait_listening(port, server, run.stderr)
            run.server = []
            params = StdioServerParameters(
                command=sys.executable,
                args=[*run.proxy_args("--url", url, "--transport", transport)][:-1],
                env=run.env(),
            )

            async def scenario() -> list[Any]:
                with run.stderr.open("a") as errlog:
                    async with (
                        stdio_client(params, errlog) as (read, write),
                        ClientSession(read, write) as client,
                    ):
                        await client.initialize()
                        return [
                            await client.call_tool("issue_refund", {"order_id": "A1", "amount": 5}),
                            await client.call_tool("lookup_order", {"order_id": "A1"}),
                        ]

            refused, looked_up = anyio.run(scenario)
        finally:
            server.terminate()
    assert refused.is_error and "lookup_first" in text(refused)
    assert json.loads(text(looked_up))["verified"] is True
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order"]
    (report,) = run.reports()
    assert report["tool_sequence"] == ["lookup_order"]
    assert_records_agree(run, report)


def test_the_inspector_form_without_the_double_dash_works(tmp_path: Path) -> None:
    """The MCP Inspector drops the first `--`: `mcp-proxy SPEC --log F python shop.py`
    still starts the shop server (and a server option after its program stays its own)."""
    run = Run(tmp_path)
    args = [a for a in run.proxy_args() if a != "--"]
    params = StdioServerParameters(command=sys.executable, args=args, env=run.env())

    async def scenario() -> Any:
        with run.stderr.open("a") as errlog:
            async with (
                stdio_client(params, errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                return await client.call_tool("lookup_order", {"order_id": "A1"})

    assert not anyio.run(scenario).is_error
    assert [c["tool"] for c in run.reached_server()] == ["lookup_order"]


def _raw_exchange(command: Sequence[str], env: dict[str, str], lines: list[bytes]) -> list[bytes]:
    """The lines a stdio server (or the proxy) writes for ``lines`` (one answer awaited
    for each request), as bytes."""
    proc = subprocess.Popen(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    out: list[bytes] = []
    try:
        for line in lines:
            proc.stdin.write(line + b"\n")
            proc.stdin.flush()
            if b'"id"' in line:
                while True:  # the answer (notifications the server sends meanwhile too)
                    got = proc.stdout.readline()
                    assert got, "the process ended before it answered"
                    out.append(got)
                    if json.loads(got).get("id") == json.loads(line)["id"]:
                        break
    finally:
        proc.stdin.close()
        proc.wait(30)
        proc.stdout.close()
    return out


def test_the_servers_answers_reach_the_client_byte_for_byte(tmp_path: Path) -> None:
    """Over stdio, the lines server-everything writes (initialize's answer, a tool's
    result, a listing) reach the client through the proxy as the same bytes."""
    spec = tmp_path / "open.ltl"
    spec.write_text(PERMISSIVE)
    server = npm_server("mcp-server-everything")
    run = Run(tmp_path / "proxy", spec)
    run.root.mkdir()
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "get-sum", "arguments": {"a": 2, "b": 3.5}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "h\u00e9"}},
        },
    ]
    lines = [json.dumps(r).encode() for r in requests]
    direct = _raw_exchange(server, run.env(), lines)
    through = _raw_exchange(proxied(run, server), run.env(), lines)
    answered = [line for line in through if b'"id"' in line]
    assert answered == [line for line in direct if b'"id"' in line]
    assert len(answered) == 4
