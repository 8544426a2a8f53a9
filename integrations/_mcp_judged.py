"""The requests of a relayed client session that a spec judges: ``tools/call`` and
``resources/read`` (a read is an effect: :data:`~agentguard.trace.mcp_content.RESOURCE_READ`).

Each is proposed to the session's run before it is sent, with the arguments the server
will act on (a tool's ``inputSchema`` defaults filled in; text the server would convert
refused: :mod:`agentguard.trace.mcp_arguments`; a string that breaks its schema's
``pattern`` refused: :mod:`._mcp_patterns`), and sent as the client wrote it. A
refused call never reaches the server: a tool call is answered with an MCP tool error
(``isError``) whose text names the constraint and its repair hint, a read with a JSON-RPC
error of that text. Then, by what became of it:

* answered: the result, unwrapped (:mod:`agentguard.trace.mcp_content`), is the call's;
  a tool error (``isError``) is a call that ran, with its error; a JSON-RPC error of a
  code saying the request was refused as it was read means it never ran (withdrawn), any
  other that it ran, with the error on it. The client gets the answer as it was;
* cancelled by the client: before it was sent, it never ran (withdrawn); after, it may
  have run, with :data:`~agentguard.trace.mcp_content.CANCELLED_TEXT` as its error (so
  is a call in flight when the client's session ends);
* the server died: a call not yet sent never ran (withdrawn, refused); one sent may have
  been read, so it ran, with the failure as its error.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from agentguard.enforcement.decision import Action, Decision
from agentguard.errors import MissingExtraError
from agentguard.guard import blocked_text
from agentguard.trace.mcp_arguments import server_arguments
from agentguard.trace.mcp_content import (
    CANCELLED_TEXT,
    RESOURCE_READ,
    jsonrpc_error_text,
    read_arguments,
    rejected_request,
    unwrap_call_tool_result,
    unwrap_read_resource_result,
)
from agentguard.trace.refusal import refusal_text

from ._mcp_patterns import pattern_problem

try:
    import anyio
    import anyio.lowlevel
    import mcp_types as types
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

if TYPE_CHECKING:
    from ._mcp_relay import Relay
    from ._mcp_session import GatewaySession

log = logging.getLogger("agentguard.mcp")

TOOL_CALL: Final = "tools/call"
TASK_REFUSED: Final = (
    "agentguard: a task-augmented tools/call is not relayed: its result would reach the "
    "client through tasks/result, never judged nor recorded as the call's; call the tool "
    "without 'task'"
)
"""Why a ``tools/call`` with ``task`` (MCP tasks) is refused before it is judged."""
REFUSED: Final = -32010
"""The JSON-RPC error code of a ``resources/read`` the gateway refused (in the range
JSON-RPC leaves to implementations); its message is the refusal text."""


async def until(done: Callable[[], bool], seconds: float) -> None:
    """Wait until ``done()``, at most ``seconds`` (polled every 10 ms)."""
    with anyio.move_on_after(seconds):
        while not done():
            await anyio.sleep(0.01)


@dataclass
class _Call:
    """One judged request as it goes (so not frozen): its run and decision once
    proposed, whether the firewall started it, whether it is settled or sent."""

    request: types.JSONRPCRequest
    run: GatewaySession | None = None
    decision: Decision | None = None
    started: bool = False
    done: bool = False  # refused, withdrawn or sent: nothing left to undo

    @property
    def tool(self) -> bool:
        return self.request.method == TOOL_CALL


class Judged:
    """The judged requests of one relay: ``waiting`` (being decided, not sent) and
    ``sent`` (forwarded, not answered), by the client's request id."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.waiting: dict[Any, anyio.CancelScope] = {}
        self.sent: dict[Any, _Call] = {}

    async def handle(self, request: types.JSONRPCRequest) -> None:
        call = _Call(request)
        scope = self.waiting[request.id] = anyio.CancelScope()
        try:
            with scope:
                await self._judge(call)
        except BaseException:
            self._unsent(call, "the client's session ended before it was sent")
            raise
        finally:
            self.waiting.pop(request.id, None)
        if scope.cancelled_caught:
            self._unsent(call, "the client cancelled the request before it was sent")
        self.relay.offered.after_call()

    async def _judge(self, call: _Call) -> None:
        relay, request = self.relay, call.request
        params = request.params or {}
        if call.tool:
            name, args = params.get("name"), params.get("arguments", {})
            if not isinstance(name, str) or not isinstance(args, dict):
                bad = "agentguard: tools/call needs a tool name and its arguments as an object"
                await relay.answer_error(request.id, types.INVALID_PARAMS, bad)
                return
            if params.get("task") is not None:
                await relay.answer_error(request.id, types.INVALID_PARAMS, TASK_REFUSED)
                return
            tool = await relay.tool(name)
            schema = None if tool is None else tool.input_schema
            acted = server_arguments(schema, args)
            event, judged = name, acted.args
            problem: str | None = acted.problem
            if problem is None and relay.gateway.schema_checks:
                problem = pattern_problem(schema, judged)  # (bounds are the firewall's)
        else:
            uri = params.get("uri")
            if not isinstance(uri, str):
                bad = "agentguard: resources/read needs the resource's uri as a string"
                await relay.answer_error(request.id, types.INVALID_PARAMS, bad)
                return
            event, judged, problem = RESOURCE_READ, read_arguments(uri), None
        run = call.run = await relay.session_run()
        decision = call.decision = run.propose(event, judged, str(request.id))
        if not decision.executes:
            if decision.action is Action.STOP:
                log.warning("agentguard: session %s stopped at %r", run.key, event)
            await self._refuse(call, blocked_text(relay.offered.refusal(run, decision)))
            return
        if call.tool and relay.down is None:
            problem = relay.catalog.problem(event) or problem
        why = relay.unavailable() if relay.down is not None else problem
        if why is not None:
            call.done = True
            run.withdrawn(decision, why)
            await self._refuse(call, refusal_text(f"agentguard did not run {event}: {why}"))
            return
        call.started = True
        alone = not self.sent and len(self.waiting) == 1  # no other call of the run in flight
        decision = call.decision = await run.start(decision, alone=alone)  # refused: withdrawn
        call.done = not decision.executes  # (so a cancellation now withdraws it no more)
        await anyio.lowlevel.checkpoint()  # a cancellation that came while it waited counts
        if not decision.executes:
            await self._refuse(call, blocked_text(decision))
            return
        self.waiting.pop(request.id, None)  # from now on a cancellation reaches the server
        if relay.down is None:
            self.sent[request.id] = call
            call.done = True
            if await relay.to_server(request):
                return
            self.sent.pop(request.id, None)
        call.done = True
        reason = f"its request never reached the server: {relay.unavailable()}"
        run.withdrawn(decision, reason, started=True)
        await self._refuse(call, refusal_text(f"agentguard did not run {event}: {reason}"))

    def _unsent(self, call: _Call, reason: str) -> None:
        if call.done or call.run is None or call.decision is None:
            return
        call.done = True
        call.run.withdrawn(call.decision, reason, started=call.started)

    async def _refuse(self, call: _Call, text: str) -> None:
        call.done = True
        if call.tool:
            await self.relay.answer(call.request.id, _error_result(text))
        else:
            await self.relay.answer_error(call.request.id, REFUSED, text)

    # what became of a call sent --------------------------------------------------------
    def read_uri(self, request_id: Any) -> str | None:
        """The uri a sent ``resources/read`` asked for (None: not a read in flight)."""
        call = self.sent.get(request_id)
        uri = None if call is None or call.tool else (call.request.params or {}).get("uri")
        return uri if isinstance(uri, str) else None

    def answered(self, message: Any) -> Any:
        """The server's answer to a request: a judged call's enters its run. The answer
        goes to the client as it is."""
        call = self.sent.pop(message.id, None)
        if call is None or call.run is None or call.decision is None:
            return message
        run, decision = call.run, call.decision
        if isinstance(message, types.JSONRPCResponse):
            if call.tool:
                value, error = unwrap_call_tool_result(message.result)
                run.ran(decision, value, error=_text(value) if error else None)
            else:
                run.ran(decision, unwrap_read_resource_result(message.result))
            return message
        code, text = message.error.code, message.error.message
        if rejected_request(code):  # refused by the server as it read it: it never ran
            reason = f"the server refused the request (JSON-RPC error {code}: {text})"
            run.withdrawn(decision, reason, started=True)
        else:  # it may have come from a handler that had begun: it ran, with the error
            failed = jsonrpc_error_text(code, text)
            run.ran(decision, failed, error=failed)
            run.say(logging.WARNING, decision, f"{decision.tool}: {failed}")
        return message

    async def cancelled(self, request_id: Any) -> bool:
        """The client cancelled ``request_id``; whether the server saw the request (the
        cancellation goes on to it then)."""
        scope = self.waiting.get(request_id)
        if scope is not None:
            scope.cancel()
            return False
        call = self.sent.pop(request_id, None)
        if call is not None and call.run is not None and call.decision is not None:
            call.run.ran(call.decision, CANCELLED_TEXT, error=CANCELLED_TEXT)
            call.run.say(logging.WARNING, call.decision, f"{call.decision.tool}: {CANCELLED_TEXT}")
        return True

    def client_gone(self) -> None:
        """The client's session ended: the calls sent may have run (cancelled)."""
        for call in list(self.sent.values()):
            if call.run is not None and call.decision is not None:
                call.run.ran(call.decision, CANCELLED_TEXT, error=CANCELLED_TEXT)
        self.sent.clear()

    async def server_gone(self, why: str) -> None:
        """The server died: each call sent may have been read; it ran, with the failure."""
        calls, self.sent = list(self.sent.values()), {}
        for call in calls:
            if call.run is None or call.decision is None:
                continue
            text = f"agentguard: the MCP server failed while running {call.decision.tool}: {why}"
            call.run.say(logging.ERROR, call.decision, text)
            call.run.ran(call.decision, text, error=text)
            if call.tool:
                await self.relay.answer(call.request.id, _error_result(text))
            else:
                await self.relay.answer_error(call.request.id, types.INTERNAL_ERROR, text)


def _error_result(text: str) -> dict[str, Any]:
    """A ``CallToolResult`` that is a tool error with ``text`` (what the model reads)."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


__all__ = ["REFUSED", "RESOURCE_READ", "TOOL_CALL", "Judged"]
