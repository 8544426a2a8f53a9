"""Which guarded tool call the current code runs in: a LangChain agent invoked inside a
tool of an agent guarded by the same middleware (LangChain's "sub-agents as tools") is
part of that call's run, never a run of its own.

A sub-agent built with the same ``AgentGuardMiddleware`` begins an invocation of its own
(``before_agent``), and a session begun there would judge its calls with a firewall that
forgot the run's counts: ``CalledN(refund, 1, <=)`` would let the sub-agent refund again.
So each guarded tool call runs inside :func:`within_call`, and an invocation that begins
inside a call of one of the middleware's running sessions joins that session
(``_langchain_sessions``): its tool calls are the run's calls, judged with its history;
its own messages and final answer are the tool's business (its result is the call's
result), so they are neither recorded nor gated, and its end does not end the run (as a
managed agent's under smolagents, an ``Agent.as_tool`` run's under the OpenAI Agents SDK).

A leaf of the LangChain adapter: it imports nothing of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from agentguard.guard import GuardSession

_ENCLOSING: ContextVar[tuple[GuardSession, ...]] = ContextVar(
    "agentguard_langchain_enclosing", default=()
)
"""The sessions whose tool call the current code runs in, innermost first."""


@contextmanager
def within_call(session: GuardSession) -> Iterator[None]:
    """Code run inside this block (a tool's function) is inside a call of ``session``."""
    token = _ENCLOSING.set((session, *_ENCLOSING.get()))
    try:
        yield
    finally:
        _ENCLOSING.reset(token)


def enclosing_sessions() -> tuple[GuardSession, ...]:
    """The sessions whose tool calls the current code runs in, innermost first."""
    return _ENCLOSING.get()


__all__ = ["enclosing_sessions", "within_call"]
