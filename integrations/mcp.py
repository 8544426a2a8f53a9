"""An MCP gateway: the firewall in front of any MCP server (official ``mcp`` SDK 2.x).

:class:`McpGateway` starts the server given by a command (stdio), lists its tools (their
input schemas become ``tool`` declarations for the firewall's schema checks, see
:mod:`agentguard.integrations._json_schema`) and serves the same tools to MCP clients,
over stdio (:func:`serve_stdio`) or streamable HTTP on a local port (:func:`serve_http`):

* ``tools/list`` is forwarded as the server answers it; the gateway learns the tools
  from it too (:class:`~agentguard.integrations._mcp_upstream.ToolCatalog`). When the
  server says its tools changed (``notifications/tools/list_changed``), the gateway lists
  them again, declares the new ones to every open run and passes the notification on;
* every ``tools/call`` is judged with the arguments the server will act on: the client's
  arguments with the tool's ``inputSchema`` defaults filled in; text the server would
  convert (``"9000"`` for a number) is refused, never judged as text
  (:mod:`agentguard.trace.mcp_arguments`). The request is forwarded as the client sent
  it. A refused call never reaches the server and is answered with an MCP tool error
  (``isError``) whose text names the constraint and its repair hint;
* a result's content blocks are unwrapped (:mod:`agentguard.trace.mcp_content`) before
  the monitor sees them; the client gets the result unchanged;
* a tool error (``isError``) is a call that ran, with its error on it; so is a JSON-RPC
  error of a code other than those of a request refused as it was read
  (:func:`~agentguard.trace.mcp_content.rejected_request`: withdrawn), a call the client
  cancelled after it was sent, and a call during which the server died (it may have read
  it). A call whose request never reached a live server (it had exited; the transport
  never took the request) did not run: it is withdrawn, the log saying why;
* one run per MCP session, ended when that session ends (:mod:`._mcp_serving`).

Every firewall interaction goes through :class:`~._mcp_session.GatewaySession`.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from agentguard.enforcement.agent_tools import ReportedTools, check_at_guard
from agentguard.enforcement.decision import Action, Decision
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.report import FirewallReport
from agentguard.errors import MissingExtraError
from agentguard.guard import blocked_text
from agentguard.language import ast as A
from agentguard.scoring.inputs import coerce_spec
from agentguard.trace.final_tool import FINAL_TOOLS
from agentguard.trace.mcp_arguments import server_arguments
from agentguard.trace.mcp_content import (
    CANCELLED_TEXT,
    jsonrpc_error_text,
    rejected_request,
    unwrap_call_tool_result,
)
from agentguard.trace.refusal import refusal_text

from ._json_schema import declarations
from ._mcp_serving import (
    PER_REQUEST,
    REFUSE,
    STATELESS_POLICIES,
    STDIO_SESSION,
    client_run,
    gateway_server,
    listen,
    serve_http,
    serve_stdio,
)
from ._mcp_session import GatewaySession, Scrubber
from ._mcp_streams import Delivery, call
from ._mcp_upstream import GatewayError, Upstream

try:
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters
    from mcp.server.lowlevel.server import Server
    from mcp.shared.exceptions import MCPError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

log = logging.getLogger("agentguard.mcp")

_CLOSED: Final = "the connection to the MCP server closed"


# ---------------------------------------------------------------- the gateway
@dataclass
class McpGateway:
    """The firewall in front of the MCP server started by ``command`` (see the module doc).

    ``report_path`` receives one JSON line per finished run (``FirewallReport.to_dict()``,
    redacted as the log is when ``firewall_kwargs`` holds a ``redact``; readable by
    ``agentguard check``); ``log_path`` and the other ``firewall_kwargs`` go to each run's
    :class:`Firewall`. ``schema_checks=False`` keeps the server's input schemas out of the
    firewall (the arguments are still read by them: defaults, types). ``stateless``: how
    HTTP requests that belong to no MCP session are served, ``"refuse"`` (the default) or
    ``"per-request"`` (each a run of its own); see docs/mcp.md.
    """

    spec: A.Spec
    command: Sequence[str]
    env: Mapping[str, str] | None = None
    cwd: str | Path | None = None
    report_path: Path | None = None
    schema_checks: bool = True
    firewall_kwargs: dict[str, Any] = field(default_factory=dict)
    stateless: str = REFUSE
    sessions: dict[str, GatewaySession] = field(default_factory=dict, init=False)
    reports: list[FirewallReport] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        # a path or spec text is read by the one rule of agentguard.scoring.inputs
        self.spec = coerce_spec(self.spec, self.firewall_kwargs.get("registry"))
        if not self.command:
            raise GatewayError("no MCP server command given (agentguard mcp-proxy SPEC -- COMMAND)")
        if self.stateless not in STATELESS_POLICIES:
            raise GatewayError(
                f"stateless must be one of {', '.join(STATELESS_POLICIES)}, not {self.stateless!r}"
            )
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        self._ended: dict[str, GatewaySession] = {}  # runs of keys that may be asked again
        self._scrub = Scrubber(self.firewall_kwargs.get("redact"))
        self._upstream = Upstream(self._declare)
        self.listeners = self._upstream.listeners
        self.over_http = False  # served over HTTP: one run per MCP session, not one in all
        self._reported = ReportedTools({})  # the tools compared with the spec at startup

    # upstream -----------------------------------------------------------------------
    @asynccontextmanager
    async def connected(self) -> AsyncIterator[McpGateway]:
        """Start the server, initialize, list its tools; on exit every run is finished."""
        params = StdioServerParameters(
            command=self.command[0],
            args=list(self.command[1:]),
            # the server inherits the proxy's environment, as a command run by a shell does
            env=dict(os.environ if self.env is None else self.env),
            cwd=self.cwd,
        )
        async with self._upstream.running(params):
            self._check_tools()
            try:
                yield self
            finally:
                self.finish_all()

    def _check_tools(self) -> None:
        """The spec against the server's tools, once, at startup: each difference a
        ToolMismatchWarning (with the closest tool), or with ``strict_tools=True`` a
        ToolMismatchError before any client is served. Each run's firewall then logs
        them without warning again."""
        listed = {t.name: t.input_schema for t in self._upstream.catalog.tools}
        self._reported = check_at_guard(
            self.spec,
            listed,
            strict=bool(self.firewall_kwargs.get("strict_tools", False)),
            final_tools=self.firewall_kwargs.get("final_tools", FINAL_TOOLS),
        )

    @property
    def tools(self) -> tuple[types.Tool, ...]:
        """The server's tools, as last listed."""
        return self._upstream.catalog.tools

    async def refresh_tools(self) -> None:
        """List the server's tools again (as on its ``notifications/tools/list_changed``)."""
        await self._upstream.refresh()

    def _declare(self, tools: Sequence[types.Tool]) -> None:
        """Declare new or changed tools to every open run (their schemas' checks)."""
        if not self.schema_checks or not tools:
            return
        found = declarations((t.name, t.input_schema) for t in tools)
        with self._lock:
            running = list(self.sessions.values())
        for session in running:
            session.firewall.declare_tools(found)

    # runs ------------------------------------------------------------------------
    def session(self, key: str) -> GatewaySession:
        """The run of client session ``key`` (started on first use). Once ended, the
        ended run: its firewall refuses every call and logs it, never a fresh start."""
        with self._lock:
            found = self.sessions.get(key) or self._ended.get(key)
        return found if found is not None else self.open_run(key, remember=True)

    def open_run(self, key: str, *, remember: bool = False) -> GatewaySession:
        """A new run for ``key`` (``remember``: ``session(key)`` finds it once ended)."""
        listed = {t.name: t.input_schema for t in self._upstream.catalog.tools}
        # the tools of startup were reported then (_check_tools): logged, not warned again
        known = ReportedTools(listed) if listed == self._reported.tools else listed
        options = {"agent_tools": known, "keep_trace": True, **self.firewall_kwargs}
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

    # the served side -------------------------------------------------------------------
    def server(self, *, sessions_only: bool = False) -> Server[Any]:
        """The MCP server the clients talk to (the upstream's name, version,
        instructions); ``sessions_only``: it does not offer the stateless protocol."""
        init = self._upstream.init
        return gateway_server(
            init.server_info.name if init is not None else "agentguard-mcp-proxy",
            version=init.server_info.version if init is not None else "",
            instructions=init.instructions if init is not None else None,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            sessions_only=sessions_only,
        )

    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listen(self, ctx)
        return await self._upstream.page(params.cursor if params is not None else None)

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        found = client_run(self, ctx)
        if isinstance(found, str):
            log.warning("agentguard: %r not run: %s", name, found)
            return _error_result(refusal_text(f"agentguard did not run {name}: {found}"))
        session = found
        listen(self, ctx)
        sent = copy.deepcopy(dict(params.arguments or {}))  # forwarded as the client sent it
        upstream = self._upstream
        tool = await upstream.tool(name)
        acted = server_arguments(None if tool is None else tool.input_schema, sent)
        request_id = getattr(ctx, "request_id", None)
        decision = session.propose(
            name, acted.args, None if request_id is None else str(request_id)
        )
        if not decision.executes:
            if decision.action is Action.STOP:
                log.warning("agentguard: session %s stopped at %r", session.key, name)
            return refusal(decision)
        why = upstream.unavailable() or upstream.catalog.problem(name) or acted.problem
        if why is not None:
            session.withdrawn(decision, why)
            return _error_result(refusal_text(f"agentguard did not run {name}: {why}"))
        decision = await session.start(decision)  # a refusal here counts as withdrawn
        if not decision.executes:
            return refusal(decision)
        if upstream.session is None or upstream.down is not None:  # gone while it waited
            return self._never_reached(session, decision, upstream.down or "the gateway stopped")
        return await self._forward(session, decision, upstream.session, sent)

    async def _forward(
        self, session: GatewaySession, decision: Decision, upstream: ClientSession, sent: Any
    ) -> types.CallToolResult:
        name, delivery = decision.tool, Delivery()
        try:
            result = await call(upstream, name, sent, delivery)
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                reason = self._upstream.down or str(exc)
                if not delivery.may_have_reached:
                    return self._never_reached(session, decision, reason)
                return self._failed(session, decision, reason, down=True)
            # a JSON-RPC error, forwarded to the client as is. A code saying the request
            # was refused as it was read (invalid params...): the tool never ran, the
            # call is withdrawn; any other may have come from a tool that had begun: it
            # ran, with the error on it. The MCP trace reader reads the code the same way.
            if rejected_request(exc.code):
                reason = f"the server refused the request (JSON-RPC error {exc.code}: {exc})"
                session.withdrawn(decision, reason, started=True)
            else:
                text = jsonrpc_error_text(exc.code, exc.message)
                session.ran(decision, text, error=text)
                session.say(logging.WARNING, decision, f"{name}: {text}")
            raise
        except Exception as exc:  # noqa: BLE001 - whatever failed, a request sent may have run
            reason = f"{type(exc).__name__}: {exc}"
            if not delivery.may_have_reached:  # not sent (the server is not gone for that)
                return self._never_reached(session, decision, reason, down=False)
            return self._failed(session, decision, reason, down=False)
        except BaseException:  # the client cancelled the request
            if not delivery.may_have_reached:  # before it was sent: it never ran
                reason = "the client cancelled the request before it was sent"
                session.withdrawn(decision, reason, started=True)
            else:  # sent: it may have run (the SDK passes the cancellation on)
                session.ran(decision, CANCELLED_TEXT, error=CANCELLED_TEXT)
                session.say(logging.WARNING, decision, f"{name}: {CANCELLED_TEXT}")
            raise
        value, error = unwrap_call_tool_result(
            result.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        session.ran(decision, value, error=_text(value) if error else None)
        return result

    def _never_reached(
        self, session: GatewaySession, decision: Decision, reason: str, *, down: bool = True
    ) -> types.CallToolResult:
        """The request never reached the server: the call did not run. ``down``: because
        the server is gone (else the request could not be sent, as ``reason`` says)."""
        if down:
            self._upstream.ended(_CLOSED)
            reason = f"the MCP server is not running ({reason})"
        session.withdrawn(decision, f"its request never reached the server: {reason}", started=True)
        return _error_result(refusal_text(f"agentguard did not run {decision.tool}: {reason}"))

    def _failed(
        self, session: GatewaySession, decision: Decision, reason: str, *, down: bool
    ) -> types.CallToolResult:
        """The forwarded call failed without a result; ``down``: the server is gone."""
        if down:
            self._upstream.ended(_CLOSED)
        text = f"agentguard: the MCP server failed while running {decision.tool}: {reason}"
        session.say(logging.ERROR, decision, text)
        session.ran(decision, text, error=text)  # it may have run before the server died
        return _error_result(text)


def refusal(decision: Decision) -> types.CallToolResult:
    """The MCP tool error a refused call is answered with (the model reads its text)."""
    return _error_result(blocked_text(decision))


def _error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


__all__ = [
    "PER_REQUEST",
    "REFUSE",
    "STATELESS_POLICIES",
    "STDIO_SESSION",
    "GatewayError",
    "McpGateway",
    "refusal",
    "serve_http",
    "serve_stdio",
]
