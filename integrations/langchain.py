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
* ``wrap_model_call`` sees each model turn inside the model node, before any tool runs
  (hooks of their own, ``before_model`` / ``after_model``, would add two graph nodes to
  every step, each costing LangGraph more than the check). Given a ``thread_id``, it
  saves the firewall state first, so a run interrupted (``interrupt()``, human in the
  loop) and resumed in another process continues from the calls it had made. A batch of
  tool calls is checked at once (``propose_batch``), and a STOP ends the run with an
  error ``ToolMessage`` per call, so no call runs. A turn without tool calls is the
  final answer, proposed as ``final_answer``; a refused answer is sent back to the
  model. The verdict is returned as a ``Command`` update beside the model's message
  (``ExtendedModelResponse``: the messages to add, ``jump_to: "end"`` or ``"model"``,
  read by the model node's own edge). An agent without tools has no tool node and its
  model node leads only to the end: a refused answer is asked for again in the node.
  Given an ``approver`` (it may ``interrupt``, and LangGraph re-runs the interrupted
  node on resume), the turn is checked in ``after_model`` instead
  (``can_jump_to=["end", "model"]``) and the state saved in ``before_model``, so that
  resuming re-runs the check, not the model call;
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
  handled at the model turn.)

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
import weakref
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
    from langchain.agents.middleware.types import (
        ExtendedModelResponse,
        ModelResponse,
        PrivateStateAttr,
    )
    from langgraph.channels.untracked_value import UntrackedValue
    from langgraph.types import Command
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

    def __new__(
        cls,
        spec: SpecLike,  # noqa: ARG004 - __init__'s
        *,
        resume: bool = True,  # noqa: ARG004
        keep_threads: int = 1024,  # noqa: ARG004
        **firewall_kwargs: Unpack[GuardOptions],
    ) -> AgentGuardMiddleware:
        """An approver may pause the run with an ``interrupt``, after which LangGraph
        re-runs the node: the turn must then be checked in a node of its own
        (``after_model``), or resuming would call the model again."""
        if cls is AgentGuardMiddleware and firewall_kwargs.get("approver") is not None:
            cls = _ApprovingMiddleware
        return super().__new__(cls)

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
        self._dialogues: weakref.WeakKeyDictionary[GuardSession, _Dialogue] = (
            weakref.WeakKeyDictionary()
        )

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
    # The turn is checked inside the model node (``wrap_model_call``): hooks of their own
    # (``before_model`` / ``after_model``) would add two graph nodes to every step, which
    # cost LangGraph far more than the check. The checkpoint and the verdict travel back as
    # a ``Command`` update applied with the model's message (``ExtendedModelResponse``);
    # the model node's own edge reads ``jump_to``. With an approver (which may interrupt),
    # the subclass below checks in ``after_model`` instead: see ``__new__``.
    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._compare_tools(request)
        turn = self._turn(request)
        response = handler(request)
        while (retry := turn.checked(response)) is not None:
            response = handler(retry)
        return turn.result()

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self._compare_tools(request)
        turn = self._turn(request)
        response = await handler(request)
        while (retry := turn.checked(response)) is not None:
            response = await handler(retry)
        return turn.result()

    def _turn(self, request: Any) -> _ModelTurn:
        session = self._session(request.state, request.runtime)
        saved = self._checkpoint(session, request.runtime)
        return _ModelTurn(session, self._dialogue(session), request, saved)

    def _dialogue(self, session: GuardSession) -> _Dialogue:
        with self._lock:
            dialogue = self._dialogues.get(session)
            if dialogue is None:
                dialogue = self._dialogues[session] = _Dialogue()
            return dialogue

    def _checkpoint(self, session: GuardSession, runtime: Any) -> dict[str, Any] | None:
        """The firewall state with the calls run so far, saved at each model turn, so a
        run interrupted (or crashed) and resumed elsewhere continues from here; needs a
        ``thread_id``."""
        if not self.resume or _thread_of(runtime) is None:
            return None
        return session.save_state()

    # the agent's tools: known here only, from the first model request ---------------------
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

    # each tool call -----------------------------------------------------------------
    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._gate.wrap(request, handler)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return await self._gate.awrap(request, handler)


