"""What the MCP gateway's tests share: a proxy run's files, the proxy as a subprocess
(stdio or streamable HTTP) driven by the SDK's own client, the JSON-RPC messages the
client really exchanged, and the two invariants checked on every record the run left.

The invariants: the trace is what ran (the server's own record of the calls it ran is the
report's trace), and online = offline (the report's compliance equals ``verify_trace`` of
the trace loaded back from the report line, from the run's decision log and from the
client's JSON-RPC message log).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio

from agentguard.enforcement.audit import verify_lines
from agentguard.scoring import verify_trace
from agentguard.trace.loaders import iter_trace_file

HERE = Path(__file__).parent
SHOP = [sys.executable, str(HERE / "shop.py")]
OPS = [sys.executable, str(HERE / "ops.py")]


class Run:
    """One proxy run's files: what reached the server, the decision log, the reports."""

    def __init__(
        self, root: Path, spec: Path = HERE / "shop.ltl", server: Sequence[str] = SHOP
    ) -> None:
        self.root = root
        self.spec = spec
        self.server = list(server)
        self.record = root / "server_calls.jsonl"
        self.log = root / "decisions.jsonl"
        self.report = root / "reports.jsonl"
        self.stderr = root / "proxy.stderr"

    def env(self) -> dict[str, str]:
        return {**os.environ, "SHOP_RECORD": str(self.record)}

    def proxy_args(self, *extra: str) -> list[str]:
        return [
            "-m",
            "agentguard",
            "mcp-proxy",
            str(self.spec),
            "--log",
            str(self.log),
            "--report",
            str(self.report),
            *extra,
            "--",
            *self.server,
        ]

    def reached_server(self) -> list[dict[str, Any]]:
        """The calls the server ran, with the arguments it acted on."""
        return _json_lines(self.record)

    def reports(self) -> list[dict[str, Any]]:
        return _json_lines(self.report)

    def events(self) -> list[dict[str, Any]]:
        return _json_lines(self.log)


def _json_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Wire:
    """The JSON-RPC messages a client exchanged, in order, as they crossed its streams."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def note(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if message is not None:
            self.messages.append(
                json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))
            )

    def wrap(self, read: Any, write: Any) -> tuple[Any, Any]:
        return _Read(read, self), _Write(write, self)

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(m) + "\n" for m in self.messages))
        return path


class _Stream:
    def __init__(self, inner: Any, wire: Wire) -> None:
        self.inner, self.wire = inner, wire

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> Any:
        await self.inner.__aenter__()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        result: bool | None = await self.inner.__aexit__(kind, exc, tb)
        return result


class _Read(_Stream):
    async def receive(self) -> Any:
        item = await self.inner.receive()
        self.wire.note(item)
        return item

    def __aiter__(self) -> _Read:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _Write(_Stream):
    async def send(self, item: Any) -> None:
        self.wire.note(item)
        await self.inner.send(item)


@asynccontextmanager
async def through_proxy(
    run: Run, *extra: str, wire: Wire | None = None, message_handler: Any = None
) -> AsyncIterator[Any]:
    """The SDK's client session to ``agentguard mcp-proxy`` over stdio."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=run.proxy_args(*extra), env=run.env()
    )
    with run.stderr.open("a") as errlog:
        async with stdio_client(params, errlog) as (read, write):
            if wire is not None:
                read, write = wire.wrap(read, write)
            async with ClientSession(read, write, message_handler=message_handler) as session:
                await session.initialize()
                yield session


