"""One client session relayed to a session of its own with the server: every JSON-RPC
message passes verbatim, in both directions, except the requests a spec judges.

Forwarding messages rather than re-serving the server keeps the gateway transparent:
``initialize`` (the client's capabilities one way, the server's ``serverInfo``,
capabilities and instructions the other), resources, prompts, completion, logging,
every notification (progress, logging, list changes, cancellations) and the server's own
requests to the client (sampling, elicitation, ``roots/list``) pass as they were sent,
and results reach the client as the server wrote them. Because the server's session is
this client's alone, it sees this client's roots, subscriptions and log level, never
more authority than the client would give it directly.

Judged (:mod:`._mcp_judged`): ``tools/call`` and ``resources/read``. Each is proposed to
the session's run first; a refused one is answered by the gateway and never reaches the
server. The gateway's own requests to the server (listing the tools it judges by) carry
ids of their own (``agentguard-...``), answered to the gateway, never to the client.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Final

from agentguard.errors import MissingExtraError

from ._mcp_embedded import PROMPT_GET, answer_embedding, embeds, forward_judged
from ._mcp_judged import RESOURCE_READ, TOOL_CALL, Judged, until
from ._mcp_offer import Offered
from ._mcp_upstream import LIST_PAGES, GatewayError, ToolCatalog, UpstreamTarget, upstream

try:
    import anyio
    import anyio.abc
    import mcp_types as types
    from mcp.shared.message import ClientMessageMetadata, ServerMessageMetadata, SessionMessage
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

if TYPE_CHECKING:
    from ._mcp_session import GatewaySession
    from .mcp import McpGateway

log = logging.getLogger("agentguard.mcp")

_ENDED: Final = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)
LIST_CHANGED: Final = "notifications/tools/list_changed"
_PROTOCOL_HEADER: Final = "mcp-protocol-version"
_DUPLICATE_ID: Final = "agentguard: this request id was used already in this session"
STREAM_WAIT: Final = 5.0  # seconds a message for the client's HTTP stream waits for it
DRAIN_SECONDS: Final = 10.0  # for the requests in flight when a stdio client's input ends


class _Answer:
    """The server's answer to one of the gateway's own requests."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: dict[str, Any] | None = None
        self.error: str | None = None

    def settle(self, result: dict[str, Any] | None, error: str | None) -> None:
        self.result, self.error = result, error
        self.done.set()


