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
from agentguard.trace.mcp_content import RESOURCE_READ, unwrap_read_resource_result

try:
    import mcp_types as types
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

if TYPE_CHECKING:
    from ._mcp_relay import Relay

PROMPT_GET: Final = "prompts/get"


def embedded_resources(result: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """The ``(uri, resource)`` pairs a ``GetPromptResult`` (its messages' content) or a
    ``CallToolResult`` (its content) embeds whole, in order."""
    if not isinstance(result, Mapping):
        return []
    messages = result.get("messages")
    contents = (
        [m.get("content") for m in messages if isinstance(m, Mapping)]
        if isinstance(messages, list)
        else []
    )
    contents.append(result.get("content"))
    found: list[tuple[str, Mapping[str, Any]]] = []
    for content in contents:
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            if not isinstance(part, Mapping) or part.get("type") != "resource":
                continue
            resource = part.get("resource")
            if isinstance(resource, Mapping) and isinstance(resource.get("uri"), str):
                found.append((resource["uri"], resource))
    return found


def embeds(answer: Any) -> bool:
    """Is ``answer`` a result that embeds a resource whole (:func:`embedded_resources`)?"""
    return isinstance(answer, types.JSONRPCResponse) and bool(embedded_resources(answer.result))


async def judged_answer(relay: Relay, answer: types.JSONRPCResponse, refused: int | None) -> Any:
    """``answer`` if the spec lets the client read every resource it embeds, else the
    refusal saying which read was refused: a JSON-RPC error of code ``refused`` (a
    prompt), or with ``refused`` None a tool error result (a tool call's answer)."""
    found = embedded_resources(answer.result)
    if not found:
        return answer
    run = await relay.session_run()
    allowed: list[Decision] = []
    for k, (uri, _) in enumerate(found):
        decision = run.propose(RESOURCE_READ, {"uri": uri}, f"{answer.id}#{k}")
        if decision.executes:
            decision = await run.start(decision)
        if not decision.executes:
            reason = f"the prompt was withheld: a read of {uri} it embeds was refused"
            for earlier in allowed:
                run.withdrawn(earlier, reason, started=True)
            text = (
                f"{blocked_text(decision)}\n(agentguard: the answer embeds {uri}, which the "
                "client may not read: the answer was withheld)"
            )
            if refused is None:
                result = {"content": [{"type": "text", "text": text}], "isError": True}
                return types.JSONRPCResponse(jsonrpc="2.0", id=answer.id, result=result)
            error = types.ErrorData(code=refused, message=text)
            return types.JSONRPCError(jsonrpc="2.0", id=answer.id, error=error)
        allowed.append(decision)
    for decision, (_, resource) in zip(allowed, found, strict=True):
        run.ran(decision, unwrap_read_resource_result({"contents": [dict(resource)]}))
    return answer


async def answer_embedding(
    relay: Relay, answer: types.JSONRPCResponse, refused: int | None
) -> None:
    """Send the client :func:`judged_answer`'s answer (a task of the relay's: the reads
    may wait for calls in flight, whose answers the server reader must go on reading)."""
    try:
        await relay.to_client(await judged_answer(relay, answer, refused))
    finally:
        relay.requests.pop(answer.id, None)


__all__ = ["PROMPT_GET", "answer_embedding", "embedded_resources", "embeds", "judged_answer"]
