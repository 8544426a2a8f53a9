"""The refusal marker: the first line of every answer agentguard gives in place of a call
it did not run, and the test the transcript readers use to recognise one.

A guarded agent's own transcript (LangChain messages, smolagents memory, OpenAI Agents SDK
items, an MCP session through the proxy) holds the calls agentguard refused beside the
calls that ran, each answered with the refusal text the adapter sent the model. The trace
is what ran, so the readers leave a refused call out; they know it by this marker, not by
its wording further down. A leaf module (it imports nothing from the package): the
enforcement's message builder writes the marker and the trace readers test for it, with
one spelling between them.

The marker is a whole line, the first of the text: a tool whose own output mentions it
further down (a log it returns, a quoted transcript) is not a refusal.
"""

from __future__ import annotations

from typing import Final

BLOCKED_HEAD: Final = "agentguard blocked this call; it was not executed."
"""The first line of the answer to a call agentguard refused (BLOCK, an ASK denied, a call
withdrawn before it started)."""

STOPPED_HEAD: Final = "agentguard stopped the run; this call was not executed."
"""The first line of the answer to a call agentguard refused by stopping the run."""

REFUSAL_HEADS: Final[frozenset[str]] = frozenset({BLOCKED_HEAD, STOPPED_HEAD})
"""Every first line that marks a refusal."""


_PREFIX: Final = "agentguard "
"""What every marker line starts with (the quick test before the exact one)."""


def refusal_text(reason: str, *, stopped: bool = False) -> str:
    """``reason`` under the marker line (``stopped``: the run's), for the model to read.

    A ``reason`` that already starts with a marker line is returned as it is, so a
    message built by :mod:`agentguard.enforcement.messages` is not marked twice.
    """
    if is_refusal(reason):
        return reason
    head = STOPPED_HEAD if stopped else BLOCKED_HEAD
    return f"{head}\n{reason}" if reason else head


def is_refusal(value: object) -> bool:
    """Whether ``value`` is refusal text: a string whose first line is a marker line."""
    if not isinstance(value, str) or not value.startswith(_PREFIX):
        return False  # most outputs: one prefix test, however long the text
    for head in REFUSAL_HEADS:
        if value.startswith(head) and value[len(head) : len(head) + 1] in ("", "\n"):
            return True
    return False


__all__ = ["BLOCKED_HEAD", "REFUSAL_HEADS", "STOPPED_HEAD", "is_refusal", "refusal_text"]