class Relay:
    """The client session on ``client`` (read, write streams of ``SessionMessage``)
    relayed to a session of its own with ``target``; its run is ``gateway``'s run of
    ``key`` (opened at its first judged request). ``over_http``: the client's transport
    routes the server's messages by the request they belong to."""

    def __init__(
        self,
        gateway: McpGateway,
        key: str,
        client: tuple[Any, Any],
        target: UpstreamTarget,
        *,
        over_http: bool = False,
        remember: bool = True,
    ) -> None:
        self.gateway, self.key, self.target = gateway, key, target
        self.client_read, self.client_write = client
        self.over_http, self.remember = over_http, remember
        self.catalog = ToolCatalog()
        self.listed = False
        self.run: GatewaySession | None = None
        self.server_write: Any = None
        self.down: str | None = None  # why the server is gone, once it is
        self.protocol: str | None = None  # the version the server agreed to
        self.judged = Judged(self)
        self.offered = Offered(self, gateway.offer)  # inactive without --offer
        self.requests: dict[Any, ServerMessageMetadata | None] = {}  # the client's, in flight
        self.used: set[Any] = set()  # every id the client's requests used (each is used once)
        self.cancelled: set[Any] = set()  # the client's, cancelled: the server's answer drops
        self.listings: dict[Any, bool] = {}  # the client's tools/list in flight: whole?
        self.prompts: set[Any] = set()  # the client's prompts/get in flight (_mcp_prompts)
        self.progress: dict[Any, Any] = {}  # progress token -> the request it belongs to
        self._own: dict[str, _Answer] = {}
        self._ids = itertools.count(1)
        self._prefix = f"agentguard-{uuid.uuid4().hex[:8]}-"
        self._listing = anyio.Lock()
        self._tasks: anyio.abc.TaskGroup | None = None
        # over HTTP a server message of no client request (roots/list...) goes on the
        # session's own stream, lost until the client opens it after the handshake
        self.stream_open: anyio.Event | None = anyio.Event() if over_http else None

    # the relay ---------------------------------------------------------------------
    async def serve(self) -> None:
        """Relay the client to a session of its own with the server; then finish its run."""
        try:
            async with upstream(self.target) as server:
                await self.relay(server)
        finally:
            await self._finish()

    async def relay(self, server: tuple[Any, Any]) -> None:
        """Relay the client and ``server`` (its streams) until the client's session ends."""
        server_read, self.server_write = server
        try:
            async with anyio.create_task_group() as tasks:
                self._tasks = tasks
                tasks.start_soon(self._from_server, server_read)
                await self._from_client()
                if not self.over_http:
                    await self._drain()
                tasks.cancel_scope.cancel()
        finally:  # the client is gone, or the proxy stops: what was sent may have run
            self.judged.client_gone()
            self.server_write = None
            await self._finish()

    async def _drain(self) -> None:
        """The client's input ended (stdio): answer what it asked first, as a server read
        to its input's end would; after ``DRAIN_SECONDS`` the run ends (a call sent is
        settled as cancelled, one waiting to start is withdrawn: no thread outlives it)."""
        await until(lambda: not self.requests or self.down is not None, DRAIN_SECONDS)
        if self.requests:
            self.judged.client_gone()
            await self._finish()  # those waiting to start are refused now: answered before
            await until(lambda: not self.judged.waiting, DRAIN_SECONDS)  # the tasks end

    async def _finish(self) -> None:
        with anyio.CancelScope(shield=True):  # finishing writes the report and the log
            await anyio.to_thread.run_sync(self.gateway.end_session, self.key)

    async def _from_client(self) -> None:
        """Relay the client's messages until its session ends (its stream ends or is
        closed under it: the HTTP transport closes it when the session is deleted)."""
        with suppress(*_ENDED):
            await self._client_messages()

    async def _client_messages(self) -> None:
        async for item in self.client_read:
            if isinstance(item, Exception):
                log.warning("agentguard: a client message could not be read: %s", item)
                continue
            message, meta = item.message, item.metadata
            if isinstance(message, types.JSONRPCRequest):
                await self._client_request(message, meta)
            elif isinstance(message, types.JSONRPCNotification):
                await self._client_notification(message)
            else:  # the client's answer to a request of the server's
                await self.to_server(message)

    async def _client_request(self, message: types.JSONRPCRequest, meta: Any) -> None:
        if message.id in self.used:  # an id names one request of a session (MCP): a second
            # would take the first's answer and record (a call that ran, untraced)
            error = types.ErrorData(code=types.INVALID_REQUEST, message=_DUPLICATE_ID)
            await self.to_client(types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error))
            return
        self.used.add(message.id)
        self.requests[message.id] = meta if isinstance(meta, ServerMessageMetadata) else None
        params = message.params or {}
        token = _progress_token(params)
        if token is not None:
            self.progress[token] = message.id
        if message.method in (TOOL_CALL, RESOURCE_READ):
            assert self._tasks is not None
            self._tasks.start_soon(self.judged.handle, message)
            return
        if message.method == "tools/list":
            self.listings[message.id] = not params.get("cursor")
        elif message.method == PROMPT_GET:
            self.prompts.add(message.id)
        if self.down is not None or not await self.to_server(message):
            why = f"agentguard: {self.unavailable()}"
            await self.answer_error(message.id, types.INTERNAL_ERROR, why)

    async def _client_notification(self, message: types.JSONRPCNotification) -> None:
        if message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            if request_id not in self.requests:  # nothing of that id in flight: ignored
                return
            meta = self.requests.pop(request_id)
            if await self.judged.cancelled(request_id):  # the server saw it: tell it too
                self.cancelled.add(request_id)
                await self.to_server(message)
                self.offered.after_call()
            if meta is not None and meta.on_request_unanswered is not None:
                await meta.on_request_unanswered()  # ends the request on the HTTP wire
            return
        await self.to_server(message)

    async def _from_server(self, server_read: Any) -> None:
        try:
            async for item in server_read:
                if isinstance(item, Exception):
                    log.warning("agentguard: a server message could not be read: %s", item)
                    continue
                await self._server_message(item.message)
        except _ENDED:
            pass
        await self.server_gone("the MCP server's output ended (its process exited)")

    async def _server_message(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            answer = self._own.pop(str(message.id), None) if _own_id(message.id) else None
            if answer is not None:
                error = message.error.message if isinstance(message, types.JSONRPCError) else None
                answer.settle(getattr(message, "result", None), error)
                return
            await self._server_answer(message)
        elif isinstance(message, types.JSONRPCNotification) and message.method == LIST_CHANGED:
            assert self._tasks is not None  # set before the server is read
            self._tasks.start_soon(self._tools_changed, message)
        else:  # a notification, or a request of the server's (sampling, roots/list...)
            related = self._related(message)
            if related is None:
                await self._session_stream()
            if embeds(message):  # it hands the client a resource: a read, judged first
                assert self._tasks is not None
                self._tasks.start_soon(forward_judged, self, message, related)
            else:
                await self.to_client(message, related)

    async def _server_answer(self, message: Any) -> None:
        request_id = message.id
        if request_id in self.cancelled:
            self.cancelled.discard(request_id)
            return  # the client cancelled it and expects no answer
        self.progress = {t: r for t, r in self.progress.items() if r != request_id}
        whole = self.listings.pop(request_id, None)
        if whole is not None and isinstance(message, types.JSONRPCResponse):
            self._learn(message.result.get("tools"), whole=whole)
            if self.offered.active:  # its run may be opened first: not on the reader
                assert self._tasks is not None
                self._tasks.start_soon(self._offered_listing, message)
                return
        prompt, judged = request_id in self.prompts, request_id in self.judged.sent
        self.prompts.discard(request_id)
        uri = self.judged.read_uri(request_id)  # a read hands over more than its uri?
        answer = self.judged.answered(message)  # a judged call ran: in the trace first
        if (prompt or judged) and embeds(answer, uri):  # its reads wait: off the reader
            assert self._tasks is not None
            self._tasks.start_soon(answer_embedding, self, answer, not prompt and uri is None, uri)
        else:
            await self.to_client(answer)
            self.requests.pop(request_id, None)  # once sent: a drain waits for the answer
        if judged:
            self.offered.after_call()

    async def _offered_listing(self, message: types.JSONRPCResponse) -> None:
        try:
            await self.offered.listing(message)
        finally:
            self.requests.pop(message.id, None)

    async def _session_stream(self) -> None:
        """Over HTTP, wait (``STREAM_WAIT`` at most) for the client's own stream."""
        if self.stream_open is None or self.stream_open.is_set():
            return
        with anyio.move_on_after(STREAM_WAIT):
            await self.stream_open.wait()
            await anyio.sleep(0.05)  # the transport registers the stream as it answers

    def _related(self, message: Any) -> ServerMessageMetadata | None:
        """Which of the client's requests a message of the server's belongs to (over
        HTTP it travels on that request's stream): by its progress token, else the one
        request in flight, else none (the session's own stream)."""
        if not self.over_http:
            return None
        token = _progress_token(message.params or {})
        related = self.progress.get(token) if token is not None else None
        if related is None and len(self.requests) == 1:
            related = next(iter(self.requests))
        return None if related is None else ServerMessageMetadata(related_request_id=related)

    # sending -----------------------------------------------------------------------
    async def to_server(self, message: Any) -> bool:
        """Send ``message`` to the server as it is; False if it could not be written."""
        if self.server_write is None:
            return False
        meta = None
        if self.protocol is not None:  # the HTTP transport names the version on each request
            meta = ClientMessageMetadata(headers={_PROTOCOL_HEADER: self.protocol})
        try:
            await self.server_write.send(SessionMessage(message, metadata=meta))
        except _ENDED:
            await self.server_gone("the MCP server's input is closed (its process exited)")
            return False
        return True

    async def to_client(self, message: Any, meta: ServerMessageMetadata | None = None) -> None:
        if isinstance(message, types.JSONRPCResponse):
            self._note_protocol(message)
        try:
            await self.client_write.send(SessionMessage(message, metadata=meta))
        except _ENDED:
            log.info("agentguard: session %s: the client is gone", self.key)

    def to_client_soon(self, message: Any) -> None:
        """Send a message of the session's own (not an answer) without holding the
        caller: over HTTP it waits for the client's own stream."""

        async def send() -> None:
            await self._session_stream()
            await self.to_client(message)

        assert self._tasks is not None
        self._tasks.start_soon(send)

    async def answer(self, request_id: Any, result: Mapping[str, Any]) -> None:
        answer = types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dict(result))
        await self.to_client(answer)
        self.requests.pop(request_id, None)

    async def answer_error(self, request_id: Any, code: int, text: str) -> None:
        error = types.ErrorData(code=code, message=text)
        await self.to_client(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))
        self.requests.pop(request_id, None)

    def _note_protocol(self, message: types.JSONRPCResponse) -> None:
        version = message.result.get("protocolVersion")
        if self.protocol is None and isinstance(version, str) and "serverInfo" in message.result:
            self.protocol = version

    # the server's state ------------------------------------------------------------
    async def server_gone(self, why: str) -> None:
        """The server is gone: what was in flight is settled, later requests refused."""
        if self.down is not None or self.server_write is None:
            return
        self.down = why
        log.error("agentguard: session %s: %s; every later call is refused", self.key, why)
        for answer in self._own.values():
            answer.settle(None, why)
        self._own.clear()
        await self.judged.server_gone(why)
        for request_id in list(self.requests):
            if request_id not in self.judged.waiting:
                await self.answer_error(
                    request_id, types.INTERNAL_ERROR, f"agentguard: {self.unavailable()}"
                )

    def unavailable(self) -> str:
        return f"the MCP server is not running ({self.down or 'not started'})"

    # the tools ---------------------------------------------------------------------
    async def ask(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """A request of the gateway's own to the server; its result (a GatewayError
        if it failed: the server is gone, or answered with an error)."""
        request_id = f"{self._prefix}{next(self._ids)}"
        answer = self._own[request_id] = _Answer()
        fields: dict[str, Any] = {"params": params} if params is not None else {}
        request = types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, **fields)
        if self.down is not None or not await self.to_server(request):
            self._own.pop(request_id, None)
            raise GatewayError(self.unavailable())
        await answer.done.wait()
        if answer.result is None:
            raise GatewayError(answer.error or "no answer")
        return answer.result

    async def refresh(self) -> None:
        """List the server's tools (every page); what is new or changed is declared to
        the run. A failed listing leaves what was known."""
        async with self._listing:
            found: list[Any] = []
            cursor: Any = None
            try:
                for _ in range(LIST_PAGES):
                    page = await self.ask("tools/list", {"cursor": cursor} if cursor else None)
                    found.extend(page.get("tools") or [])
                    cursor = page.get("nextCursor")
                    if not cursor:
                        break
            except GatewayError as exc:
                log.warning("agentguard: listing the server's tools failed: %s", exc)
                return
            self._learn(found, whole=True)
            self.listed = True

    def _learn(self, listed: Any, *, whole: bool) -> None:
        tools = _tools(listed)
        changed = self.catalog.replace(tools) if whole else self.catalog.merge(tools)
        if self.run is not None and changed:
            self.gateway.declare(self.run, changed)

    async def _tools_changed(self, message: types.JSONRPCNotification) -> None:
        """The server's tools changed: learn them first, then tell the client (so a call
        to a changed tool is judged by its new schema)."""
        await self.refresh()
        await self.to_client(message)

    async def tool(self, name: str) -> types.Tool | None:
        """The listing of ``name``; a name not known is listed again first."""
        found = self.catalog.get(name)
        if found is None and self.catalog.problem(name) is not None and self.down is None:
            await self.refresh()
            found = self.catalog.get(name)
        return found

    async def session_run(self) -> GatewaySession:
        """The client session's run (opened, the tools listed, at its first judged request)."""
        if self.run is None:
            if not self.listed and self.down is None:
                await self.refresh()
            if self.run is None:
                self.run = self.gateway.open_run(
                    self.key, self.catalog.tools, remember=self.remember
                )
        return self.run


def _own_id(request_id: Any) -> bool:
    return isinstance(request_id, str) and request_id.startswith("agentguard-")


def _progress_token(params: Mapping[str, Any]) -> Any:
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, Mapping) else None
    return token if token is not None else params.get("progressToken")


def _tools(listed: Any) -> list[types.Tool]:
    """The tools of a listing the gateway can read (one it cannot is not judged by)."""
    found: list[types.Tool] = []
    for raw in listed if isinstance(listed, list) else []:
        try:
            found.append(types.Tool.model_validate(raw))
        except ValueError:
            log.warning("agentguard: a tool the server lists cannot be read: %.200r", raw)
    return found


__all__ = ["Relay", "upstream"]  # (upstream: for the serving side, as before)
