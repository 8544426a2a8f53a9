"""The tool-call side of the LangChain adapter: the guard's tool wrapper, shared by
``AgentGuardMiddleware.wrap_tool_call`` and the LangGraph ``ToolNode`` guard.

The wrapper does not decide: it finds the call's session and hands the rest of the chain
a request whose tool (and whose runtime's list of tools) is checked at the tool itself
(``_langchain_calls.CheckedTool``), so what is judged is what LangGraph finally runs,
after every middleware inside the guard had its say. What the wrapper owns is the run's
end: an exception that leaves it leaves the tool node (no middleware that could handle it
sits outside the guard: ``_langchain_order``), so the invocation is over and its session
is finished before the exception propagates. ``ToolNodeGuard`` serves hand-built graphs,
which have no run boundaries the guard can see.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from typing_extensions import Unpack

from agentguard.enforcement.decision import Decision
from agentguard.errors import MissingExtraError
from agentguard.guard import FINAL_TOOL, GuardOptions, GuardSession
from agentguard.scoring.inputs import SpecLike

from ._langchain_arguments import called_arguments
from ._langchain_calls import NOT_RUN, CheckedTool, Origin, bubble_of, refusal, result_of
from ._langchain_sessions import STATE_KEY, state_value

try:
    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.errors import ParentCommand
    from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
    from langgraph.types import Command
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langgraph") from exc


def without_guard_state(outcome: Any) -> Any:
    """A tool's ``Command`` with the guard's private state key dropped from its update.

    The key names the running invocation and holds the firewall state the next one
    continues from: a tool writing it (or a page a tool fetched that told it to) could
    hand the thread's next invocation a fresh firewall. The rest of the update applies
    as the tool asked."""
    if not isinstance(outcome, Command) or outcome.update is None:
        return outcome
    update = outcome.update
    pairs = outcome._update_as_tuples()  # LangGraph's own reading of every update shape
    if not any(key == STATE_KEY for key, _ in pairs):
        return outcome
    kept: Any  # the update's own shape where ToolNode reads it (a dict, a list of pairs)
    if isinstance(update, dict):
        kept = {key: value for key, value in update.items() if key != STATE_KEY}
    elif isinstance(update, (list, tuple)):
        kept = type(update)(pair for pair in update if pair[0] != STATE_KEY)
    else:  # a state object: its fields, as the mapping LangGraph would have read
        kept = {key: value for key, value in pairs if key != STATE_KEY}
    return dataclasses.replace(outcome, update=kept)


def handoff_without_guard_state(exc: BaseException) -> BaseException:
    """``exc``, and for a ``ParentCommand`` (a handoff to the parent graph) its command
    without the guard's private key (:func:`without_guard_state`)."""
    if isinstance(exc, ParentCommand) and exc.args:
        exc.args = (without_guard_state(exc.args[0]), *exc.args[1:])
    return exc


SessionOf = Callable[[Any], GuardSession]
"""Finds the session a ``ToolCallRequest`` belongs to."""


