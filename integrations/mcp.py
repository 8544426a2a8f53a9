"""An MCP gateway: the firewall in front of any MCP server (official ``mcp`` SDK 2.x).

:class:`McpGateway` relays MCP clients, over stdio (:func:`serve_stdio`) or streamable
HTTP (:func:`serve_http`), to the server given by a command (started over stdio) or a
URL (streamable HTTP or SSE). Each client session gets a session of its own with the
server, and every message passes verbatim except the requests a spec judges
(:mod:`._mcp_relay`): so ``initialize``, resources, prompts, completion, logging, the
notifications and the server's own requests to the client (sampling, elicitation,
``roots/list``) pass as they were sent, and the server sees this client's roots, never
more. Judged (:mod:`._mcp_judged`):

* every ``tools/call``, with the arguments the server will act on: the client's
  arguments with the tool's ``inputSchema`` defaults filled in; text the server would
  convert (``"9000"`` for a number) is refused, never judged as text
  (:mod:`agentguard.trace.mcp_arguments`). The tools' schemas are ``tool`` declarations
  (:mod:`._json_schema`), learned from every listing, a tool added mid-session included
  (:class:`~._mcp_upstream.ToolCatalog`);
* every ``resources/read``, as the call ``resources/read(uri=...)``
  (:data:`~agentguard.trace.mcp_content.RESOURCE_READ`);
* a refused call never reaches the server; a result's content is unwrapped
  (:mod:`agentguard.trace.mcp_content`) before the monitor sees it, and the client gets
  the result as the server wrote it;
* one run per client session, ended when that session ends (:mod:`._mcp_serving`).

Every firewall interaction goes through :class:`~._mcp_session.GatewaySession`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.offering import Offer, check_offer
from agentguard.enforcement.report import FirewallReport
from agentguard.errors import MissingExtraError
from agentguard.language import ast as A
from agentguard.scoring.inputs import coerce_spec
from agentguard.trace.mcp_content import RESOURCE_READ

from ._json_schema import declarations
from ._mcp_relay import Relay
from ._mcp_serving import (
    PER_REQUEST,
    REFUSE,
    STATELESS_POLICIES,
    STDIO_SESSION,
    serve_http,
    serve_stdio,
)
from ._mcp_session import GatewaySession, Scrubber
from ._mcp_upstream import HTTP, SSE, STDIO, TRANSPORTS, GatewayError, UpstreamTarget

try:
    import anyio
    import mcp_types as types
    from mcp import ClientSession
    from mcp.shared.memory import create_client_server_memory_streams
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

log = logging.getLogger("agentguard.mcp")

RESOURCE_SCHEMA: Final = {
    "type": "object",
    "properties": {"uri": {"type": "string"}},
    "required": ["uri"],
    "additionalProperties": False,
}
"""The arguments of a ``resources/read`` event: the resource's ``uri``."""


