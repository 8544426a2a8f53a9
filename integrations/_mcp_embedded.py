"""An answer that embeds a resource reads it: ``prompts/get`` and ``tools/call`` answers
carrying resources whole are judged as reads of them.

A prompt or a tool result may carry resources whole (content of type ``resource``, an
``EmbeddedResource`` with its ``uri`` and text). Handing one to the client is the same
effect as answering a ``resources/read`` of that uri: what a spec refuses to let the
client read (``G !`resources/read`(uri ~ /secret/)``) must not reach it inside a prompt
or a tool's result. So before such an answer goes to the client, each embedded resource
is proposed to the session's run as a read of its uri
(:data:`~agentguard.trace.mcp_content.RESOURCE_READ`); if any is refused, the client gets
the refusal instead of the answer (a JSON-RPC error for a prompt, a tool error for a
tool call: the call itself ran, and is in the trace with its result), and the reads
proposed before it in the same answer are withdrawn (none reached the client). Allowed
ones enter the trace as reads with their content. A ``resource_link`` (a uri without
its content) is not a read: the client's ``resources/read`` of it is judged when it
comes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from agentguard.enforcement.decision import Decision
from agentguard.errors import MissingExtraError
from agentguard.guard import blocked_text
from agentguard.trace.mcp_content import (
    RESOURCE_READ,
    read_arguments,
    unwrap_read_resource_result,
)

from ._mcp_judged import REFUSED

try:
    import mcp_types as types
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

if TYPE_CHECKING:
    from ._mcp_relay import Relay

PROMPT_GET: Final = "prompts/get"


def embedded_resources(value: Any, but: str | None = None) -> list[tuple[str, Mapping[str, Any]]]:
    """The ``(uri, resource)`` pairs ``value`` hands over whole, in order: every
    ``EmbeddedResource`` (``{"type": "resource", "resource": {"uri", ...}}``) at any depth
    (a prompt's messages, a tool's content, a sampling request's tool results), and the
    items of a ``ReadResourceResult``'s ``contents`` other than the uri read (``but``: a
    directory's read handing over its files)."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    contents = value.get("contents") if isinstance(value, Mapping) else None
    for item in contents if isinstance(contents, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("uri"), str) and item["uri"] != but:
            found.append((item["uri"], item))
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > _DEPTH:
            continue  # deeper than any MCP message nests resources
        if isinstance(node, Mapping):
            resource = node.get("resource")
            if node.get("type") == "resource" and isinstance(resource, Mapping):
                if isinstance(resource.get("uri"), str):
                    found.append((resource["uri"], resource))
                continue
            stack.extend((v, depth + 1) for v in reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in reversed(node))
    return found


_DEPTH: Final = 32


def embeds(message: Any, but: str | None = None) -> bool:
    """Does ``message`` (an answer, or a request or notification of the server's) hand the
    client a resource whole (:func:`embedded_resources`)?"""
    if isinstance(message, types.JSONRPCResponse):
        return bool(embedded_resources(message.result, but))
    params = getattr(message, "params", None)
    return params is not None and bool(embedded_resources(params))


async def refused_read(
    relay: Relay, found: list[tuple[str, Mapping[str, Any]]], key: Any
) -> tuple[Decision, str] | None:
    """The decision refusing the first of ``found`` a spec refuses to let the client read
    (the reads before it withdrawn), else None with every read in the trace."""
    run = await relay.session_run()
    allowed: list[Decision] = []
    for k, (uri, _) in enumerate(found):
        decision = run.propose(RESOURCE_READ, read_arguments(uri), f"{key}#{k}")
        if decision.executes:
            decision = await run.start(decision)
        if not decision.executes:
            reason = f"withheld: a read of {uri} handed over with it was refused"
            for earlier in allowed:
                run.withdrawn(earlier, reason, started=True)
            return decision, uri
        allowed.append(decision)
    for decision, (_, resource) in zip(allowed, found, strict=True):
        run.ran(decision, unwrap_read_resource_result({"contents": [dict(resource)]}))
    return None


def _text(decision: Decision, uri: str, what: str) -> str:
    return (
        f"{blocked_text(decision)}\n(agentguard: {what} embeds {uri}, which the client may "
        f"not read: it was withheld)"
    )


async def judged_answer(
    relay: Relay, answer: types.JSONRPCResponse, refused: int | None, but: str | None = None
) -> Any:
    """``answer`` if the spec lets the client read every resource it embeds, else the
    refusal saying which read was refused: a JSON-RPC error of code ``refused`` (a
    prompt, a read), or with ``refused`` None a tool error result (a tool call's answer)."""
    found = embedded_resources(answer.result, but)
    if not found:
        return answer
    outcome = await refused_read(relay, found, answer.id)
    if outcome is None:
        return answer
    text = _text(*outcome, "the answer")
    if refused is None:
        result = {"content": [{"type": "text", "text": text}], "isError": True}
        return types.JSONRPCResponse(jsonrpc="2.0", id=answer.id, result=result)
    error = types.ErrorData(code=refused, message=text)
    return types.JSONRPCError(jsonrpc="2.0", id=answer.id, error=error)


async def forward_judged(relay: Relay, message: Any, related: Any) -> None:
    """A request or notification of the server's (``sampling/createMessage``...) that
    hands the client a resource whole: forwarded if every read is allowed; else a request
    is answered to the server with the refusal, and a notification dropped (logged)."""
    outcome = await refused_read(relay, embedded_resources(message.params), id(message))
    if outcome is None:
        await relay.to_client(message, related)
        return
    if isinstance(message, types.JSONRPCRequest):
        error = types.ErrorData(code=REFUSED, message=_text(*outcome, message.method))
        await relay.to_server(types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error))


async def answer_embedding(
    relay: Relay, answer: types.JSONRPCResponse, tool: bool, but: str | None = None
) -> None:
    """Send the client :func:`judged_answer`'s answer to a prompt, a read (``but``: its
    uri) or a ``tool`` call (refused: a tool error); a task of the relay's: the reads may
    wait for calls in flight, whose answers the server reader must go on reading."""
    try:
        await relay.to_client(await judged_answer(relay, answer, None if tool else REFUSED, but))
    finally:
        relay.requests.pop(answer.id, None)


__all__ = [
    "PROMPT_GET",
    "answer_embedding",
    "embedded_resources",
    "embeds",
    "forward_judged",
    "judged_answer",
]