class ToolGate:
    """The guard's tool wrapper: checked tools in, the run's end out."""

    def __init__(
        self, session_of: SessionOf, on_stop: Callable[[GuardSession], Any] | None = None
    ) -> None:
        self.session_of = session_of
        self.on_stop = on_stop
        self._lock = threading.Lock()
        # the return_direct calls that ran since the session's last model turn, by id
        self._direct: weakref.WeakKeyDictionary[GuardSession, dict[str | None, Any]] = (
            weakref.WeakKeyDictionary()
        )
        # each session's checked runtime tools, by the identities of the tools they check
        self._listed: weakref.WeakKeyDictionary[GuardSession, tuple[tuple[int, ...], list[Any]]] = (
            weakref.WeakKeyDictionary()
        )

    def wrap(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        session = self.session_of(request)
        if session.closed:  # a sibling ended the invocation (it raised) before this call
            return refused_after_end(session, request)
        origin = Origin(request.tool_call, request.tool)
        _withdraw_answered(session, request)
        try:
            return without_guard_state(handler(self.checked(session, request, origin)))
        except BaseException as exc:
            if bubble_of(exc) is None:  # a pause or a handoff does not end the run
                self._stopped(session)  # the graph will not reach after_agent
            handoff_without_guard_state(exc)
            raise
        finally:
            if not origin.reached:
                origin.withdraw(session, NOT_RUN)

    async def awrap(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """:meth:`wrap` for async tools; ending the session (finishing waits for the calls
        still running, which finish on this loop) happens in a worker thread."""
        session = self.session_of(request)
        if session.closed:
            return refused_after_end(session, request)
        origin = Origin(request.tool_call, request.tool)
        _withdraw_answered(session, request)
        try:
            return without_guard_state(await handler(self.checked(session, request, origin)))
        except BaseException as exc:
            if bubble_of(exc) is None:
                await asyncio.to_thread(self._stopped, session)
            handoff_without_guard_state(exc)
            raise
        finally:
            if not origin.reached:
                origin.withdraw(session, NOT_RUN)

    def checked(self, session: GuardSession, request: Any, origin: Origin) -> Any:
        """``request`` with its tool, and every tool its runtime lists, checked by
        ``session`` at the moment LangGraph invokes it.

        The runtime's list is replaced in place: LangGraph builds a runtime (and its list)
        for each call, and hands that very runtime to the tool, whose own use of
        ``runtime.tools`` is then checked too. The request is copied (its dataclass
        ``replace`` costs five times the copy of its fields), the framework's left as is."""
        runtime = request.runtime
        if isinstance(runtime, ToolRuntime) and runtime.tools:
            runtime.tools = self._runtime_tools(session, runtime.tools)
        tool = request.tool
        if tool is None or isinstance(tool, CheckedTool):
            return request
        checked = CheckedTool(tool, session, self._ran, origin)
        if type(request) is not ToolCallRequest:  # a subclass may do more in __init__
            return dataclasses.replace(request, tool=checked)
        copied = object.__new__(ToolCallRequest)
        fields = copied.__dict__
        fields.update(request.__dict__)
        fields["tool"] = checked
        return copied

    def _runtime_tools(self, session: GuardSession, tools: list[Any]) -> list[Any]:
        """The runtime's tools, each checked by ``session`` (remembered per session)."""
        key = tuple(id(t) for t in tools)
        known = self._listed.get(session)
        if known is not None and known[0] == key:
            return list(known[1])
        checked = [
            t if isinstance(t, CheckedTool) else CheckedTool(t, session, self._ran) for t in tools
        ]
        with self._lock:
            self._listed[session] = (key, checked)
        return list(checked)

    def _ran(self, session: GuardSession, tool: Any, tool_call_id: str | None, out: Any) -> None:
        if getattr(tool, "return_direct", False):  # its output may become the answer
            with self._lock:
                self._direct.setdefault(session, {})[tool_call_id] = result_of(out, tool_call_id)

    def returned_directly(self, session: GuardSession) -> dict[str | None, Any]:
        """The ``return_direct`` calls that ran since the last :meth:`new_turn`, by id,
        with their results (when the run ends after them, that is its answer)."""
        with self._lock:
            return dict(self._direct.get(session, {}))

    def new_turn(self, session: GuardSession) -> None:
        """A model turn: the calls before it did not end the run."""
        if self._direct:
            with self._lock:
                self._direct.pop(session, None)

    def _stopped(self, session: GuardSession) -> None:
        if self.on_stop is not None:
            self.on_stop(session)
        else:
            session.finish_run()


def _withdraw_answered(session: GuardSession, request: Any) -> None:
    """Withdraw the batch decisions of the turn's calls that were answered without
    running (``HumanInTheLoopMiddleware`` rejecting one answers it in the state, and the
    tool node never runs it): no call of the batch may wait for them."""
    messages = state_value(request.state, "messages") or []
    answered: set[Any] = set()
    index = len(messages) - 1
    while index >= 0 and isinstance(messages[index], ToolMessage):
        answered.add(messages[index].tool_call_id)
        index -= 1
    if not answered or index < 0 or not isinstance(messages[index], AIMessage):
        return
    runtime = request.runtime
    tools = {str(t.name): t for t in getattr(runtime, "tools", None) or ()}
    for call in messages[index].tool_calls:
        if call.get("id") in answered:
            args = called_arguments(tools, call)
            session.withdraw_predecided(str(call["name"]), args, NOT_RUN, str(call.get("id")))


def refused_after_end(session: GuardSession, request: Any) -> Any:
    """A call of an invocation that already ended: refused by its run (which logs it),
    without passing through the middleware inside the guard."""
    call = request.tool_call
    raw = call.get("args")
    args = raw if isinstance(raw, dict) else {}
    raw_id = call.get("id")
    tool_call_id = None if raw_id is None else str(raw_id)
    return refusal(session.propose(str(call["name"]), args, tool_call_id=tool_call_id), raw_id)


class ToolNodeGuard:
    """``wrap_tool_call`` / ``awrap_tool_call`` for a LangGraph ``ToolNode``.

    A hand-built graph has no run boundaries agentguard can see: the first call starts
    a run; call :meth:`finish` for the report, which also readies the next run. A STOP
    (or a tool's error leaving the node) ends the run: until :meth:`finish`, every
    later call is refused, never judged by a fresh firewall.
    """

    def __init__(self, spec: SpecLike, **firewall_kwargs: Unpack[GuardOptions]) -> None:
        self.agentguard = GuardSession(spec, **firewall_kwargs)
        self._gate = ToolGate(lambda _request: self.agentguard)

    def __call__(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._gate.wrap(request, handler)

    async def awrap(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return await self._gate.awrap(request, handler)

    def propose_answer(self, answer: Any) -> Decision:
        """Check a final answer (call it where your graph ends); records it if allowed."""
        args = {"answer": answer}
        decision = self.agentguard.propose(FINAL_TOOL, args)
        if decision.executes:
            decision = self.agentguard.start(decision)
            if decision.executes:
                self.agentguard.complete(decision, answer)
        return decision

    def finish(self) -> Any:
        """End the run: deferred constraints are evaluated; returns the FirewallReport.
        The explicit run boundary of a hand-built graph: the next call starts a new run."""
        return self.agentguard.finish_run(next_run=True)

    def tool_node_kwargs(self) -> dict[str, Any]:
        """``ToolNode(tools, **guard.tool_node_kwargs())`` wires both sync and async paths."""
        return {"wrap_tool_call": self, "awrap_tool_call": self.awrap}


def guard_tool_node(spec: SpecLike, **firewall_kwargs: Unpack[GuardOptions]) -> ToolNodeGuard:
    """A guard for ``ToolNode(tools, wrap_tool_call=guard)``; see :class:`ToolNodeGuard`."""
    return ToolNodeGuard(spec, **firewall_kwargs)


__all__ = ["SessionOf", "ToolGate", "ToolNodeGuard", "guard_tool_node"]
