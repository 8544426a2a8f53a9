"""Guard a LangChain v1 agent (``create_agent``) or a LangGraph ``ToolNode``.

``AgentGuardMiddleware(spec, **firewall_kwargs)`` plugs into
``create_agent(model, tools, middleware=[...])``:

* ``before_agent`` starts a session (firewall, attempts) for the invocation and names it
  in the graph state (``agentguard_run``, an ``UntrackedValue``: per invocation, never
  checkpointed); every later hook and tool call finds its session by that name, so one
  agent can be invoked from many threads or asyncio tasks at once;
* ``after_agent`` saves the firewall state into the graph state (``agentguard_firewall``,
  checkpointed with the conversation) and finishes the session (deferred constraints are
  evaluated there, also when the run was ended early). With a checkpointer, the next
  invocation on the same ``thread_id`` restores it: the trace continues across turns, in
  this process or another;
* ``before_model`` also saves the firewall state (given a ``thread_id``), so a run
  interrupted (``interrupt()``, human in the loop) and resumed in another process
  continues from the calls it had made;
* ``after_model`` (``can_jump_to=["end", "model"]``) sees each model turn before any tool
  runs: a batch of tool calls is checked at once (``propose_batch``), and a STOP ends the
  run (``jump_to: "end"``) with an error ``ToolMessage`` per call, so no call runs. A turn
  without tool calls is the final answer, proposed as ``final_answer``; a refused answer
  is sent back to the model (``jump_to: "model"``);
* ``wrap_tool_call`` / ``awrap_tool_call`` follow the firewall's execution protocol for
  each call of the batch: a blocked call gets a ``ToolMessage(status="error")`` without
  calling the handler, so the tool never runs and the model reads why; a call whose
  arguments do not fit the tool's schema is withdrawn (it never runs; the model reads
  the validation errors); an allowed call is started (``start`` may wait for, or
  re-check against, the calls its approval relied on), then completed with its result,
  or with its error when the tool raised or the handler returned an error message. A
  tool that raises out of the handler ends the invocation: the session is finished (the
  log gets its ``finish`` line and is closed) before the exception propagates.
  (``Command(goto="__end__")`` from there would not end the run: that is why STOP is
  handled in ``after_model``.)

``approver=interrupt_approver`` (with ``severity ASK`` constraints) asks a human through
LangGraph itself: the call is held with a real ``interrupt`` (its value is the approval
request), ``invoke`` returns with ``__interrupt__``, and the run resumes after
``Command(resume={"approved": True, "by": "alice"})`` (or ``False`` / a reason): the node
is re-run, the turn is proposed again and the approver returns the resume value. Needs a
checkpointer and a ``thread_id``, as every LangGraph interrupt does.

``guard_tool_node(spec)`` builds a ``ToolNode(wrap_tool_call=..., awrap_tool_call=...)``
wrapper for hand-built LangGraph graphs; there a STOP raises
:class:`agentguard.enforcement.decision.RunStopped` out of ``graph.invoke``, and one guard serves one
run at a time.

``middleware.agentguard`` is the last finished invocation's
:class:`~agentguard.guard.GuardSession` (trace, attempts, report, log path),
``middleware.session_for(thread_id)`` the latest one on a thread; a ToolNode guard's
``.agentguard`` is its only session.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any

from typing_extensions import NotRequired, Unpack

from agentguard.enforcement.agent_tools import warn_tool_mismatches
from agentguard.enforcement.approval import Approval, ApprovalRequest
from agentguard.enforcement.decision import Action, Decision, RunStopped
from agentguard.errors import MissingExtraError
from agentguard.guard import FINAL_TOOL, GuardOptions, GuardSession, blocked_text
from agentguard.scoring.inputs import SpecLike

try:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain-core") from exc

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
    from langchain.agents.middleware.types import PrivateStateAttr
    from langgraph.channels.untracked_value import UntrackedValue
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain") from exc


SessionOf = Callable[[Any], GuardSession]
"""Finds the session a ``ToolCallRequest`` belongs to."""


class _ToolGate:
    """The tool-call check shared by the middleware and the ToolNode wrapper."""

    def __init__(
        self, session_of: SessionOf, on_stop: Callable[[GuardSession], Any] | None = None
    ) -> None:
        self.session_of = session_of
        self.on_stop = on_stop

    def before(self, session: GuardSession, request: Any) -> Decision | ToolMessage:
        """The started decision of the call, or the ToolMessage that replaces running it."""
        call = request.tool_call
        name, args = str(call["name"]), dict(call.get("args") or {})
        tool_call_id = None if call.get("id") is None else str(call["id"])
        if session.closed:  # a sibling ended the invocation (it raised) before this call
            return ToolMessage(
                content=f"agentguard did not run {name}: the run already ended.",
                tool_call_id=str(call.get("id")),
                name=name,
                status="error",
            )
        decision = session.propose(name, args, tool_call_id=tool_call_id)
        if decision.action is Action.STOP:
            raise RunStopped(decision)
        if not decision.executes:
            return _refusal(decision, call.get("id"))
        problem = _invalid_arguments(request.tool, args)
        if problem is not None:
            session.withdraw(decision, f"the tool's schema rejects its arguments: {problem}")
            return ToolMessage(
                content=f"agentguard did not run {name}: its arguments do not fit the tool "
                f"({problem}). Fix the arguments and call it again.",
                tool_call_id=str(call.get("id")),
                name=name,
                status="error",
            )
        started = session.start(decision)
        if started.action is Action.STOP:
            raise RunStopped(started)
        if not started.executes:
            return _refusal(started, call.get("id"))
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
    schema = getattr(tool, "tool_call_schema", None)
    validate = getattr(schema, "model_validate", None)
    if validate is None:
        return None
    try:
        validate(dict(args))
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        errors = getattr(exc, "errors", None)
        if callable(errors):
            parts = [f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in errors()]
            return "; ".join(parts) or str(exc)
        return str(exc)
    return None


def _refusal(decision: Decision, call_id: Any) -> ToolMessage:
    return ToolMessage(
        content=blocked_text(decision),
        tool_call_id=str(call_id),
        name=decision.tool,
        status="error",
    )


def _not_run(stop: Decision, call: Mapping[str, Any]) -> ToolMessage:
    return ToolMessage(
        content=f"agentguard did not run {call['name']}: the run was stopped at {stop.tool}",
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


def _text(message: AIMessage | HumanMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)


RUN_KEY = "agentguard_run"
"""State key naming the invocation a hook runs in (never checkpointed)."""

STATE_KEY = "agentguard_firewall"
"""State key holding the firewall state saved when an invocation ends (checkpointed)."""


class AgentGuardState(AgentState[Any]):
    """The agent state plus agentguard's two private keys (absent from input and output).

    ``agentguard_run`` is an ``UntrackedValue``: LangGraph keeps it for one invocation
    and never checkpoints it, so every invocation, concurrent or not, gets its own.
    ``agentguard_firewall`` is checkpointed with the conversation, so the next invocation
    on the same ``thread_id`` continues the same trace.
    """

    agentguard_run: NotRequired[Annotated[str, UntrackedValue, PrivateStateAttr]]
    agentguard_firewall: NotRequired[Annotated[dict[str, Any], PrivateStateAttr]]


class AgentGuardMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Put a ``create_agent`` agent behind the firewall for ``spec``.

    Every invocation gets its own :class:`GuardSession` (firewall, attempts, trace), so
    one agent can be invoked from many threads or tasks at once. ``.agentguard`` is the
    last finished invocation's session, :meth:`session_for` the latest one on a thread.
    With a checkpointer, an invocation on a ``thread_id`` continues the trace its
    previous one left in the checkpoint (``resume=False`` starts every invocation afresh).
    """

    state_schema = AgentGuardState

    def __init__(
        self,
        spec: SpecLike,
        *,
        resume: bool = True,
        keep_threads: int = 1024,
        **firewall_kwargs: Unpack[GuardOptions],
    ) -> None:
        super().__init__()
        self.spec = _loaded(spec, firewall_kwargs.get("registry"))
        self.resume = resume
        self.keep_threads = keep_threads
        self._kwargs = firewall_kwargs
        self._lock = threading.RLock()
        self._runs: dict[str, GuardSession] = {}
        self._threads: OrderedDict[str, GuardSession] = OrderedDict()
        self._ended: OrderedDict[str, GuardSession] = OrderedDict()  # token -> ended session
        self._last = self._new_session()
        self._gate = _ToolGate(self._session_of_request, self._end)
        self._tools_compared = False

    # what runs left behind ---------------------------------------------------------
    @property
    def agentguard(self) -> GuardSession:
        """The last finished invocation's session (an idle one before any finished)."""
        return self._last

    def session_for(self, thread_id: str) -> GuardSession | None:
        """The latest invocation's session on ``thread_id`` (running or finished)."""
        with self._lock:
            return self._threads.get(thread_id)

    @property
    def running(self) -> tuple[GuardSession, ...]:
        """Sessions of invocations that started and have not finished."""
        with self._lock:
            return tuple(self._runs.values())

    # sessions, one per invocation ------------------------------------------------------
    def _new_session(self) -> GuardSession:
        return GuardSession(self.spec, **self._kwargs)

    def _begin(self, state: Any, runtime: Any, token: str) -> GuardSession:
        session = self._new_session()
        saved = _get(state, STATE_KEY) if self.resume else None
        session.start_run(state=saved)
        thread = _thread_of(runtime)
        with self._lock:
            self._runs[token] = session
            if thread is not None:
                self._threads[thread] = session
                self._threads.move_to_end(thread)
                self._forget_old_threads()
        return session

    def _forget_old_threads(self) -> None:
        idle = [t for t, s in self._threads.items() if not s.active]
        for thread in idle[: max(0, len(self._threads) - self.keep_threads)]:
            del self._threads[thread]

    def _session(self, state: Any, runtime: Any) -> GuardSession:
        token = _get(state, RUN_KEY)
        thread = _thread_of(runtime)
        with self._lock:
            if token is not None and token in self._runs:
                return self._runs[token]
            if token is not None and token in self._ended:
                return self._ended[token]
            latest = None if thread is None else self._threads.get(thread)
            if latest is not None and latest.active:
                return latest  # resumed after an interrupt: the run token is not checkpointed
            # resumed in another process: continue from the checkpointed state (under the
            # lock, so parallel tool calls of that run find one session, not one each)
            return self._begin(state, runtime, token or (uuid.uuid4().hex if thread else ""))

    def _session_of_request(self, request: Any) -> GuardSession:
        return self._session(getattr(request, "state", None), getattr(request, "runtime", None))

    def _end(self, session: GuardSession) -> None:
        session.closed = True  # later tool calls of this invocation find it, and are refused
        session.finish_run()
        with self._lock:
            for token in [t for t, s in self._runs.items() if s is session]:
                del self._runs[token]
                self._ended[token] = session
                while len(self._ended) > self.keep_threads:
                    self._ended.popitem(last=False)
            self._last = session

    # run lifecycle ----------------------------------------------------------------
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        token = uuid.uuid4().hex
        self._begin(state, runtime, token)
        return {RUN_KEY: token}

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        session = self._session(state, runtime)
        keep = self.resume and _thread_of(runtime) is not None  # no thread, no checkpoint
        saved = session.save_state() if keep else None
        self._end(session)
        return None if saved is None else {STATE_KEY: saved}

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.after_agent(state, runtime)

    # each model turn ------------------------------------------------------------------
    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Checkpoint the firewall with the calls run so far, so a run interrupted (or
        crashed) and resumed elsewhere continues from here; needs a ``thread_id``."""
        if not self.resume or _thread_of(runtime) is None:
            return None
        saved = self._session(state, runtime).save_state()
        return None if saved is None else {STATE_KEY: saved}

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    @hook_config(can_jump_to=["end", "model"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        messages = state["messages"]
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage):
            return None
        session = self._session(state, runtime)
        try:
            _observe_dialogue(session, messages)
        except RunStopped as stopped:  # a message broke a HARD_STOP constraint
            return {
                "messages": [AIMessage(content=blocked_text(stopped.decision))],
                "jump_to": "end",
            }
        if last.tool_calls:
            return _check_batch(session, last)
        return _check_answer(session, last)

    @hook_config(can_jump_to=["end", "model"])
    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    # each tool call -----------------------------------------------------------------
    # the agent's tools: known here only, from the first model request ---------------------
    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._compare_tools(request)
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self._compare_tools(request)
        return await handler(request)

    def _compare_tools(self, request: Any) -> None:
        """Once per middleware: the spec's tools against the tools bound to the model
        (a ToolMismatchWarning and a log event per difference, docs/firewall.md)."""
        if self._tools_compared:
            return
        with self._lock:
            if self._tools_compared:
                return
            self._tools_compared = True
        tools = getattr(request, "tools", None)
        if tools is None:
            return
        schemas = langchain_tool_schemas(tools)
        firewall = self._session_of_request(request).firewall
        final = frozenset(getattr(firewall, "final_tools", ("final_answer",)))
        found = warn_tool_mismatches(self.spec, schemas, implicit=final)
        report = getattr(firewall, "report_tool_mismatches", None)  # absent on stand-ins
        if report is not None:
            report(found)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._gate.wrap(request, handler)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return await self._gate.awrap(request, handler)


def langchain_tool_schemas(tools: Any) -> dict[str, Any]:
    """Name -> JSON Schema of the arguments, for LangChain tools (or OpenAI-format dicts)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    out: dict[str, Any] = {}
    for tool in tools:
        try:
            function = convert_to_openai_tool(tool)["function"]
        except (ValueError, TypeError, KeyError):  # a provider built-in: no schema to compare
            continue
        out[str(function["name"])] = function.get("parameters")
    return out


