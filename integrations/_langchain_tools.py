"""The tool-call side of the LangChain adapter: one gate for every tool call, shared by
``AgentGuardMiddleware.wrap_tool_call`` and the LangGraph ``ToolNode`` guard.

The gate follows the firewall's execution protocol (docs/firewall.md): a blocked call is
answered with a ``ToolMessage(status="error")`` without calling the handler; arguments
the tool's own schema rejects are withdrawn; an allowed call is started right before the
handler and completed with its result or error. ``ToolNodeGuard`` serves hand-built
graphs, which have no run boundaries the guard can see.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from typing_extensions import Unpack

from agentguard.enforcement.decision import Action, Decision, RunStopped
from agentguard.errors import MissingExtraError
from agentguard.guard import FINAL_TOOL, GuardOptions, GuardSession, blocked_text
from agentguard.scoring.inputs import SpecLike
from agentguard.trace.refusal import refusal_text

try:
    from langchain_core.messages import ToolMessage
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
        started = session.start(decision)
        if started.action is Action.STOP:
            raise RunStopped(started)
        if not started.executes:
            return refusal(started, raw_id)
        return started

    def wrap(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        session = self.session_of(request)
        try:
            started = self.before(session, request)
            if isinstance(started, ToolMessage):
                return started
            try:
                outcome = handler(request)
            except Exception as exc:
                self._raised(session, started, exc)
                raise
            _complete(session, started, outcome)
            return outcome
        except RunStopped:
            self._stopped(session)  # the graph will not reach after_agent
            raise

    async def awrap(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        session = self.session_of(request)
        try:
            started = self.before(session, request)
            if isinstance(started, ToolMessage):
                return started
            try:
                outcome = await handler(request)
            except Exception as exc:
                self._raised(session, started, exc)
                raise
            _complete(session, started, outcome)
            return outcome
        except RunStopped:
            self._stopped(session)
            raise

    def _raised(self, session: GuardSession, started: Decision, exc: Exception) -> None:
        """The tool raised out of the handler: record it with its error; the exception
        leaves the graph, so no ``after_agent`` will finish the session: finish it here."""
        if _is_interrupt(exc):  # an interrupt pauses the run; the call did not finish
            session.withdraw(started, "interrupted; it runs again when the run resumes")
            return
        with contextlib.suppress(RunStopped):  # the run ends either way, with exc
            session.complete(started, error=exc)
        self._stopped(session)

    def _stopped(self, session: GuardSession) -> None:
        if self.on_stop is not None:
            self.on_stop(session)
        else:
            session.finish_run()


def _complete(session: GuardSession, started: Decision, outcome: Any) -> None:
    result = _result_of(outcome)
    if isinstance(outcome, ToolMessage) and outcome.status == "error":
        session.complete(started, result, error=str(result))
    else:
        session.complete(started, result)


def _is_interrupt(exc: BaseException) -> bool:
    try:
        from langgraph.errors import GraphBubbleUp
    except ImportError:  # pragma: no cover - langgraph ships with langchain v1
        return False
    return isinstance(exc, GraphBubbleUp)


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


def _result_of(outcome: Any) -> Any:
    """The result a spec sees: a ToolMessage's content (JSON text is decoded by Call)."""
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


__all__ = ["SessionOf", "ToolGate", "ToolNodeGuard", "guard_tool_node", "not_run", "refusal"]