# ---------------------------------------------------------------- the gateway
@dataclass
class McpGateway:
    """The firewall in front of the MCP server started by ``command`` (stdio), or at
    ``url`` over ``transport`` (``"http"``, ``"sse"``); see the module doc.

    ``report_path`` receives one JSON line per finished run (``FirewallReport.to_dict()``,
    redacted as the log is when ``firewall_kwargs`` holds a ``redact``; readable by
    ``agentguard check``); ``log_path`` and the other ``firewall_kwargs`` go to each run's
    :class:`Firewall`. ``schema_checks=False`` keeps the server's input schemas out of the
    firewall (the arguments are still read by them: defaults, types). ``stateless``: how
    HTTP requests that belong to no MCP session are served, ``"refuse"`` (the default) or
    ``"per-request"`` (each a run of its own); see docs/mcp.md. ``offer`` (``"narrow"``,
    ``"annotate"``): each client's ``tools/list`` says what its run may run now, and the
    client is told when that changes (:mod:`._mcp_offer`); None (the default) changes
    nothing the client sees.
    """

    spec: A.Spec
    command: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: str | Path | None = None
    report_path: Path | None = None
    schema_checks: bool = True
    firewall_kwargs: dict[str, Any] = field(default_factory=dict)
    stateless: str = REFUSE
    url: str | None = None
    transport: str | None = None
    offer: Offer | None = None  # tell each client what may run now (docs/firewall.md)
    sessions: dict[str, GatewaySession] = field(default_factory=dict, init=False)
    reports: list[FirewallReport] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        # a path or spec text is read by the one rule of agentguard.scoring.inputs
        self.spec = coerce_spec(self.spec, self.firewall_kwargs.get("registry"))
        if self.stateless not in STATELESS_POLICIES:
            raise GatewayError(
                f"stateless must be one of {', '.join(STATELESS_POLICIES)}, not {self.stateless!r}"
            )
        self.offer = check_offer(self.offer)
        if self.command and self.url:
            raise GatewayError("give the MCP server as a command or as a URL, not both")
        self.target = UpstreamTarget(
            tuple(self.command),
            self.url,
            self.transport or (HTTP if self.url else STDIO),
            # the server inherits the proxy's environment, as a command run by a shell does
            env=dict(os.environ if self.env is None else self.env),
            cwd=self.cwd,
        )
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        self._ended: dict[str, GatewaySession] = {}  # runs of keys that may be asked again
        self._scrub = Scrubber(self.firewall_kwargs.get("redact"))

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[McpGateway]:
        """The gateway while it serves; on exit every run still open is finished."""
        try:
            yield self
        finally:
            self.finish_all()

    @asynccontextmanager
    async def in_memory(
        self, key: str = STDIO_SESSION, *, remember: bool = True
    ) -> AsyncIterator[tuple[Any, Any]]:
        """A client's streams to the gateway in this process (an MCP ``Transport``: give
        it to the SDK's ``Client``), relayed as a client session of run ``key``."""
        async with create_client_server_memory_streams() as (client, served):
            relay = Relay(self, key, served, self.target, remember=remember)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(relay.serve)
                try:
                    yield client
                finally:
                    await client[1].aclose()  # the client's session ends: so does the relay

    @asynccontextmanager
    async def client(self, key: str) -> AsyncIterator[ClientSession]:
        """An initialized SDK client session through the gateway, as run ``key``."""
        async with (
            self.in_memory(key, remember=False) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session

    def declare(self, run: GatewaySession, tools: Sequence[types.Tool]) -> None:
        """Declare new or changed tools to a run (their schemas' checks)."""
        if self.schema_checks and tools:
            run.firewall.declare_tools(declarations((t.name, t.input_schema) for t in tools))

    # runs ------------------------------------------------------------------------
    def session(self, key: str, tools: Sequence[types.Tool] = ()) -> GatewaySession:
        """The run of client session ``key`` (started on first use). Once ended, the
        ended run: its firewall refuses every call and logs it, never a fresh start."""
        with self._lock:
            found = self.sessions.get(key) or self._ended.get(key)
        return found if found is not None else self.open_run(key, tools, remember=True)

    def open_run(
        self, key: str, tools: Sequence[types.Tool] = (), *, remember: bool = False
    ) -> GatewaySession:
        """The run of ``key``, opened with the server's ``tools`` unless it exists
        (``remember``: ``session(key)`` finds it once ended)."""
        with self._lock:
            found = self.sessions.get(key) or (self._ended.get(key) if remember else None)
        if found is not None:
            return found
        listed: dict[str, Any] = {t.name: t.input_schema for t in tools}
        if listed:  # a server's tools are declared: so are its reads (else nothing is)
            listed[RESOURCE_READ] = RESOURCE_SCHEMA
        options = {"agent_tools": listed, "keep_trace": True, **self.firewall_kwargs}
        firewall = Firewall(self.spec, **options)
        if self.schema_checks:
            firewall.declare_tools(declarations(listed.items()))
        run = GatewaySession(key, firewall, self._scrub)
        with self._lock:
            found = self.sessions.get(key) or self._ended.get(key)
            if found is not None:  # another thread opened it meanwhile
                return found
            self.sessions[key] = run
            if remember:
                self._ended[key] = run  # found by session(key) after it ends
        log.info("agentguard: session %s started (run %s)", key, firewall.run_id)
        return run

    def end_session(self, key: str) -> FirewallReport | None:
        """Finish the run of client session ``key``: deferred constraints, the log, the
        report line. A run is finished once; later calls of it are refused."""
        with self._lock:
            session = self.sessions.pop(key, None)
        if session is None:
            return None
        report = session.finish()
        self.reports.append(report)
        if self.report_path is not None:
            line = json.dumps(self._scrub.report(report), default=str)
            with self._writing:  # runs end in worker threads: one whole line at a time
                self.report_path.parent.mkdir(parents=True, exist_ok=True)
                with self.report_path.open("a", encoding="utf-8") as out:
                    out.write(line + "\n")
        log.info(
            "agentguard: session %s finished: compliance %.3f (%s), %d blocked",
            key,
            report.compliance.score,
            report.compliance.label,
            len(report.blocked),
        )
        return report

    def finish_all(self) -> list[FirewallReport]:
        """Finish every open run (the proxy is stopping)."""
        done = [self.end_session(key) for key in list(self.sessions)]
        return [r for r in done if r is not None]


__all__ = [
    "HTTP",
    "PER_REQUEST",
    "REFUSE",
    "SSE",
    "STATELESS_POLICIES",
    "STDIO",
    "STDIO_SESSION",
    "TRANSPORTS",
    "GatewayError",
    "McpGateway",
    "serve_http",
    "serve_stdio",
]
