"""How the LangChain middleware finds the session of the invocation a hook runs in.

The state schema adds one private key, ``agentguard_firewall`` (checkpointed with the
conversation), holding a small document: the token naming the invocation that wrote it
and the firewall state saved for the next one (:func:`run_document`). One key, not two:
each key of the state is a LangGraph channel that every step of every invocation reads
and carries, whether the guard writes it or not (benchmarks/langchain_hooks.py). A
checkpoint written before this document existed holds the bare firewall state under
the same key; it is read as that state with no token (:func:`read_run_document`).
:class:`Invocations` maps run tokens and threads to their sessions, so one agent can be
invoked from many threads or asyncio tasks at once (docs/integrations.md, "Concurrent
invocations").
"""

from __future__ import annotations

import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Final

from typing_extensions import NotRequired

from agentguard.enforcement.options import RecordsAgain
from agentguard.errors import MissingExtraError
from agentguard.guard import GuardSession

from ._langchain_nesting import enclosing_sessions

try:
    from langchain.agents.middleware import AgentState
    from langchain.agents.middleware.types import PrivateStateAttr
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain") from exc


STATE_KEY: Final = "agentguard_firewall"
"""The guard's state key: the invocation's run token and the saved firewall state."""

RUN_FORMAT: Final = "agentguard.langchain-run/1"
"""The ``format`` of the document under :data:`STATE_KEY`."""


class AgentGuardState(AgentState[Any]):
    """The agent state plus agentguard's private key (absent from input and output).

    ``agentguard_firewall`` is checkpointed with the conversation, so the next
    invocation on the same ``thread_id`` continues the same trace; the run token in it
    is rewritten by every invocation's ``before_agent``, so concurrent invocations,
    each with its own channels, each find their own session.
    """

    agentguard_firewall: NotRequired[Annotated[dict[str, Any], PrivateStateAttr]]


