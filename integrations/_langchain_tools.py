"""The tool-call side of the LangChain adapter: one gate for every tool call, shared by
``AgentGuardMiddleware.wrap_tool_call`` and the LangGraph ``ToolNode`` guard.

The gate follows the firewall's execution protocol (docs/firewall.md): a blocked call is
answered with a ``ToolMessage(status="error")`` without calling the handler; arguments
the tool's own schema rejects are withdrawn; an allowed call is started right before the
handler and completed with its result or error. ``ToolNodeGuard`` serves hand-built
graphs, which have no run boundaries the guard can see.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Literal

from typing_extensions import Unpack

from agentguard.enforcement.decision import Action, Decision, RunStopped
from agentguard.errors import MissingExtraError
from agentguard.guard import FINAL_TOOL, GuardOptions, GuardSession, blocked_text
from agentguard.scoring.inputs import SpecLike
from agentguard.trace.refusal import refusal_text

try:
    from langchain_core.messages import ToolMessage
    from langgraph.errors import GraphBubbleUp, ParentCommand
    from langgraph.types import Command
    from pydantic_core import SchemaValidator
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain-core") from exc


SessionOf = Callable[[Any], GuardSession]
"""Finds the session a ``ToolCallRequest`` belongs to."""


class ToolGate:
    """The tool-call check shared by the middleware and the ToolNode wrapper."""

    def __init__(
        self, session_of: SessionOf, on_stop: Callable[[GuardSession], Any] | None = None
    ) -> None:
        self.session_of = session_of
        self.on_stop = on_stop

    def before(self, session: GuardSession, request: Any) -> Decision | ToolMessage:
        """The started decision of the call, or the ToolMessage that replaces running it."""
        admitted = self.admitted(session, request)
        if isinstance(admitted, ToolMessage):
            return admitted
        return _started(session.start(admitted), request)

    async def abefore(self, session: GuardSession, request: Any) -> Decision | ToolMessage:
        """:meth:`before` on the event loop: a ``start`` that may wait for the calls its
        approval relied on (they finish on this loop) waits in a worker thread, as the
        OpenAI Agents adapter and the MCP gateway do; one that cannot wait (no other call
        in flight) is started here, without the thread's cost."""
        admitted = self.admitted(session, request)
        if isinstance(admitted, ToolMessage):
            return admitted
        if _others_in_flight(session):
            started = await asyncio.to_thread(session.start, admitted)
        else:
            started = session.start(admitted)
        return _started(started, request)

    def admitted(self, session: GuardSession, request: Any) -> Decision | ToolMessage:
        """The call's allowed decision, not started yet, or the ToolMessage that replaces
        running it (refused, its arguments rejected, the run already ended)."""
        call = request.tool_call
        name, args = str(call["name"]), call.get("args") or {}  # the firewall copies them
        raw_id = call.get("id")
        tool_call_id = None if raw_id is None else str(raw_id)
        if session.closed:  # a sibling ended the invocation (it raised) before this call
            return ToolMessage(
                content=refusal_text(f"agentguard did not run {name}: the run already ended."),
                tool_call_id=str(raw_id),
                name=name,
                status="error",
            )
        decision = session.propose(name, args, tool_call_id=tool_call_id)
        if decision.action is Action.STOP:
            raise RunStopped(decision)
        if not decision.executes:
            return refusal(decision, raw_id)
        problem = _invalid_arguments(request.tool, args)
        if problem is not None:
            session.withdraw(decision, f"the tool's schema rejects its arguments: {problem}")
            return ToolMessage(
                content=refusal_text(
                    f"agentguard did not run {name}: its arguments do not fit the tool "
                    f"({problem}). Fix the arguments and call it again."
                ),
                tool_call_id=str(raw_id),
                name=name,
                status="error",
            )
        return decision

    def wrap(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        session = self.session_of(request)
        try:
            started = self.before(session, request)
            if isinstance(started, ToolMessage):
                return started
            try:
                outcome = handler(request)
            except BaseException as exc:  # Ctrl-C inside the tool too: it began, it may have acted
                self._raised(session, request, started, exc)
                raise
            _complete(session, started, outcome)
            return outcome
        except RunStopped:
            self._stopped(session)  # the graph will not reach after_agent
            raise

    async def awrap(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """:meth:`wrap` for async tools. What may wait runs in a worker thread, off the
        loop the other calls finish on: a ``start`` (see :meth:`abefore`) and ending the
        session after a tool raised (finishing waits for the calls still running)."""
        session = self.session_of(request)
        try:
            started = await self.abefore(session, request)
            if isinstance(started, ToolMessage):
                return started
            try:
                outcome = await handler(request)
            except BaseException as exc:  # a cancelled tool too: it began, it may have acted
                if _bubble_of(exc) is None:
                    await asyncio.to_thread(self._raised, session, request, started, exc)
                else:  # a pause or a handoff: nothing waits
                    self._raised(session, request, started, exc)
                raise
            _complete(session, started, outcome)
            return outcome
        except RunStopped:
            await asyncio.to_thread(self._stopped, session)
            raise

    def _raised(
        self, session: GuardSession, request: Any, started: Decision, exc: BaseException
    ) -> None:
        """The tool raised out of the handler: record it with its error; the exception
        leaves the graph, so no ``after_agent`` will finish the session: finish it here.
        So does a ``KeyboardInterrupt`` or a cancellation (``asyncio.CancelledError``)
        that ends the tool midway: the call began and may have acted, so it ran, with
        that error (as a tool's own exception would).

        LangGraph's own signals are not errors (docs/integrations.md, "A tool that asks a
        human"): an ``interrupt()`` pauses the run, and the call, started but unfinished,
        is withdrawn (LangGraph runs the tool again from the start, a new call, when the
        thread is resumed); a ``ParentCommand`` (a handoff) ends the call, which ran:
        it is completed with the command as its result, and the graph goes on."""
        bubble = _bubble_of(exc)
        if bubble == "handoff":
            session.complete(started, _handed_on(exc, request.tool_call))
            return
        if bubble == "pause":
            _withdraw_started(session, started, INTERRUPTED)
            return
        with contextlib.suppress(RunStopped):  # the run ends either way, with exc
            session.complete(started, error=exc)
        if not isinstance(exc, RunStopped):  # a stop ends the session where it is caught
            self._stopped(session)

    def _stopped(self, session: GuardSession) -> None:
        if self.on_stop is not None:
            self.on_stop(session)
        else:
            session.finish_run()


def _started(started: Decision, request: Any) -> Decision | ToolMessage:
    """What ``start`` answered, as :meth:`ToolGate.before` returns it."""
    if started.action is Action.STOP:
        raise RunStopped(started)
    if not started.executes:
        return refusal(started, request.tool_call.get("id"))
    return started


def _others_in_flight(session: GuardSession) -> bool:
    """Could ``start`` wait? Only for another call in flight (approved, not finished)."""
    in_flight = getattr(session.firewall, "in_flight", ())  # a stand-in may lack it
    return len(in_flight) > 1


def _complete(session: GuardSession, started: Decision, outcome: Any) -> None:
    result = result_of(outcome, started.tool_call_id)
    if isinstance(outcome, ToolMessage) and outcome.status == "error":
        session.complete(started, result, error=str(result))
    else:
        session.complete(started, result)


INTERRUPTED: Final = (
    "interrupted: the tool asked for input (LangGraph runs it again from the start, "
    "as a new call, when the thread is resumed)"
)
"""Why a call paused by a LangGraph ``interrupt()`` is withdrawn."""


def _bubble_of(exc: BaseException) -> Literal["pause", "handoff"] | None:
    """LangGraph's control-flow exceptions (``GraphBubbleUp``): ``"handoff"`` for a
    ``ParentCommand`` (the tool handed control to another node: it ran), ``"pause"``
    for the others (an ``interrupt()``, a drain: the node runs again when resumed)."""
    if isinstance(exc, ParentCommand):
        return "handoff"
    return "pause" if isinstance(exc, GraphBubbleUp) else None


def _handed_on(exc: BaseException, call: Mapping[str, Any]) -> Any:
    """The result a handoff's call is recorded with: the command it handed on."""
    return result_of(exc.args[0], call.get("id")) if exc.args else repr(exc)


def _withdraw_started(session: GuardSession, started: Decision, reason: str) -> None:
    """Withdraw a call that started but will never finish (logged with ``reason``), so
    the trace keeps only what ran and calls waiting for it are judged without it."""
    firewall = session.firewall if session.active else None
    in_flight = getattr(firewall, "is_in_flight", None)  # a factory's stand-in may lack it
    if firewall is not None and in_flight is not None and in_flight(started):
        firewall.withdraw(started, reason, started=True)
    session.withdraw(started, reason)  # the session forgets it (nothing is logged twice)


def _invalid_arguments(tool: Any, args: Mapping[str, Any]) -> str | None:
    """Why the tool's own schema (what the model fills in; injected arguments excluded)
    rejects ``args``, or None; the framework would refuse them before the tool runs."""
    validate = _VALIDATORS.of(tool)
    if validate is None:
        return None
    try:
        validate(args if type(args) is dict else dict(args))
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        errors = getattr(exc, "errors", None)
        if callable(errors):
            parts = [f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in errors()]
            return "; ".join(parts) or str(exc)
        return str(exc)
    return None


class _Validators:
    """Each tool's argument validator (its ``tool_call_schema``'s ``model_validate``),
    remembered by tool: reading ``tool_call_schema`` costs more than validating with it.

    LangChain memoizes that schema per tool and rebuilds it when the tool's ``name``,
    ``description`` or ``args_schema`` is reassigned; the validator kept here is dropped
    on the same reassignments. A tool class with its own ``tool_call_schema`` is asked
    every time, as are objects that are not LangChain tools.
    """

    __slots__ = ("_known", "_memoizing")

    LIMIT = 1024  # tools made afresh per request must not pile up

    def __init__(self) -> None:
        self._known: dict[int, tuple[Any, Any, Any, Any, Callable[[Any], Any] | None]] = {}
        self._memoizing: dict[type, bool] = {}  # tool class -> LangChain's memoized schema?

    def of(self, tool: Any) -> Callable[[Any], Any] | None:
        memoizing = self._memoizing.get(type(tool))
        if memoizing is None:
            memoizing = self._memoizing[type(tool)] = _memoizes(type(tool))
        if not memoizing:
            return _validator(tool)
        known = self._known.get(id(tool))
        name, description, args_schema = tool.name, tool.description, tool.args_schema
        if (
            known is not None
            and known[0] is tool
            and known[1] is name
            and known[2] is description
            and known[3] is args_schema
        ):
            return known[4]
        validate = _validator(tool)
        if len(self._known) >= self.LIMIT:
            self._known.clear()
        self._known[id(tool)] = (tool, name, description, args_schema, validate)
        return validate


def _validator(tool: Any) -> Callable[[Any], Any] | None:
    """The schema's validator: for a pydantic v2 model, its core validator's
    ``validate_python`` (what ``model_validate`` calls with its default arguments, without
    the classmethod's own frame and keywords on every call), else ``model_validate``."""
    schema = getattr(tool, "tool_call_schema", None)
    core = getattr(schema, "__pydantic_validator__", None)
    if isinstance(core, SchemaValidator) and getattr(schema, "__pydantic_complete__", False):
        fast: Callable[[Any], Any] = core.validate_python
        return fast
    validate: Callable[[Any], Any] | None = getattr(schema, "model_validate", None)
    return validate


def _memoizes(cls: type) -> bool:
    """Are ``cls``'s objects LangChain tools with LangChain's memoized ``tool_call_schema``?"""
    from langchain_core.tools import BaseTool

    if not issubclass(cls, BaseTool):
        return False
    schema: object = cls.tool_call_schema
    return schema is BaseTool.tool_call_schema and hasattr(BaseTool, "_tool_call_schema_memo")


_VALIDATORS = _Validators()


def refusal(decision: Decision, call_id: Any) -> ToolMessage:
    return ToolMessage(
        content=blocked_text(decision),
        tool_call_id=str(call_id),
        name=decision.tool,
        status="error",
    )


def not_run(stop: Decision, call: Mapping[str, Any]) -> ToolMessage:
    return ToolMessage(
        content=refusal_text(
            f"agentguard did not run {call['name']}: the run was stopped at {stop.tool}"
        ),
        tool_call_id=str(call.get("id")),
        name=str(call["name"]),
        status="error",
    )


def result_of(outcome: Any, tool_call_id: Any = None) -> Any:
    """The result a spec sees: a ToolMessage's content (JSON text is decoded by Call); for
    a ``Command``, the content of the ToolMessage in its update answering the call (what
    the model reads), else the command's repr."""
    if isinstance(outcome, Command) and tool_call_id is not None:
        update = outcome.update
        messages = update.get("messages") if isinstance(update, Mapping) else None
        for message in messages if isinstance(messages, list) else ():
            if isinstance(message, ToolMessage) and message.tool_call_id == tool_call_id:
                return result_of(message)
    if isinstance(outcome, ToolMessage):
        content = outcome.content
        if isinstance(content, list):
            content = "\n".join(
                str(p.get("text", p)) if isinstance(p, dict) else str(p) for p in content
            )
        return content
    return repr(outcome)


class ToolNodeGuard:
    """``wrap_tool_call`` / ``awrap_tool_call`` for a LangGraph ``ToolNode``.

    A hand-built graph has no run boundaries agentguard can see: the first call starts
    a run; call :meth:`finish` for the report, which also readies the next run.
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
        """End the run: deferred constraints are evaluated; returns the FirewallReport."""
        return self.agentguard.finish_run()

    def tool_node_kwargs(self) -> dict[str, Any]:
        """``ToolNode(tools, **guard.tool_node_kwargs())`` wires both sync and async paths."""
        return {"wrap_tool_call": self, "awrap_tool_call": self.awrap}


def guard_tool_node(spec: SpecLike, **firewall_kwargs: Unpack[GuardOptions]) -> ToolNodeGuard:
    """A guard for ``ToolNode(tools, wrap_tool_call=guard)``; see :class:`ToolNodeGuard`."""
    return ToolNodeGuard(spec, **firewall_kwargs)


__all__ = [
    "SessionOf",
    "ToolGate",
    "ToolNodeGuard",
    "guard_tool_node",
    "not_run",
    "refusal",
    "result_of",
]
