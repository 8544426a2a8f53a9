"""Where a LangChain tool call is checked: at the tool itself, as LangGraph invokes it.

The guard's ``wrap_tool_call`` hands the rest of the middleware chain a request whose tool
is a :class:`CheckedTool` (and whose runtime lists only checked tools, so a reviewer's
edit that redirects the call to another tool reaches a checked one too). Every middleware
inside the guard may still change the call (``HumanInTheLoopMiddleware`` applies a
reviewer's edit there), run it again (``ToolRetryMiddleware``) or answer it without
running it; whatever finally reaches the tool is checked right there, once per attempt:

* the arguments LangGraph hands the tool (injected values in them) are validated by the
  tool itself into the value it will receive (``_langchain_arguments``); arguments it
  rejects, or that would not validate back to themselves, are withdrawn and never run;
* that value is proposed (a decision of the model turn's batch is used only if it was
  made for this very value: an edited call is judged on its edit), started, and the tool
  is invoked with the checked snapshot (``Decision.arguments()``, injected values added
  back), then completed with its result or its error.

An attempt is one call of the trace: a retried call enters it once per attempt, each with
its own result or error (issue 25, "every path to an effect is gated").
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from agentguard.enforcement.decision import Action, Decision, RunStopped
from agentguard.errors import MissingExtraError
from agentguard.guard import GuardSession, blocked_text
from agentguard.trace.json_values import text_of
from agentguard.trace.refusal import refusal_text

from ._langchain_arguments import (
    Rejected,
    called_arguments,
    handed_arguments,
    model_arguments,
    received_arguments,
)
from ._langchain_nesting import within_call
from ._langchain_receipt import ReceivedOtherArguments, receipt_checked
from ._waiting_start import waiting_start

try:
    from langchain_core.messages import ToolMessage
    from langgraph.errors import GraphBubbleUp, ParentCommand
    from langgraph.types import Command
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain-core") from exc


Ran = Callable[[GuardSession, Any, str | None, Any], None]
"""Told of each call that ran: ``(session, tool, tool_call_id, outcome)``."""


class Origin:
    """A tool call as the guard's wrapper received it (the model's, before any middleware
    inside the guard changed it) and the tool it named; ``reached``: something of it
    reached a tool.

    The batch decision made for it at the model turn is used only if the call that
    reaches the tool is that very call; else (a reviewer's edit, a redirect to another
    tool, an answer some middleware gave without running it) it never runs and is
    withdrawn at once, so no call of the batch waits for it."""

    __slots__ = ("call", "name", "reached", "tool")

    def __init__(self, call: Mapping[str, Any], tool: Any) -> None:
        self.call = call
        self.name = str(call["name"])
        self.tool = tool
        self.reached = False

    def arrived(self, session: GuardSession, name: str, sent: Mapping[str, Any]) -> None:
        """The first attempt reached a tool as ``name`` with the model's arguments ``sent``
        (injected ones left out): if that is not the call as the model made it, the
        model's call never runs."""
        if self.reached:
            return
        self.reached = True
        raw = self.call.get("args")
        made = raw if isinstance(raw, Mapping) else {}
        if name == self.name and sent == made:  # the usual case: the model's very call
            return
        if self.tool is None or name != self.name or sent != model_arguments(self.tool, made):
            self.withdraw(session, EDITED)

    def withdraw(self, session: GuardSession, reason: str) -> None:
        """Withdraw the model turn's decision for the call (judged on its arguments as its
        tool would have received them)."""
        tools = None if self.tool is None else {self.name: self.tool}
        raw_id = self.call.get("id")
        tool_call_id = None if raw_id is None else str(raw_id)
        args = called_arguments(tools, self.call)
        session.withdraw_predecided(self.name, args, reason, tool_call_id)


EDITED: Final = "changed before it ran: the call that ran was judged on its own arguments"
"""Why a batch decision is withdrawn when its call reached the tool changed."""

NOT_RUN: Final = "answered without running the tool"
"""Why a batch decision is withdrawn when nothing of its call reached a tool."""