def run_document(
    token: str | None,
    firewall: Mapping[str, Any] | None,
    dialogue: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The value stored under :data:`STATE_KEY`: ``token`` names the running invocation
    (None once it has ended), ``firewall`` is a ``Firewall.save()`` document or None,
    ``dialogue`` how far the run has read the conversation (``{"read": n, "last_id":
    id}``, the Dialogue's position; absent: from the start), so that the next invocation
    on the thread observes only the messages added since, not the earlier turns again."""
    doc: dict[str, Any] = {"format": RUN_FORMAT, "run": token, "firewall": firewall}
    if dialogue is not None:
        doc["dialogue"] = dict(dialogue)
    return doc


Position = dict[str, Any]
"""How far a run had read the conversation: ``{"read": n, "last_id": id}``."""


def saved_dialogue(value: Any) -> Position | None:
    """The dialogue position in a :data:`STATE_KEY` value, when it holds a well-formed
    one (a malformed or absent one reads the conversation from the start, as before
    positions were saved)."""
    if type(value) is not dict or value.get("format") != RUN_FORMAT:
        return None
    found = value.get("dialogue")
    if type(found) is not dict:
        return None
    read, last = found.get("read"), found.get("last_id")
    if type(read) is not int or read < 0 or not (last is None or type(last) is str):
        return None
    return {"read": read, "last_id": last}


def read_run_document(value: Any) -> tuple[str | None, Any]:
    """The run token and the saved firewall state in a :data:`STATE_KEY` value: a
    :func:`run_document`, or (as checkpointed before it existed) the bare firewall state,
    which names no run. A malformed state is returned as is, for ``Firewall.restore`` to
    reject with its own error."""
    if type(value) is dict and value.get("format") == RUN_FORMAT:
        token = value.get("run")
        return (token if type(token) is str else None), value.get("firewall")
    return None, value


def saved_firewall(values: Mapping[str, Any]) -> dict[str, Any] | None:
    """The firewall state checkpointed in a graph state's ``values`` (``Firewall.restore``
    continues it), whichever format wrote it; None if there is none."""
    saved: dict[str, Any] | None = read_run_document(values.get(STATE_KEY))[1]
    return saved


def answered_calls(messages: Any) -> frozenset[str]:
    """The tool-call ids a conversation holds answers to (its tool messages')."""
    found = (getattr(m, "tool_call_id", None) for m in messages or ())
    return frozenset(c for c in found if isinstance(c, str))


class Invocations:
    """The sessions of a middleware's invocations: running ones by run token, the latest
    per thread (``keep_threads`` of them), the ended ones by token, and the last to end."""

    def __init__(
        self,
        new_session: Callable[[], GuardSession],
        *,
        resume: bool,
        keep_threads: int,
        start_run: Callable[[GuardSession, Any, RecordsAgain], None] | None = None,
    ) -> None:
        self._new_session = new_session
        self._start_run = start_run  # how a session starts from a checkpoint (None: as saved)
        self.resume = resume
        self.keep_threads = keep_threads
        self._lock = threading.RLock()
        self._runs: dict[str, GuardSession] = {}
        self._tokens: dict[GuardSession, str] = {}  # running session -> its token
        self._threads: OrderedDict[str, GuardSession] = OrderedDict()
        # token -> the ended session and the run control of the invocation that ended it
        self._ended: OrderedDict[str, tuple[GuardSession, object]] = OrderedDict()
        # sessions begun mid-run, with where their checkpoint had read the conversation to
        self._midrun: weakref.WeakKeyDictionary[GuardSession, Position | None] = (
            weakref.WeakKeyDictionary()
        )
        self.last = new_session()
        self._nobody: GuardSession | None = None
        # each begun session by its graph invocation's RunControl (held, so its id is not
        # reused): what the state's key says cannot move a call off its own invocation.
        # None: several sessions began under one RunControl (a caller passing one to
        # several invocations, a graph invoked inside a tool): which is a call's own is
        # not known, and a call that lost its token is refused
        self._controls: OrderedDict[int, tuple[object, GuardSession | None]] = OrderedDict()
        self._nested: set[str] = set()  # tokens of invocations begun inside a call of a run
        self._mine: weakref.WeakSet[GuardSession] = weakref.WeakSet()  # begun here, ended too

    def for_thread(self, thread_id: str) -> GuardSession | None:
        """The latest invocation's session on ``thread_id`` (running or finished)."""
        with self._lock:
            return self._threads.get(thread_id)

    def running(self) -> tuple[GuardSession, ...]:
        """Sessions of invocations that started and have not finished."""
        with self._lock:
            return tuple(self._runs.values())

    def token_of(self, session: GuardSession) -> str | None:
        """The run token of a running session (None once it has ended)."""
        return self._tokens.get(session)

    def begin(self, state: Any, runtime: Any, token: str) -> GuardSession:
        """A new invocation's session, continuing the checkpointed run if ``resume``; an
        invocation inside a tool call of a running session joins it (``_langchain_nesting``)."""
        with self._lock:
            # (an ended run too: a call of it still running is refused, never judged afresh)
            outer = next((s for s in enclosing_sessions() if s in self._mine), None)
            if outer is not None:
                self._runs[token] = outer
                self._nested.add(token)
                return outer
        session = self._new_session()
        saved = read_run_document(state_value(state, STATE_KEY))[1] if self.resume else None
        # a checkpoint older than the log: the calls that ran since are recorded again
        # from the conversation, so each must be in it (a fork's is not: refused)
        stale = RecordsAgain(answered_calls(state_value(state, "messages")))
        if self._start_run is None:
            session.start_run(state=saved, stale=stale)
        else:
            self._start_run(session, saved, stale)
        thread = thread_of(runtime)
        control = run_control()
        with self._lock:
            self._mine.add(session)
            self._runs[token] = session
            self._tokens[session] = token
            if control is not None:
                known = self._controls.get(id(control))
                shared = known is not None and known[0] is control and known[1] is not session
                self._controls[id(control)] = (control, None if shared else session)
                self._controls.move_to_end(id(control))
                while len(self._controls) > max(self.keep_threads, 64):
                    self._controls.popitem(last=False)
            if thread is not None:
                self._threads[thread] = session
                self._threads.move_to_end(thread)
                self._forget_old_threads()
        return session

    def nested_token(self, token: str) -> bool:
        return token in self._nested

    def nested(self, state: Any) -> bool:
        """Was the invocation ``state`` belongs to begun inside a tool call of a run?"""
        if not self._nested:  # the common case: no lock
            return False
        value = state_value(state, STATE_KEY)
        return type(value) is dict and value.get("run") in self._nested

    def leave(self, state: Any) -> None:
        """A nested invocation ended: the run it joined goes on."""
        value = state_value(state, STATE_KEY)
        token = value.get("run") if type(value) is dict else None
        if type(token) is not str:
            return
        with self._lock:
            self._nested.discard(token)
            self._runs.pop(token, None)

    def _forget_old_threads(self) -> None:
        idle = [t for t, s in self._threads.items() if not s.active]
        for thread in idle[: max(0, len(self._threads) - self.keep_threads)]:
            del self._threads[thread]

    def find(self, state: Any, runtime: Any) -> GuardSession:
        """The session of the invocation ``state`` belongs to (begun if none is known)."""
        value = state_value(state, STATE_KEY)
        token = value.get("run") if type(value) is dict else None
        if type(token) is str:  # a running invocation: one lock-free lookup (GIL-atomic)
            running = self._runs.get(token)
            if running is not None:
                return running
        else:
            token = None
        thread = thread_of(runtime)
        with self._lock:
            if token is not None and token in self._runs:
                return self._runs[token]
            own = self._own_invocation()
            if own is not None:
                # the state's key was changed under the running invocation (a tool's
                # Command, a node's Send, an edit in place): its own session goes on,
                # ended or not, never one begun afresh
                return own
            ended = None if token is None else self._ended.get(token)
            if ended is not None and ended[1] is run_control():
                return ended[0]  # a call of the invocation that ended (a sibling raised)
            latest = None if thread is None else self._threads.get(thread)
            if latest is not None and latest.active:
                return latest  # resumed after an interrupt, the token lost or unknown
            if thread is None and token is not None:
                # no thread, no checkpoint to continue from: a call of an invocation that
                # ended, or that this middleware never began, is refused (by the ended
                # run, which logs it), never judged by a run begun afresh
                return ended[0] if ended is not None else self._refusing()
            # resumed in another process (the token is unknown here), or a later
            # invocation re-running the steps an ended one left (the token is spent):
            # continue from the checkpointed state, under the lock, so parallel tool
            # calls of that run find one session, not one each
            if token is None or ended is not None:
                token = uuid.uuid4().hex if thread else ""
            session = self.begin(state, runtime, token)
            self._midrun[session] = saved_dialogue(value) if self.resume else None
            return session

    def _own_invocation(self) -> GuardSession | None:
        """The session begun by the graph invocation the caller runs in, if any (the
        refusing session when several began under its RunControl)."""
        control = run_control()
        if control is None:
            return None
        found = self._controls.get(id(control))
        if found is None or found[0] is not control:
            return None
        return found[1] if found[1] is not None else self._refusing()

    def _refusing(self) -> GuardSession:
        """A session with no run that refuses every call (a run token nobody knows)."""
        if self._nobody is None:
            self._nobody = self._new_session()
            self._nobody.closed = True
        return self._nobody

    def begun_midrun(self, session: GuardSession) -> tuple[bool, Position | None]:
        """Once per session: did :meth:`find` begin it in the middle of a run (resumed
        in another process, or after a crash), and how far had the checkpoint it was
        restored from read the conversation (None: not known)? Its first model turn then
        records the calls that ran before it took over
        (:func:`~._langchain_turns.record_calls_run_elsewhere`)."""
        if not self._midrun:  # the common case: one truth test, no lock
            return False, None
        with self._lock:
            if session not in self._midrun:
                return False, None
            return True, self._midrun.pop(session)

    def end(self, session: GuardSession) -> None:
        """Finish the session for good: later tool calls of its invocation are refused."""
        session.closed = True
        session.finish_run()
        control = run_control()
        with self._lock:
            self._tokens.pop(session, None)
            for token in [t for t, s in self._runs.items() if s is session]:
                del self._runs[token]
                self._ended[token] = (session, control)
                while len(self._ended) > self.keep_threads:
                    self._ended.popitem(last=False)
            self.last = session


def state_value(state: Any, key: str) -> Any:
    """A state value, whether the state is a dict or a model object."""
    if type(state) is dict:  # the usual case, ahead of the slower Mapping check
        return state.get(key)
    if isinstance(state, Mapping):
        return state.get(key)
    return getattr(state, key, None)


def thread_of(runtime: Any) -> str | None:
    """The ``thread_id`` of the invocation (``Runtime`` and ``ToolRuntime`` both carry
    ``execution_info``; its ``thread_id`` is the config's, None if none was given)."""
    info = getattr(runtime, "execution_info", None)
    thread = getattr(info, "thread_id", None)
    return None if thread is None else str(thread)


def run_control() -> object:
    """The ``RunControl`` of the graph invocation the caller runs in: LangGraph makes a
    fresh one per top-level ``invoke`` (a subgraph shares its parent's), so it tells the
    calls of the invocation that ended a session from a later invocation re-running
    what that one left. None outside a graph, or on a LangGraph without it."""
    from langgraph.runtime import get_runtime

    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a runnable context
        return None
    return getattr(runtime, "control", None)


__all__ = [
    "RUN_FORMAT",
    "STATE_KEY",
    "AgentGuardState",
    "Invocations",
    "read_run_document",
    "run_control",
    "run_document",
    "saved_dialogue",
    "saved_firewall",
    "state_value",
    "thread_of",
]