def interrupt_approver(request: ApprovalRequest) -> Approval:
    """An approver for ``ASK`` constraints that asks through a LangGraph ``interrupt``.

    The interrupt's value is ``{"agentguard": "approval", **request.to_dict()}``; resume
    with ``Command(resume=True | False | {"approved": bool, "by": ..., "reason": ...})``.
    """
    from langgraph.types import interrupt

    return Approval.from_value(interrupt({"agentguard": "approval", **request.to_dict()}))


def _observe_dialogue(session: GuardSession, messages: Sequence[Any]) -> None:
    """The user turns the agent received (``HumanMessage``, not agentguard's own notes)
    and the model's new message, as dialogue events, each once (docs/firewall.md)."""
    for index, msg in enumerate(messages):
        if isinstance(msg, HumanMessage) and msg.name != "agentguard":
            session.observe("user", _text(msg), key=msg.id or f"#{index}")
    last = messages[-1]
    key = last.id or f"#{len(messages) - 1}"
    session.observe("assistant", _text(last), key=key, tool_calls=len(last.tool_calls))


def _check_batch(session: GuardSession, message: AIMessage) -> dict[str, Any] | None:
    calls = [
        (str(c["name"]), dict(c.get("args") or {}), None if c.get("id") is None else str(c["id"]))
        for c in message.tool_calls
    ]
    decisions = session.propose_batch(calls)
    stop = next((d for d in decisions if d.action is Action.STOP), None)
    if stop is None:
        return None
    session.withdraw_unclaimed(f"a call of the same turn stopped the run ({stop.tool})")
    replies: list[Any] = [
        _refusal(stop, c.get("id")) if (d is stop) else _not_run(stop, c)
        for c, d in zip(message.tool_calls, decisions, strict=True)
    ]
    replies.append(AIMessage(content=blocked_text(stop)))
    return {"messages": replies, "jump_to": "end"}