class _ApprovingMiddleware(AgentGuardMiddleware):
    """The middleware when an approver is given: the turn is checked in ``after_model``,
    a node of its own, so that an approval's ``interrupt`` re-runs the check when the run
    resumes, not the model call; ``before_model`` saves the checkpoint."""

    @property
    def name(self) -> str:
        return AgentGuardMiddleware.__name__  # the graph's node names, approver or not

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if not self.resume or _thread_of(runtime) is None:
            return None
        saved = self._session(state, runtime).save_state()
        return None if saved is None else {STATE_KEY: saved}

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    @hook_config(can_jump_to=["end", "model"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        messages = state["messages"]
        if not messages or not isinstance(messages[-1], AIMessage):
            return None
        session = self._session(state, runtime)
        return _turn_verdict(session, self._dialogue(session), messages, ())

    @hook_config(can_jump_to=["end", "model"])
    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._compare_tools(request)
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self._compare_tools(request)
        return await handler(request)


class _ModelTurn:
    """One model turn, seen from inside the model node: the verdict on the model's
    response, and for an agent without tools the answers asked for again after a refusal.
    """

    def __init__(
        self, session: GuardSession, dialogue: _Dialogue, request: Any, saved: Any
    ) -> None:
        self.session = session
        self.dialogue = dialogue
        self.request = request
        self.saved = saved
        self.history: Sequence[Any] = _get(request.state, "messages") or []
        self.earlier: list[Any] = []  # refused answers and the notes that refused them
        self.retries = 0
        self.response: Any = None
        self.update: dict[str, Any] | None = None

    def checked(self, response: Any) -> Any:
        """Check the model's response; the request to send the model again, or None."""
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        history = [*self.history, *self.earlier] if self.earlier else self.history
        update = _turn_verdict(self.session, self.dialogue, history, response.result)
        self.response, self.update = response, update
        if update is None or update.get("jump_to") != "model" or self.request.tools:
            return None
        # An agent without tools has no tool node, and its model node's edge leads to the
        # end only (jump_to is not read there): the refused answer is asked for again here.
        self.earlier.extend([*response.result, *update["messages"]])
        self.retries += 1
        if 3 * self.retries >= _recursion_limit():  # the graph's bound (3 steps a loop)
            from langgraph.errors import GraphRecursionError

            raise GraphRecursionError("the model's answers were refused too many times")
        return self.request.override(messages=[*self.request.messages, *self.earlier])

    def result(self) -> Any:
        """What the model node returns: the response, with the verdict as a Command."""
        response = self.response
        if self.earlier:
            response = ModelResponse(
                result=[*self.earlier, *response.result],
                structured_response=response.structured_response,
            )
        update = self.update
        if self.saved is not None:
            update = {STATE_KEY: self.saved, **(update or {})}
        if update is None:
            return response
        return ExtendedModelResponse(model_response=response, command=Command(update=update))


def _recursion_limit() -> int:
    from langgraph.config import get_config

    try:
        return int(get_config().get("recursion_limit", 25))
    except RuntimeError:  # outside a runnable context
        return 25


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


class _Dialogue:
    """Where one invocation's reading of the conversation got to, so that each model turn
    reads only the messages added since the last (the history is append-only between
    turns; if it was rewritten, the whole of it is read again: the session observes each
    message once either way)."""

    __slots__ = ("_last_id", "_read")

    def __init__(self) -> None:
        self._read = 0
        self._last_id: str | None = None

    def observe(self, session: GuardSession, history: Sequence[Any], new: Sequence[Any]) -> None:
        """The user turns the agent received (``HumanMessage``, not agentguard's own notes)
        and the model's new message, as dialogue events, each once (docs/firewall.md);
        ``history`` is the conversation before this turn's ``new`` messages."""
        read = self._read
        if not (0 < read <= len(history) and history[read - 1].id == self._last_id):
            read = 0
        for index in range(read, len(history)):
            _observe_user(session, history[index], index)
        for offset, msg in enumerate(new):
            _observe_user(session, msg, len(history) + offset)
        total = len(history) + len(new)
        last = new[-1] if new else history[-1]
        key = last.id or f"#{total - 1}"
        session.observe("assistant", _text(last), key=key, tool_calls=len(last.tool_calls))
        self._read, self._last_id = total, last.id


def _observe_user(session: GuardSession, msg: Any, index: int) -> None:
    if isinstance(msg, HumanMessage) and msg.name != "agentguard":
        session.observe("user", _text(msg), key=msg.id or f"#{index}")


def _turn_verdict(
    session: GuardSession, dialogue: _Dialogue, history: Sequence[Any], new: Sequence[Any]
) -> dict[str, Any] | None:
    """What a model turn (``new``, after ``history``) changes in the graph state: None to
    go on, else the refusals to add and where to jump (docs/integrations.md)."""
    last = new[-1] if new else (history[-1] if history else None)
    if not isinstance(last, AIMessage):
        return None
    try:
        dialogue.observe(session, history, new)
    except RunStopped as stopped:  # a message broke a HARD_STOP constraint
        return {"messages": [AIMessage(content=blocked_text(stopped.decision))], "jump_to": "end"}
    if last.tool_calls:
        return _check_batch(session, last)
    return _check_answer(session, last)


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