class CheckedTool:
    """A tool that checks each invocation with its session's firewall before it runs.

    Everything but ``invoke`` / ``ainvoke`` is the tool's own (name, schemas,
    ``return_direct``), so middleware reading the request's tool reads the real one.
    """

    __slots__ = ("_ran", "origin", "session", "tool")

    def __init__(
        self,
        tool: Any,
        session: GuardSession,
        ran: Ran | None = None,
        origin: Origin | None = None,
    ) -> None:
        self.tool = tool
        self.session = session
        self._ran = ran
        self.origin = origin

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tool, name)

    def __repr__(self) -> str:
        return f"CheckedTool({self.tool!r})"

    def invoke(self, tool_input: Any, config: Any = None, **kwargs: Any) -> Any:
        admitted = self._admit(tool_input)
        if isinstance(admitted, ToolMessage):
            return admitted
        started = _started(self.session.start(admitted[0]), tool_input)
        if isinstance(started, ToolMessage):
            return started
        try:
            handed = _with_args(self.tool, tool_input, started, admitted[1])
            with within_call(self.session):
                outcome = receipt_checked(self.tool, started.args).invoke(handed, config, **kwargs)
        except ReceivedOtherArguments as exc:  # refused at the door: the tool never ran
            return _not_received(self.session, started, exc, tool_input)
        except BaseException as exc:  # Ctrl-C inside the tool too: it began, it may have acted
            raised(self.session, started, exc, tool_input)
            raise
        self._completed(started, outcome)
        return outcome

    async def ainvoke(self, tool_input: Any, config: Any = None, **kwargs: Any) -> Any:
        """:meth:`invoke` for async tools: a ``start`` that may wait for the calls its
        approval relied on (they finish on this loop) waits on a thread of its own
        (``_waiting_start``: not the loop's executor, whose threads those calls may need),
        as the OpenAI Agents adapter's does; one that cannot wait (no other call in
        flight) is started here, without the thread's cost."""
        admitted = self._admit(tool_input)
        if isinstance(admitted, ToolMessage):
            return admitted
        if _others_in_flight(self.session):  # may wait: on a thread of its own
            started = await waiting_start(self.session.start, admitted[0])
        else:
            started = self.session.start(admitted[0])
        checked = _started(started, tool_input)
        if isinstance(checked, ToolMessage):
            return checked
        handed = _with_args(self.tool, tool_input, checked, admitted[1])
        try:
            guarded = receipt_checked(self.tool, checked.args)
            with within_call(self.session):
                outcome = await guarded.ainvoke(handed, config, **kwargs)
        except ReceivedOtherArguments as exc:  # refused at the door: the tool never ran
            return _not_received(self.session, checked, exc, tool_input)
        except BaseException as exc:  # a cancelled tool too: it began, it may have acted
            raised(self.session, checked, exc, tool_input)
            raise
        self._completed(checked, outcome)
        return outcome

    def _admit(self, tool_input: Any) -> tuple[Decision, Mapping[str, Any]] | ToolMessage:
        """The call's allowed decision, not started yet, with the arguments LangGraph
        handed in; or the ToolMessage that replaces running it (the run already ended,
        the call refused, its arguments rejected by the tool's schema)."""
        session, name = self.session, str(self.tool.name)
        call = tool_input if _is_tool_call(tool_input) else {"args": tool_input}
        raw = call.get("args")
        args: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        raw_id = call.get("id")
        tool_call_id = None if raw_id is None else str(raw_id)
        sent = model_arguments(self.tool, args)
        if self.origin is not None:
            self.origin.arrived(session, name, sent)
        arguments = received_arguments(self.tool, args, tool_call_id)
        if isinstance(arguments, Rejected):
            return _rejected(session, name, sent, tool_call_id, arguments.problem)
        decision = session.propose(name, arguments, tool_call_id=tool_call_id)
        if decision.action is Action.STOP:
            raise RunStopped(decision)
        if not decision.executes:
            return refusal(decision, raw_id)
        return decision, args

    def _completed(self, started: Decision, outcome: Any) -> None:
        complete(self.session, started, outcome)
        if self._ran is not None:
            self._ran(self.session, self.tool, started.tool_call_id, outcome)


def _not_received(
    session: GuardSession, started: Decision, exc: ReceivedOtherArguments, tool_input: Any
) -> ToolMessage:
    """A call its tool's last validation would have run on other arguments: withdrawn
    (it never ran), and the model reads why."""
    _withdraw_started(session, started, str(exc))
    call_id = tool_input.get("id") if _is_tool_call(tool_input) else started.tool_call_id
    return ToolMessage(
        content=refusal_text(f"agentguard refused this call: {exc}."),
        tool_call_id=str(call_id),
        name=started.tool,
        status="error",
    )


def _with_args(tool: Any, tool_input: Any, started: Decision, args: Mapping[str, Any]) -> Any:
    """The tool's input with the checked snapshot as its arguments (injected values added
    back): LangChain validates it again and hands the tool the very values checked."""
    handed = handed_arguments(tool, args, started.arguments())
    if _is_tool_call(tool_input):
        return {**tool_input, "args": handed}
    return handed


def _is_tool_call(tool_input: Any) -> bool:
    """A ``ToolCall`` (how LangGraph invokes a tool), not the bare arguments (how code
    holding the tool, such as another tool reading ``runtime.tools``, may)."""
    return isinstance(tool_input, Mapping) and tool_input.get("type") == "tool_call"