@asynccontextmanager
async def over_http(
    url: str,
    *,
    wire: Wire | None = None,
    message_handler: Any = None,
    session_ids: list[str] | None = None,
) -> AsyncIterator[Any]:
    """The SDK's client session (the handshake protocol) to the proxy over HTTP;
    ``session_ids`` receives the ``Mcp-Session-Id`` the server gave it."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def note(response: Any) -> None:
        found = response.headers.get("mcp-session-id")
        if found and session_ids is not None and found not in session_ids:
            session_ids.append(found)

    http = create_mcp_http_client()
    http.event_hooks["response"].append(note)
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        if wire is not None:
            read, write = wire.wrap(read, write)
        async with ClientSession(read, write, message_handler=message_handler) as session:
            await session.initialize()
            yield session


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def http_proxy(run: Run, *extra: str) -> Iterator[str]:
    """``agentguard mcp-proxy --http`` as a subprocess; its URL. Stopped with SIGTERM on
    exit, after which it must have exited cleanly (every session's report written)."""
    port = free_port()
    command = [sys.executable, *run.proxy_args("--http", str(port), *extra)]
    with (
        run.stderr.open("ab") as err,
        subprocess.Popen(command, env=run.env(), stdout=subprocess.DEVNULL, stderr=err) as proc,
    ):
        try:
            wait_listening(port, proc, run.stderr)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    assert proc.returncode == 0, run.stderr.read_text()


def wait_listening(port: int, proc: subprocess.Popen[bytes], errors: Path) -> None:
    """Return once the proxy at ``port`` accepts connections (fail if it exited)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the proxy exited early: {errors.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the proxy did not start listening")


def wait_until(found: Any, seconds: float = 30.0) -> Any:
    """Poll ``found()`` until it is truthy (a report written after a session ended)."""
    deadline = time.monotonic() + seconds
    while True:
        value = found()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


async def settled(found: Any, seconds: float = 30.0) -> Any:
    """:func:`wait_until` inside a client's event loop (it keeps running meanwhile)."""
    with anyio.move_on_after(seconds):
        while not found():
            await anyio.sleep(0.05)
    return found()


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def assert_records_agree(
    run: Run, report: dict[str, Any], wire: Wire | None = None, spec: Path | None = None
) -> None:
    """Online = offline: the session's report line, its part of the decision log and the
    client's JSON-RPC messages (when recorded) each load back into the calls the report
    holds (names and the arguments judged), and ``verify_trace`` of each equals the
    report's compliance; and the decision log's chains verify, every run finished."""
    spec = spec or run.spec
    chain = verify_lines(run.log.read_text().splitlines(), require_finish=True)
    assert chain.ok, chain
    own = [e for e in run.events() if e.get("run_id") == report["run_id"]]
    records = {
        "report": _write(run.root / f"report-{report['run_id']}.jsonl", [report]),
        "log": _write(run.root / f"log-{report['run_id']}.jsonl", own),
    }
    if wire is not None:
        records["wire"] = wire.write(run.root / f"wire-{report['run_id']}.jsonl")
    for name, path in records.items():
        (loaded,) = list(iter_trace_file(path))
        assert loaded.trace is not None, name
        assert [c.name for c in loaded.trace.calls] == report["tool_sequence"], name
        judged = [c["arguments"] for c in report["trace"]]
        assert [dict(c.args) for c in loaded.trace.calls] == judged, name
        offline = verify_trace(loaded.trace, str(spec)).to_dict()
        assert offline == report["compliance"], name


def assert_trace_is_what_ran(run: Run, report: dict[str, Any]) -> None:
    """The report's trace is the calls the server ran, with the arguments it acted on."""
    ran = [(c["tool"], c["args"]) for c in run.reached_server()]
    traced = [(c["tool_name"], c["arguments"]) for c in report["trace"]]
    assert traced == ran


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def drive(
    run: Run,
    transport: str,
    scenario: Any,
    *extra: str,
    wire: Wire | None = None,
    message_handler: Any = None,
) -> Any:
    """``scenario(client)`` through the proxy over ``transport`` ("stdio" or "http"), the
    proxy stopped afterwards (so every session's report is written); its return value."""

    async def stdio() -> Any:
        async with through_proxy(run, *extra, wire=wire, message_handler=message_handler) as client:
            return await scenario(client)

    if transport == "stdio":
        return anyio.run(stdio)
    with http_proxy(run, *extra) as url:

        async def http() -> Any:
            async with over_http(url, wire=wire, message_handler=message_handler) as client:
                return await scenario(client)

        return anyio.run(http)