def _check_answer(session: GuardSession, message: AIMessage) -> dict[str, Any] | None:
    args = {"answer": _text(message)}
    decision = session.propose(FINAL_TOOL, args)
    if decision.action is Action.STOP:
        return {"messages": [AIMessage(content=blocked_text(decision))], "jump_to": "end"}
    if decision.executes:
        decision = session.start(decision)
    if decision.action is Action.STOP:
        return {"messages": [AIMessage(content=blocked_text(decision))], "jump_to": "end"}
    if not decision.executes:
        note = HumanMessage(content=blocked_text(decision), name="agentguard")
        return {"messages": [note], "jump_to": "model"}
    session.complete(decision, args["answer"])
    return None


def _get(state: Any, key: str) -> Any:
    """A state value, whether the state is a dict or a model object."""
    if isinstance(state, Mapping):
        return state.get(key)
    return getattr(state, key, None)


def _thread_of(runtime: Any) -> str | None:
    """The ``thread_id`` of the invocation (``Runtime`` and ``ToolRuntime`` both carry
    ``execution_info``; its ``thread_id`` is the config's, None if none was given)."""
    info = getattr(runtime, "execution_info", None)
    thread = getattr(info, "thread_id", None)
    return None if thread is None else str(thread)


def _loaded(spec: Any, registry: Any) -> Any:
    """Parse the spec once, not once per invocation (the one rule: scoring/inputs.py)."""
    from agentguard.scoring.inputs import coerce_spec

    return coerce_spec(spec, registry)


class ToolNodeGuard:
    """``wrap_tool_call`` / ``awrap_tool_call`` for a LangGraph ``ToolNode``.

    A hand-built graph has no run boundaries agentguard can see: the first call starts
    a run; call :meth:`finish` for the report, which also readies the next run.
    """

    def __init__(self, spec: SpecLike, **firewall_kwargs: Unpack[GuardOptions]) -> None:
        self.agentguard = GuardSession(spec, **firewall_kwargs)
        self._gate = _ToolGate(lambda _request: self.agentguard)

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
    "RUN_KEY",
    "STATE_KEY",
    "AgentGuardMiddleware",
    "AgentGuardState",
    "ToolNodeGuard",
    "guard_tool_node",
    "interrupt_approver",
]