def _rejected(
    session: GuardSession, name: str, args: Mapping[str, Any], tool_call_id: str | None, why: str
) -> ToolMessage:
    """Arguments the tool's schema rejects: the call is proposed as sent (the model's
    attempt is logged, and judged), then withdrawn; the model reads why."""
    decision = session.propose(name, args, tool_call_id=tool_call_id)
    if decision.action is Action.STOP:
        raise RunStopped(decision)
    if not decision.executes:
        return refusal(decision, tool_call_id)
    session.withdraw(decision, f"the tool's schema rejects its arguments: {why}")
    return ToolMessage(
        content=refusal_text(
            f"agentguard did not run {name}: its arguments do not fit the tool "
            f"({why}). Fix the arguments and call it again."
        ),
        tool_call_id=str(tool_call_id),
        name=name,
        status="error",
    )


def _started(started: Decision, tool_input: Any) -> Decision | ToolMessage:
    """What ``start`` answered: the decision the call runs under, or its refusal."""
    if started.action is Action.STOP:
        raise RunStopped(started)
    if not started.executes:
        call_id = tool_input.get("id") if _is_tool_call(tool_input) else None
        return refusal(started, call_id)
    return started


def _others_in_flight(session: GuardSession) -> bool:
    """Could ``start`` wait? Only for another call in flight (approved, not finished)."""
    in_flight = getattr(session.firewall, "in_flight", ())  # a stand-in may lack it
    return len(in_flight) > 1


def complete(session: GuardSession, started: Decision, outcome: Any) -> None:
    """The call ran: completed with what it returned (an error message as its error;
    what cannot be read of it as what can be said of that: the call still ran)."""
    try:
        result = result_of(outcome, started.tool_call_id)
    except Exception as exc:  # noqa: BLE001 - a hostile content part (its .get raising)
        result = f"<the result could not be read: {type(exc).__name__}: {text_of(exc)}>"
    if isinstance(outcome, ToolMessage) and outcome.status == "error":
        session.complete(started, result, error=str(result))
    else:
        session.complete(started, result)


def raised(session: GuardSession, started: Decision, exc: BaseException, call: Any) -> None:
    """The tool raised: the call ran, with that error (a ``KeyboardInterrupt`` or a
    cancellation that ends it midway too: it began and may have acted). Whether the run
    ends is the guard's wrapper's to say (an error some middleware handles does not).

    LangGraph's own signals are not errors (docs/integrations.md, "A tool that asks a
    human"): an ``interrupt()`` pauses the run, and the call, started but unfinished, is
    withdrawn (LangGraph runs the tool again from the start, a new call, when the thread
    is resumed); a ``ParentCommand`` (a handoff) ends the call, which ran: it is completed
    with the command as its result, and the graph goes on."""
    bubble = bubble_of(exc)
    if bubble == "handoff":
        call_id = call.get("id") if _is_tool_call(call) else None
        session.complete(started, _handed_on(exc, call_id))
        return
    if bubble == "pause":
        _withdraw_started(session, started, INTERRUPTED)
        return
    with contextlib.suppress(RunStopped):  # the run ends either way, with exc
        session.complete(started, error=exc)


INTERRUPTED: Final = (
    "interrupted: the tool asked for input (LangGraph runs it again from the start, "
    "as a new call, when the thread is resumed)"
)
"""Why a call paused by a LangGraph ``interrupt()`` is withdrawn."""


def bubble_of(exc: BaseException) -> Literal["pause", "handoff"] | None:
    """LangGraph's control-flow exceptions (``GraphBubbleUp``): ``"handoff"`` for a
    ``ParentCommand`` (the tool handed control to another node: it ran), ``"pause"``
    for the others (an ``interrupt()``, a drain: the node runs again when resumed)."""
    if isinstance(exc, ParentCommand):
        return "handoff"
    return "pause" if isinstance(exc, GraphBubbleUp) else None


def _handed_on(exc: BaseException, call_id: Any) -> Any:
    """The result a handoff's call is recorded with: the command it handed on."""
    return result_of(exc.args[0], call_id) if exc.args else repr(exc)


def _withdraw_started(session: GuardSession, started: Decision, reason: str) -> None:
    """Withdraw a call that started but will never finish (logged with ``reason``), so
    the trace keeps only what ran and calls waiting for it are judged without it."""
    firewall = session.firewall if session.active else None
    in_flight = getattr(firewall, "is_in_flight", None)  # a factory's stand-in may lack it
    if firewall is not None and in_flight is not None and in_flight(started):
        firewall.withdraw(started, reason, started=True)
    session.withdraw(started, reason)  # the session forgets it (nothing is logged twice)


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
        if isinstance(content, list):  # text_of: a part whose __str__ raises is still shown
            content = "\n".join(
                text_of(p.get("text", p)) if isinstance(p, dict) else text_of(p) for p in content
            )
        return content
    try:
        return repr(outcome)
    except Exception:  # noqa: BLE001 - an outcome whose __repr__ raises still ran
        return text_of(outcome)


__all__ = [
    "EDITED",
    "INTERRUPTED",
    "NOT_RUN",
    "CheckedTool",
    "Origin",
    "Ran",
    "bubble_of",
    "complete",
    "not_run",
    "raised",
    "refusal",
    "result_of",
]
