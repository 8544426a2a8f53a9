"""Where ``AgentGuardMiddleware`` may sit in ``create_agent(..., middleware=[...])``.

LangChain composes the ``wrap_tool_call`` hooks in list order, the first outermost. The
guard checks each call at the tool itself, inside every other middleware
(``_langchain_calls``), so an order never changes *what* is checked: a reviewer's edit,
every retry of ``ToolRetryMiddleware``, a call an inner middleware answers without running
it are all judged as what they are. What the guard's own place decides is whether it can
tell that a tool's error ended the run: an exception that leaves the guard's wrapper
leaves the tool node, and the run, only if no middleware outside the guard may handle it
(``ToolRetryMiddleware`` retrying it, ``ToolErrorMiddleware`` turning it into a message,
any middleware of the user's own catching it). With one outside, the guard could not know
whether to end the run (finish the log) or let it go on (an error handled must not end
it), so that order cannot be made correct and is refused when the agent is built, naming
the order that is. Middleware whose tool hook is known never to handle an error
(``HumanInTheLoopMiddleware``, ``LLMToolEmulator``) may sit anywhere.

The list is read when ``create_agent`` reads the guard's ``tools`` (it does, for every
middleware, before building the graph): from ``create_agent``'s own ``middleware``
argument, the one moment the guard can see the list it is in. Outside ``create_agent``
nothing is checked.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Sequence
from types import CodeType
from typing import Any

from agentguard.errors import AgentGuardError, MissingExtraError

try:
    from langchain.agents import factory
    from langchain.agents.middleware import (
        AgentMiddleware,
        HumanInTheLoopMiddleware,
        LLMToolEmulator,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain") from exc


class MiddlewareOrderError(AgentGuardError, ValueError):
    """``AgentGuardMiddleware`` is listed inside a middleware that may handle a tool's
    error; the message names it and the order to use instead."""


def check_placement(guard: Any) -> None:
    """Refuse ``guard``'s place in the ``create_agent`` call that is reading it, if a
    middleware that may handle a tool's error wraps it (see the module)."""
    listed = _middleware_being_built()
    if listed is None:
        return
    position = next((i for i, m in enumerate(listed) if m is guard), None)
    if position is None:
        return
    outside = [m for m in listed[:position] if _may_handle_tool_errors(m)]
    if outside:
        raise MiddlewareOrderError(_message(guard, outside))


def _message(guard: Any, outside: Sequence[Any]) -> str:
    del guard
    names = ", ".join(type(m).__name__ for m in outside)
    return (
        f"AgentGuardMiddleware is listed after {names}, which may handle a tool's error: list "
        f"AgentGuardMiddleware before it (middleware=[AgentGuardMiddleware(spec), "
        f"{names}(...)]). The guard checks every call at the tool itself, inside all "
        "other middleware, so each retry and each reviewer's edit is checked as the call "
        "it is in any order; but it must be outside every middleware that may handle a "
        "tool's error, to know whether the error ends the run (see docs/integrations.md, "
        '"Middleware order").'
    )


_TRANSPARENT: frozenset[Any] = frozenset(
    (
        AgentMiddleware.wrap_tool_call,
        AgentMiddleware.awrap_tool_call,
        HumanInTheLoopMiddleware.wrap_tool_call,
        HumanInTheLoopMiddleware.awrap_tool_call,
        LLMToolEmulator.wrap_tool_call,
        LLMToolEmulator.awrap_tool_call,
    )
)
"""Tool hooks known to let every exception of the handler through."""


def _may_handle_tool_errors(middleware: Any) -> bool:
    cls = type(middleware)
    hooks = (getattr(cls, "wrap_tool_call", None), getattr(cls, "awrap_tool_call", None))
    return any(hook is not None and hook not in _TRANSPARENT for hook in hooks)


def _create_agent_code() -> CodeType | None:
    create_agent = inspect.unwrap(factory.create_agent)
    code = getattr(create_agent, "__code__", None)
    return code if isinstance(code, CodeType) else None


_CREATE_AGENT: CodeType | None = _create_agent_code()

_FRAMES = 8
"""How far up the stack ``create_agent`` may be from the guard's ``tools`` property (a
list comprehension's frame, on Python 3.10 and 3.11, sits between them)."""


def _middleware_being_built() -> Sequence[Any] | None:
    """The ``middleware`` argument of the ``create_agent`` call reading the guard now."""
    if _CREATE_AGENT is None:
        return None
    frame = sys._getframe(1)
    for _ in range(_FRAMES):
        if frame.f_code is _CREATE_AGENT:
            listed = frame.f_locals.get("middleware")
            return listed if isinstance(listed, Sequence) else None
        if frame.f_back is None:
            return None
        frame = frame.f_back
    return None


__all__ = ["MiddlewareOrderError", "check_placement"]
