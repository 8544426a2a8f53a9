"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

Each line is an entry with a ``type``; ``user`` and ``assistant`` entries carry an
Anthropic message under ``message`` (an assistant turn may be split over several
entries, one content block each). Those messages are read as Anthropic Messages
(``tool_use`` / ``tool_result``, ``is_error``). Other entries (``summary``,
``system``, ``queue-operation``, ``file-history-snapshot``) are skipped, and so are
sidechain entries (``isSidechain: true``: a subagent's own conversation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.trace.formats import anthropic
from agentguard.trace.formats._base import mappings
from agentguard.trace.model import Trace

_TURNS = ("user", "assistant")


def detect(value: Any) -> bool:
    """Typed entries, some of them ``user``/``assistant`` entries wrapping a ``message``."""
    return (
        mappings(value)
        and bool(value)
        and all(isinstance(e.get("type"), str) and "role" not in e for e in value)
        and any(_is_turn(e) for e in value)
    )


def _is_turn(entry: Mapping[str, Any]) -> bool:
    message = entry.get("message")
    return entry.get("type") in _TURNS and isinstance(message, Mapping) and "role" in message


def load(value: Any, source: str, final_answer: bool) -> Trace:
    messages = [e["message"] for e in value if _is_turn(e) and e.get("isSidechain") is not True]
    trace = anthropic.load(messages, source, final_answer)
    session = next((e.get("sessionId") for e in value if e.get("sessionId")), None)
    return (
        trace if session is None else Trace(trace.calls, {**trace.metrics, "session_id": session})
    )
