"""An MCP gateway: the firewall in front of any MCP server (official ``mcp`` SDK 2.x).

:class:`McpGateway` starts the server given by a command (stdio), lists its tools once
(their input schemas become ``tool`` declarations for the firewall's schema checks, see
:mod:`agentguard.integrations._json_schema`) and serves the same tools to MCP clients,
over stdio (:func:`serve_stdio`) or streamable HTTP on a local port
(:func:`serve_http`):

* ``tools/list`` is forwarded unchanged;
* every ``tools/call`` is proposed to the client session's firewall before it is
  forwarded; a refused call never reaches the server and is answered with an MCP tool
  error (``isError``) whose text names the constraint and its repair hint, the text the
  other adapters give a model;
* a result's content blocks are unwrapped (one text block, JSON decoded; see
  :mod:`agentguard.trace.mcp_content`) before the monitor sees them; the client gets
  the result unchanged;
* a tool error (``isError``) is a call that ran, with its error on it; so is a call the
  server answers with a JSON-RPC error of a code other than those of a request refused as
  it was read, and a call during which the server dies (its effects may have happened;
  after that every call is refused and withdrawn). A call refused as it was read
  (invalid params, method not found: :func:`~agentguard.trace.mcp_content.rejected_request`)
  never ran and is withdrawn. JSON-RPC errors are forwarded to the client as they are;
* a call the client cancels (``notifications/cancelled``) while the server runs it was
  sent, so it may have run: it enters the trace with the error
  :data:`~agentguard.trace.mcp_content.CANCELLED_TEXT` (the SDK passes the cancellation
  on to the server);
* one firewall session per client session (the stdio connection; an HTTP
  ``Mcp-Session-Id``; requests without one share a session); a HARD_STOP ends that
  session's calls (each later one is refused); its decision log and ``finish``
  report are written when the client disconnects (stdio EOF, HTTP ``DELETE``) or the
  proxy is stopped (SIGINT / SIGTERM).

Every firewall interaction goes through :class:`_Session`, the adapter's one seam.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from agentguard.enforcement.decision import Action, Decision
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.report import FirewallReport
from agentguard.errors import AgentGuardError, MissingExtraError
from agentguard.guard import blocked_text
from agentguard.language import ast as A
from agentguard.scoring.inputs import coerce_spec
from agentguard.trace.mcp_content import (
    CANCELLED_TEXT,
    jsonrpc_error_text,
    rejected_request,
    unwrap_call_tool_result,
)
from agentguard.trace.refusal import refusal_text

from ._json_schema import declarations, with_declarations
from ._mcp_serving import (
    STATELESS_SESSION,
    STDIO_SESSION,
    serve_http,
    serve_stdio,
    session_key,
)

try:
    import anyio
    import anyio.lowlevel
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.server.lowlevel.server import Server
    from mcp.shared.exceptions import MCPError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

log = logging.getLogger("agentguard.mcp")

_LIST_PAGES: Final = 100  # a server whose listing never ends cannot hang the start


class GatewayError(AgentGuardError, RuntimeError):
    """The upstream MCP server could not be started or listed."""


# ---------------------------------------------------------------- the seam
class _Session:
    """One client session's firewall: propose, start, then complete or withdraw; finish.

    The only place the gateway talks to the firewall. ``start`` may wait for calls it
    relied on to finish, so it runs in a worker thread, never blocking the event loop
    those calls finish on.
    """

    def __init__(self, key: str, firewall: Firewall) -> None:
        self.key = key
        self.firewall = firewall
        self.report: FirewallReport | None = None

    def propose(self, name: str, args: Mapping[str, Any], call_id: str | None) -> Decision:
        return self.firewall.propose(name, args, tool_call_id=call_id)

    async def start(self, decision: Decision) -> Decision:
        """The decision to act on now that the call is about to be forwarded."""
        started: Decision = await anyio.to_thread.run_sync(self.firewall.start, decision)
        return started

    def ran(self, decision: Decision, result: Any, *, error: str | None = None) -> None:
        if self.report is not None:  # the client left while the call ran: the run is over
            log.warning("agentguard: %s finished after its session ended", decision.tool)
            return
        self.firewall.complete(decision, result, error=error)

    def withdrawn(self, decision: Decision, reason: str, *, started: bool = False) -> None:
        if self.report is None:
            self.firewall.withdraw(decision, reason, started=started)

    @property
    def stopped(self) -> bool:
        return self.firewall.stopped

    def finish(self) -> FirewallReport:
        if self.report is None:
            self.report = self.firewall.finish()
        return self.report


# ---------------------------------------------------------------- the gateway
@dataclass
class McpGateway:
    """The firewall in front of the MCP server started by ``command`` (see the module doc).

    ``report_path`` receives one JSON line per finished session
    (``FirewallReport.to_dict()``, readable by ``agentguard check``); ``log_path`` and
    the other ``firewall_kwargs`` go to each session's :class:`Firewall`.
    ``schema_checks=False`` keeps the server's input schemas out of the firewall.
    """

    spec: A.Spec
    command: Sequence[str]
    env: Mapping[str, str] | None = None
    cwd: str | Path | None = None
    report_path: Path | None = None
    schema_checks: bool = True
    firewall_kwargs: dict[str, Any] = field(default_factory=dict)
    sessions: dict[str, _Session] = field(default_factory=dict, init=False)
    reports: list[FirewallReport] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        # a path or spec text is read by the one rule of agentguard.scoring.inputs
        self.spec = coerce_spec(self.spec, self.firewall_kwargs.get("registry"))
        if not self.command:
            raise GatewayError("no MCP server command given (agentguard mcp-proxy SPEC -- COMMAND)")
        self._upstream: ClientSession | None = None
        self._init: types.InitializeResult | None = None
        self._tools: list[types.Tool] = []
        self._down: str | None = None  # why the server is gone, once it is
        self._lock = threading.Lock()

    # upstream -----------------------------------------------------------------------
    @asynccontextmanager
    async def connected(self) -> AsyncIterator[McpGateway]:
        """Start the server, initialize, list its tools; on exit every session is finished."""
        params = StdioServerParameters(
            command=self.command[0],
            args=list(self.command[1:]),
            # the server inherits the proxy's environment, as a command run by a shell does
            env=dict(os.environ if self.env is None else self.env),
            cwd=self.cwd,
        )
        async with AsyncExitStack() as stack:
            try:
                read, write = await stack.enter_async_context(stdio_client(params, sys.stderr))
                upstream = await stack.enter_async_context(ClientSession(read, write))
                self._init = await upstream.initialize()
                self._tools = await _list_all(upstream)
            except (OSError, MCPError) as exc:
                raise GatewayError(
                    f"cannot start the MCP server {' '.join(self.command)!r}: {exc}"
                ) from exc
            self._upstream = upstream
            try:
                yield self
            finally:
                self._upstream = None
                self.finish_all()

    @property
    def tools(self) -> tuple[types.Tool, ...]:
        """The server's tools, as listed when the gateway started."""
        return tuple(self._tools)

    def firewall_spec(self) -> A.Spec:
        """The spec with the server's input schemas added as tool declarations."""
        if not self.schema_checks:
            return self.spec
        found = declarations((t.name, t.input_schema) for t in self._tools)
        return with_declarations(self.spec, found)

    # sessions ------------------------------------------------------------------------
    def session(self, key: str) -> _Session:
        """The firewall session of client session ``key`` (started on first use)."""
        with self._lock:
            found = self.sessions.get(key)
            if found is None:
                listed = {t.name: t.input_schema for t in self._tools}
                options = {"agent_tools": listed, "keep_trace": True, **self.firewall_kwargs}
                firewall = Firewall(self.firewall_spec(), **options)
                found = self.sessions[key] = _Session(key, firewall)
                log.info("agentguard: session %s started (run %s)", key, firewall.run_id)
            return found

    def end_session(self, key: str) -> FirewallReport | None:
        """Finish client session ``key``: deferred constraints, the log, the report line."""
        with self._lock:
            session = self.sessions.pop(key, None)
        if session is None:
            return None
        report = session.finish()
        self.reports.append(report)
        if self.report_path is not None:
            self.report_path.parent.mkdir(parents=True, exist_ok=True)
            with self.report_path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(report.to_dict(), default=str) + "\n")
        log.info(
            "agentguard: session %s finished: compliance %.3f (%s), %d blocked",
            key,
            report.compliance.score,
            report.compliance.label,
            len(report.blocked),
        )
        return report

    def finish_all(self) -> list[FirewallReport]:
        """Finish every open session (the proxy is stopping)."""
        done = [self.end_session(key) for key in list(self.sessions)]
        return [r for r in done if r is not None]

    # the served side -------------------------------------------------------------------
    def server(self) -> Server[Any]:
        """The MCP server the clients talk to (the upstream's name, version, instructions)."""
        info = self._init.server_info if self._init is not None else None
        return Server(
            info.name if info is not None else "agentguard-mcp-proxy",
            version=info.version if info is not None else "",
            instructions=self._init.instructions if self._init is not None else None,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        del ctx
        upstream = self._require_upstream()
        return await upstream.list_tools(params=params)

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        session = self.session(session_key(ctx))
        name, args = params.name, dict(params.arguments or {})
        request_id = getattr(ctx, "request_id", None)
        decision = session.propose(name, args, None if request_id is None else str(request_id))
        if decision.executes and (self._down is not None or self._upstream is None):
            reason = f"the MCP server is not running ({self._down or 'not started'})"
            session.withdrawn(decision, reason)
            return _error_result(refusal_text(f"agentguard did not run {name}: {reason}"))
        if decision.executes:
            decision = await session.start(decision)  # a refusal here counts as withdrawn
        if not decision.executes:
            if decision.action is Action.STOP:
                log.warning("agentguard: session %s stopped at %s", session.key, name)
            return refusal(decision)
        if self._upstream is None:  # the gateway stopped while the call waited to start
            return self._failed(session, decision, "the gateway is stopping", down=True)
        return await self._forward(session, decision, self._upstream)

    async def _forward(
        self, session: _Session, decision: Decision, upstream: ClientSession
    ) -> types.CallToolResult:
        name = decision.tool
        try:  # a cancellation that came while the call waited to start: never sent
            await anyio.lowlevel.checkpoint_if_cancelled()
        except BaseException:
            session.withdrawn(
                decision, "the client cancelled the request before it was sent", started=True
            )
            raise
        try:
            result = await upstream.call_tool(name, dict(decision.args))
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                return self._failed(session, decision, str(exc), down=True)
            # a JSON-RPC error, forwarded to the client as is. A code saying the request
            # was refused as it was read (invalid params...): the tool never ran, the
            # call is withdrawn; any other may have come from a tool that had begun: it
            # ran, with the error on it. The MCP trace reader reads the code the same way.
            if rejected_request(exc.code):
                reason = f"the server refused the request (JSON-RPC error {exc.code}: {exc})"
                session.withdrawn(decision, reason, started=True)
                log.warning("agentguard: %s: %s", name, reason)
            else:
                text = jsonrpc_error_text(exc.code, exc.message)
                session.ran(decision, text, error=text)
                log.warning("agentguard: %s: %s", name, text)
            raise
        except Exception as exc:  # noqa: BLE001 - the call was sent; whatever failed, it may have run
            return self._failed(session, decision, f"{type(exc).__name__}: {exc}", down=False)
        except BaseException:  # the client cancelled the request: it was sent, it may have run
            session.ran(decision, CANCELLED_TEXT, error=CANCELLED_TEXT)
            log.warning("agentguard: %s: %s", name, CANCELLED_TEXT)
            raise
        value, error = unwrap_call_tool_result(
            result.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        session.ran(decision, value, error=_text(value) if error else None)
        return result

    def _failed(
        self, session: _Session, decision: Decision, reason: str, *, down: bool
    ) -> types.CallToolResult:
        """The forwarded call failed without a result; ``down``: the server is gone."""
        if down:
            self._down = reason
        text = f"agentguard: the MCP server failed while running {decision.tool}: {reason}"
        log.error("%s", text)
        session.ran(decision, text, error=text)  # it may have run before the server died
        return _error_result(text)

    def _require_upstream(self) -> ClientSession:
        if self._upstream is None or self._down is not None:
            raise MCPError(
                types.INTERNAL_ERROR,
                f"agentguard: the MCP server is not running ({self._down or 'not started'})",
            )
        return self._upstream


async def _list_all(upstream: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_LIST_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await upstream.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def refusal(decision: Decision) -> types.CallToolResult:
    """The MCP tool error a refused call is answered with (the model reads its text)."""
    return _error_result(blocked_text(decision))


def _error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


__all__ = [
    "STATELESS_SESSION",
    "STDIO_SESSION",
    "GatewayError",
    "McpGateway",
    "refusal",
    "serve_http",
    "serve_stdio",
    "session_key",
]
