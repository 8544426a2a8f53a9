"""A prompt that embeds a resource reads it: ``prompts/get`` answers judged as reads.

A ``prompts/get`` answer may carry resources whole (content of type ``resource``, an
``EmbeddedResource`` with its ``uri`` and text). Handing one to the client is the same
effect as answering a ``resources/read`` of that uri: what a spec refuses to let the
client read (``G !`resources/read`(uri ~ /secret/)``) must not reach it inside a prompt.
So before such an answer goes to the client, each embedded resource is proposed to the
session's run as a read of its uri (:data:`~agentguard.trace.mcp_content.RESOURCE_READ`);
if any is refused, the client gets a JSON-RPC error naming it instead of the prompt (the
prompt's other content withheld with it), and the reads proposed before it in the same
answer are withdrawn (none reached the client). Allowed ones enter the trace as reads
with their content. A ``resource_link`` (a uri without its content) is not a read: the
client's ``resources/read`` of it is judged when it comes.
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
    """The ``(uri, resource)`` pairs a ``GetPromptResult`` embeds whole, in order."""
    messages = result.get("messages") if isinstance(result, Mapping) else None
    found: list[tuple[str, Mapping[str, Any]]] = []
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, Mapping) else None
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            if not isinstance(part, Mapping) or part.get("type") != "resource":
                continue
            resource = part.get("resource")
            if isinstance(resource, Mapping) and isinstance(resource.get("uri"), str):
                found.append((resource["uri"], resource))
    return found


async def judged_prompt(relay: Relay, answer: types.JSONRPCResponse, refused: int) -> Any:
    """``answer`` if the spec lets the client read every resource it embeds, else a
    JSON-RPC error (code ``refused``) saying which read was refused."""
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
            text = f"{blocked_text(decision)}\n(agentguard: {PROMPT_GET} embeds {uri})"
            error = types.ErrorData(code=refused, message=text)
            return types.JSONRPCError(jsonrpc="2.0", id=answer.id, error=error)
        allowed.append(decision)
    for decision, (_, resource) in zip(allowed, found, strict=True):
        run.ran(decision, unwrap_read_resource_result({"contents": [dict(resource)]}))
    return answer


async def answer_prompt(relay: Relay, answer: types.JSONRPCResponse, refused: int) -> None:
    """Send the client :func:`judged_prompt`'s answer (a task of the relay's: the reads
    may wait for calls in flight, whose answers the server reader must go on reading)."""
    try:
        await relay.to_client(await judged_prompt(relay, answer, refused))
    finally:
        relay.requests.pop(answer.id, None)


__all__ = ["PROMPT_GET", "answer_prompt", "embedded_resources", "judged_prompt"]
