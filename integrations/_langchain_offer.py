"""What the model is offered before its turn (the ``offer`` option, docs/firewall.md,
"What may run now"): the tools bound for the next model call narrowed to those not
refused now (``"narrow"``), and the answer as a note in the system message (both
choices). Only the request handed to the model changes: the tools stay in the graph,
and ``propose`` still checks every call, a withheld tool's included."""

from __future__ import annotations

from typing import Any

from agentguard.enforcement.offering import offering
from agentguard.errors import MissingExtraError
from agentguard.guard import GuardSession

try:
    from langchain_core.messages import SystemMessage
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain") from exc


def offered(session: GuardSession, request: Any) -> Any:
    """``request`` as the model should see it under the session's ``offer``."""
    if session.offer is None:
        return request
    tools = list(getattr(request, "tools", None) or [])
    names = [tool_name(t) for t in tools]
    got = offering(session.firewall, [n for n in names if n is not None], session.offer)
    if not got.note:
        return request
    kept = [t for t, n in zip(tools, names, strict=True) if n is None or n not in got.withheld]
    return request.override(tools=kept, system_message=_noted(request.system_message, got.note))


def tool_name(tool: Any) -> str | None:
    """A bound tool's name: a LangChain tool, or a provider tool given as a dict."""
    name = getattr(tool, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(tool, dict):
        inner = tool.get("function", tool)
        found = inner.get("name") if isinstance(inner, dict) else None
        return found if isinstance(found, str) else None
    return None


def _noted(system: SystemMessage | None, note: str) -> SystemMessage:
    if system is None:
        return SystemMessage(content=note)
    content = system.content
    if isinstance(content, str):
        return SystemMessage(content=f"{content}\n\n{note}" if content else note)
    return SystemMessage(content=[*content, {"type": "text", "text": note}])


__all__ = ["offered", "tool_name"]
