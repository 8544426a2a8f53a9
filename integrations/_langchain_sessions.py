"""How the LangChain middleware finds the session of the invocation a hook runs in.

The state schema adds two private keys: ``agentguard_run`` (an ``UntrackedValue``, per
invocation, never checkpointed) names the invocation, and ``agentguard_firewall``
(checkpointed with the conversation) carries the firewall state across invocations on a
``thread_id``. :class:`Invocations` maps run tokens and threads to their sessions, so one
agent can be invoked from many threads or asyncio tasks at once (docs/integrations.md,
"Concurrent invocations").
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from typing_extensions import NotRequired

from agentguard.errors import MissingExtraError
from agentguard.guard import GuardSession

try:
    from langchain.agents.middleware import AgentState
    from langchain.agents.middleware.types import PrivateStateAttr
    from langgraph.channels.untracked_value import UntrackedValue
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain") from exc


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


class Invocations:
    """The sessions of a middleware's invocations: running ones by run token, the latest
    per thread (``keep_threads`` of them), the ended ones by token, and the last to end."""

    def __init__(
        self, new_session: Callable[[], GuardSession], *, resume: bool, keep_threads: int
    ) -> None:
        self._new_session = new_session
        self.resume = resume
        self.keep_threads = keep_threads
        self._lock = threading.RLock()
        self._runs: dict[str, GuardSession] = {}
        self._threads: OrderedDict[str, GuardSession] = OrderedDict()
        self._ended: OrderedDict[str, GuardSession] = OrderedDict()  # token -> ended session
        self.last = new_session()

    def for_thread(self, thread_id: str) -> GuardSession | None:
        """The latest invocation's session on ``thread_id`` (running or finished)."""
        with self._lock:
            return self._threads.get(thread_id)

    def running(self) -> tuple[GuardSession, ...]:
        """Sessions of invocations that started and have not finished."""
        with self._lock:
            return tuple(self._runs.values())

    def begin(self, state: Any, runtime: Any, token: str) -> GuardSession:
        """A new invocation's session, continuing the checkpointed run if ``resume``."""
        session = self._new_session()
        saved = state_value(state, STATE_KEY) if self.resume else None
        session.start_run(state=saved)
        thread = thread_of(runtime)
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

    def find(self, state: Any, runtime: Any) -> GuardSession:
        """The session of the invocation ``state`` belongs to (begun if none is known)."""
        token = state_value(state, RUN_KEY)
        if token is not None:  # a running invocation: one lock-free lookup (GIL-atomic)
            running = self._runs.get(token)
            if running is not None:
                return running
        thread = thread_of(runtime)
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
            return self.begin(state, runtime, token or (uuid.uuid4().hex if thread else ""))

    def end(self, session: GuardSession) -> None:
        """Finish the session for good: later tool calls of its invocation are refused."""
        session.closed = True
        session.finish_run()
        with self._lock:
            for token in [t for t, s in self._runs.items() if s is session]:
                del self._runs[token]
                self._ended[token] = session
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


__all__ = ["RUN_KEY", "STATE_KEY", "AgentGuardState", "Invocations", "state_value", "thread_of"]
