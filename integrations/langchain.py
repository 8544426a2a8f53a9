"""Guard a LangChain v1 agent (``create_agent``) or a LangGraph ``ToolNode``.

``AgentGuardMiddleware(spec, **firewall_kwargs)`` plugs into
``create_agent(model, tools, middleware=[...])``:

* ``before_agent`` starts a session (firewall, attempts) for the invocation and names it
  in the graph state: the guard's one private key, ``agentguard_firewall`` (checkpointed
  with the conversation), holds a run token beside the saved firewall state
  (``_langchain_sessions.run_document``); every later hook and tool call finds its
  session by that token, so one agent can be invoked from many threads or asyncio tasks
  at once;
* ``after_agent`` checks an answer the run ends with only now (a structured answer
  given beside tool calls, ``return_direct`` output: ``_langchain_answers``; refused,
  the model is asked again), saves the firewall state into that key (the token spent)
  and finishes the session (deferred constraints are evaluated there, also when the run
  was ended early). With a checkpointer, the next invocation on the same ``thread_id``
  restores it and continues the trace and the log's chain, in this process or another
  (:func:`saved_firewall` reads it). A thread saved under another spec (compared by
  meaning) is judged again under this one by default (``_langchain_spec_change``);
* ``wrap_model_call`` sees each model turn inside the model node, before any tool runs
  (``before_model`` / ``after_model`` hooks would add two graph nodes to every step).
  Given a ``thread_id``, it saves the firewall state first, so a run interrupted and
  resumed in another process continues from the calls it had made. The batch of tool
  calls is checked at once (``propose_batch``, each call's arguments as its tool will
  receive them), and a STOP ends the run with an error ``ToolMessage`` per call. A turn
  without tool calls, or with a structured answer (``response_format``), is the final
  answer; a refused one is sent back to the model. The verdict travels as a ``Command``
  beside the model's message (``ExtendedModelResponse``, ``jump_to`` read by the model
  node's edge; ``_langchain_turns``). Given an ``approver`` (it may ``interrupt``, and
  LangGraph re-runs the interrupted node), the turn is checked in ``after_model`` and
  the state saved in ``before_model``, so resuming re-runs the check, not the model;
* ``wrap_tool_call`` / ``awrap_tool_call`` hand the middleware inside the guard a request
  whose tool is checked where LangGraph invokes it (``_langchain_calls``): the arguments
  as the tool's schema gives them to it (coerced, defaults filled in, injected ones left
  out, a reviewer's edit applied) are proposed, started, run as that checked snapshot,
  and completed; every retry is a call. An exception leaving the wrapper leaves the
  tool node, so the session is finished before it propagates: the guard must be outside
  every middleware that may handle a tool's error, and ``create_agent`` refuses any
  other order (:class:`MiddlewareOrderError`, ``_langchain_order``).

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

import threading
import uuid
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from typing_extensions import Unpack

from agentguard.enforcement.approval import Approval, ApprovalRequest
from agentguard.enforcement.options import RecordsAgain
from agentguard.enforcement.prototype import spec_hashes
from agentguard.errors import MissingExtraError
from agentguard.guard import GuardOptions, GuardSession
from agentguard.scoring.inputs import SpecLike

from ._langchain_answers import Answers
from ._langchain_bound_tools import compare_bound_tools
from ._langchain_hooks import presign_hooks as _presign_hooks  # benchmarks use this name
from ._langchain_offer import offered
from ._langchain_order import MiddlewareOrderError, check_placement
from ._langchain_resume import record_calls_run_elsewhere
from ._langchain_sessions import (
    STATE_KEY,
    AgentGuardState,
    Invocations,
    Position,
    read_run_document,
    run_document,
    saved_dialogue,
    saved_firewall,
    state_value,
    thread_of,
)
from ._langchain_spec_change import SpecChange, check_spec_change, start_thread_run
from ._langchain_tools import ToolGate, ToolNodeGuard, guard_tool_node
from ._langchain_turns import Dialogue, ModelTurn, turn_verdict

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
    from langchain_core.messages import AnyMessage
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain") from exc


class AgentGuardMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Put a ``create_agent`` agent behind the firewall for ``spec``.

    Every invocation gets its own :class:`GuardSession` (firewall, attempts, trace), so
    one agent can be invoked from many threads or tasks at once. ``.agentguard`` is the
    last finished invocation's session, :meth:`session_for` the latest one on a thread.
    With a checkpointer, an invocation on a ``thread_id`` continues the trace its
    previous one left in the checkpoint (``resume=False`` starts every invocation afresh).
    """

    state_schema = AgentGuardState

    def __new__(cls, *args: Any, **kwargs: Any) -> AgentGuardMiddleware:  # noqa: ARG004
        """An approver may pause the run with an ``interrupt``, after which LangGraph
        re-runs the node: the turn must then be checked in a node of its own
        (``after_model``), or resuming would call the model again. (Any arguments are
        accepted, as ``copy`` and ``pickle`` call ``__new__`` with none.)"""
        if cls is AgentGuardMiddleware and kwargs.get("approver") is not None:
            cls = _ApprovingMiddleware
        return super().__new__(cls)

    def __init__(
        self,
        spec: SpecLike,
        *,
        resume: bool = True,
        keep_threads: int = 1024,
        on_spec_change: SpecChange = "rejudge",
        **firewall_kwargs: Unpack[GuardOptions],
    ) -> None:
        """``on_spec_change``: what an invocation does with a thread checkpointed under
        another spec: ``"rejudge"`` its executed calls under this one (replayed, no tool
        runs again), ``"restart"`` its trace afresh, or ``"error"`` (refuse it); see
        docs/integrations.md, "Conversations that continue"."""
        super().__init__()
        self.spec = _loaded(spec, firewall_kwargs.get("registry"))
        self.resume = resume
        self.keep_threads = keep_threads
        self.on_spec_change = check_spec_change(on_spec_change)
        self._kwargs = firewall_kwargs
        self._lock = threading.Lock()
        self._invocations = Invocations(
            self._new_session,
            resume=resume,
            keep_threads=keep_threads,
            start_run=self._start_thread_run,
        )
        self._spec_hashes = spec_hashes(self.spec)
        # sessions whose thread changed spec and whose conversation is read again in full
        self._reread: weakref.WeakSet[GuardSession] = weakref.WeakSet()
        self._gate = ToolGate(self._session_of_request, self._invocations.end)
        self._answers = Answers(self._gate)
        self._tools_compared = False
        self._dialogues: weakref.WeakKeyDictionary[GuardSession, Dialogue] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def tools(self) -> list[Any]:  # type: ignore[override]  # a property: read, it checks
        """No tools of its own. ``create_agent`` reads this of every middleware before it
        builds the graph: the guard checks its place in the list then (_langchain_order)."""
        check_placement(self)
        return []

    # what runs left behind ---------------------------------------------------------
    @property
    def agentguard(self) -> GuardSession:
        """The last finished invocation's session (an idle one before any finished)."""
        return self._invocations.last

    def session_for(self, thread_id: str) -> GuardSession | None:
        """The latest invocation's session on ``thread_id`` (running or finished)."""
        return self._invocations.for_thread(thread_id)

    @property
    def running(self) -> tuple[GuardSession, ...]:
        """Sessions of invocations that started and have not finished."""
        return self._invocations.running()

    # sessions, one per invocation ------------------------------------------------------
    def _new_session(self) -> GuardSession:
        return GuardSession(self.spec, **self._kwargs)

    def _start_thread_run(self, session: GuardSession, saved: Any, stale: RecordsAgain) -> None:
        """Start a session from its thread's checkpoint, whatever spec it was saved under."""
        changed = self.on_spec_change
        if start_thread_run(session, saved, self.spec, self._spec_hashes, changed, stale):
            with self._lock:
                self._reread.add(session)

    def _session(self, state: Any, runtime: Any) -> GuardSession:
        return self._invocations.find(state, runtime)

    def _session_of_request(self, request: Any) -> GuardSession:
        return self._session(getattr(request, "state", None), getattr(request, "runtime", None))

    # run lifecycle ----------------------------------------------------------------
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        token = uuid.uuid4().hex
        session = self._invocations.begin(state, runtime, token)
        if self._invocations.nested_token(token):  # inside a call of a run: part of it
            return {STATE_KEY: run_document(token, None)}
        position = saved_dialogue(state_value(state, STATE_KEY)) if self.resume else None
        if session in self._reread:  # the old spec kept no messages: read them all again
            position = None
        if position is not None:  # the run goes on: earlier turns' messages are not new
            with self._lock:
                self._dialogues[session] = Dialogue(position)
        # the token names this invocation to every later hook; the state it was restored
        # from stays beside it until the first save (``resume=False`` keeps it unread)
        return {STATE_KEY: run_document(token, _previous(state), position)}

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    @hook_config(can_jump_to=["model"])
    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if self._invocations.nested(state):  # its answer is its tool call's result
            self._invocations.leave(state)
            return None
        session = self._session(state, runtime)
        answer = self._answers.at_end(session, state)  # given only as the run ends
        if answer is not None and answer.get("jump_to") == "model":
            return answer  # refused: the model is asked again, the run goes on
        ended = self._end(session, state, runtime)
        return {**(ended or {}), **(answer or {})} or None

    def _end(self, session: GuardSession, state: Any, runtime: Any) -> dict[str, Any] | None:
        thread = thread_of(runtime)
        saved = session.save_state() if self.resume and thread is not None else None
        self._invocations.end(session)
        if thread is None:  # no thread, no checkpoint
            return None
        # the token is spent: a later invocation re-running this thread's steps without
        # ``before_agent`` (``invoke(None)`` after ``update_state``) begins a session
        previous = _previous(state) if saved is None else saved
        return {STATE_KEY: run_document(None, previous, self._position(session, state))}

    @hook_config(can_jump_to=["model"])
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
        turn, saved = self._turn(request)
        response = handler(offered(turn.session, request))
        while (retry := turn.checked(response)) is not None:
            response = handler(offered(turn.session, retry))
        self._answers.noted(turn.session, turn.verdict)
        return turn.result(saved)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self._compare_tools(request)
        turn, saved = self._turn(request)
        response = await handler(offered(turn.session, request))
        while (retry := turn.checked(response)) is not None:
            response = await handler(offered(turn.session, retry))
        self._answers.noted(turn.session, turn.verdict)
        return turn.result(saved)

    def _turn(self, request: Any) -> tuple[ModelTurn, dict[str, Any] | None]:
        """The turn, and the checkpoint to write with it: the firewall state with the calls
        run so far, saved before the model answers, so a run interrupted (or crashed) and
        resumed elsewhere continues from here; needs a ``thread_id``."""
        runtime = request.runtime
        session = self._session(request.state, runtime)
        if self._invocations.nested(request.state):  # a sub-agent's turn: its calls only
            named = {str(t.name): t for t in request.tools or () if not isinstance(t, Mapping)}
            return ModelTurn(session, Dialogue(None), request, named, nested=True), None
        tools = self._answers.turn(session, getattr(request, "tools", None))
        midrun, position = self._invocations.begun_midrun(session)
        turn = ModelTurn(session, self._dialogue(session, position), request, tools)
        if midrun:  # resumed from another process
            record_calls_run_elsewhere(session, turn.history, position, tools)
        if not self.resume or thread_of(runtime) is None:
            return turn, None
        return turn, self._checkpoint(session)

    def _checkpoint(self, session: GuardSession) -> dict[str, Any] | None:
        """The state update saving the running session's firewall state with its token."""
        saved = session.save_state()
        if saved is None:
            return None
        token = self._invocations.token_of(session)
        return {STATE_KEY: run_document(token, saved, self._position(session, None))}

    def _position(self, session: GuardSession, state: Any) -> dict[str, Any] | None:
        """How far ``session`` has read the conversation, for the checkpoint; before its
        first turn, where the checkpoint it continues had got to (``state``'s)."""
        dialogue = self._dialogues.get(session)
        if dialogue is not None:
            found = dialogue.position()
            if found is None and not session.trace.names:  # nothing read, nothing run yet:
                return {"read": 0, "last_id": None}  # the start, a position to trust
            return found
        return saved_dialogue(state_value(state, STATE_KEY)) if state is not None else None

    def _dialogue(self, session: GuardSession, position: Position | None = None) -> Dialogue:
        """How far ``session`` read the conversation; a session begun mid-run (resumed
        elsewhere) starts where its checkpoint had read to (``position``), so no message
        read before enters its trace twice."""
        dialogue = self._dialogues.get(session)  # known after the first turn: no lock
        if dialogue is not None:
            return dialogue
        with self._lock:
            dialogue = self._dialogues.get(session)
            if dialogue is None:
                dialogue = self._dialogues[session] = Dialogue(position)
            return dialogue

    # the agent's tools: known here only, from the first model request ---------------------
    def _compare_tools(self, request: Any) -> None:
        """Once per middleware: the spec's tools against the tools bound to the model
        (a ToolMismatchWarning and a log event per difference, docs/firewall.md). With
        ``strict_tools=True`` a difference is a ToolMismatchError instead, raised at every
        model request until the tools fit (a strict run never proceeds on a misfit)."""
        if self._tools_compared:
            return
        strict = self._kwargs.get("strict_tools", False) is True
        with self._lock:
            if self._tools_compared:
                return
            self._tools_compared = not strict  # strict: compared (and refused) each time
        tools = getattr(request, "tools", None)
        if tools is None:
            return
        firewall = self._session_of_request(request).firewall
        compare_bound_tools(self.spec, tools, firewall, strict=strict)  # raises when strict
        self._tools_compared = True

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
        session = self._session(state, runtime)
        midrun, position = self._invocations.begun_midrun(session)
        if midrun:  # resumed from another process
            # recorded before the checkpoint below, so a later resume finds them in it
            messages = state_value(state, "messages") or []
            record_calls_run_elsewhere(
                session, messages, position, self._answers.turn(session, None)
            )
        if not self.resume or thread_of(runtime) is None:
            return None
        return self._checkpoint(session)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    @hook_config(can_jump_to=["end", "model"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        messages: list[AnyMessage] = state["messages"]
        if not messages:
            return None
        session = self._session(state, runtime)
        tools = self._answers.turn(session, None)  # the model call's, known from its request
        midrun, position = self._invocations.begun_midrun(session)
        if midrun:  # resumed without a model call first
            record_calls_run_elsewhere(session, messages[:-1], position, tools)
        structured = state_value(state, "structured_response")
        dialogue = self._dialogue(session, position)
        verdict = turn_verdict(session, dialogue, messages, (), tools=tools, structured=structured)
        self._answers.noted(session, verdict)
        return None if verdict is None else verdict.state_update(messages)

    @hook_config(can_jump_to=["end", "model"])
    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._compare_tools(request)
        session = self._session_of_request(request)
        self._answers.turn(session, request.tools)
        return handler(offered(session, request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self._compare_tools(request)
        session = self._session_of_request(request)
        self._answers.turn(session, request.tools)
        return await handler(offered(session, request))


_presign_hooks(AgentGuardMiddleware)
_presign_hooks(_ApprovingMiddleware)


def interrupt_approver(request: ApprovalRequest) -> Approval:
    """An approver for ``ASK`` constraints that asks through a LangGraph ``interrupt``.

    The interrupt's value is ``{"agentguard": "approval", **request.to_dict()}``; resume
    with ``Command(resume=True | False | {"approved": bool, "by": ..., "reason": ...})``.
    """
    from langgraph.types import interrupt

    return Approval.from_value(interrupt({"agentguard": "approval", **request.to_dict()}))


def _previous(state: Any) -> Any:
    """The firewall state checkpointed under :data:`STATE_KEY` before this invocation."""
    return read_run_document(state_value(state, STATE_KEY))[1]


def _loaded(spec: Any, registry: Any) -> Any:
    """Parse the spec once, not once per invocation (the one rule: scoring/inputs.py)."""
    from agentguard.scoring.inputs import coerce_spec

    return coerce_spec(spec, registry)


__all__ = [
    "STATE_KEY",
    "AgentGuardMiddleware",
    "AgentGuardState",
    "MiddlewareOrderError",
    "ToolNodeGuard",
    "guard_tool_node",
    "interrupt_approver",
    "saved_firewall",
]
