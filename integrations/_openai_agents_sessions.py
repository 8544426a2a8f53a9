"""The turns of one SDK ``Session`` are one run: the firewall goes on from turn to turn.

``Runner.run(agent, input, session=s)`` is one *turn* of the conversation ``s`` holds;
the SDK keeps its history and the model reads it again, so a refund made (or a run
stopped) in turn 1 is part of what turn 2 continues. Judging turn 2 with a fresh
firewall would forget both: a second refund under "at most one" would run, a run
stopped by a HARD_STOP would take calls again, and a refund whose identity check ran
in turn 1 would be refused. So a guard keeps, per session, the run its last turn
belonged to, and the next turn continues it (smolagents' ``run(reset=False)``, a
LangGraph thread): the same run id, the firewall's counts and stops, one log chain.

Why the runner's entry points are wrapped: the SDK hands no hook, guardrail or tool
context the run's session (nor its ``session_id``). ``AgentRunner.run`` (which
``Runner.run`` and ``Runner.run_sync`` call) and ``AgentRunner.run_streamed`` are
wrapped once per process to note the ``session`` they were given in a context variable,
and nothing else; every task the run starts copies it, so every event of the run sees
it. Sessions are keyed by ``session_id``: a new ``SQLiteSession("conv-1", db)`` object per
request (as a web server builds them) is still conversation ``conv-1``.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextvars import ContextVar
from typing import Any, Final

from agentguard.errors import AgentGuardError, MissingExtraError

from ._openai_agents_run import AgentRun

try:
    from agents.run import AgentRunner
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openai-agents", "openai-agents") from exc

KEEP_SESSIONS: Final = 1024
"""Sessions whose run a guard keeps by default (the latest used; a running one is kept)."""

_SESSION: ContextVar[Any] = ContextVar("agentguard_openai_agents_session", default=None)
"""The ``session=`` of the ``Runner.run`` call the current code runs in (None: none)."""

_IN_RUN: ContextVar[bool] = ContextVar("agentguard_openai_agents_in_run", default=False)
"""Is the current code inside a ``Runner.run`` (a tool, a hook, a sub-agent, a task)?"""

_WRAPPED: Final = "__agentguard_notes_session__"


class GuardControlError(AgentGuardError, RuntimeError):
    """A guard's control (``next_run``...) was called from inside a run of its agent."""


def refuse_inside_run(what: str) -> None:
    """Refuse ``what`` (a control that ends or replaces runs) from inside a run: a tool
    reaches its agent (``ToolContext.agent``), and through it ``agent.agentguard``; were
    the control open to it, the agent could end its own run and have its next turn
    judged by a fresh firewall."""
    if _IN_RUN.get():
        raise GuardControlError(
            f"agentguard: {what} cannot be called from inside a run of a guarded agent "
            "(a tool, a hook, a sub-agent): it would let the agent reset its own guard; "
            "call it between runs"
        )


def current_session_key() -> Hashable | None:
    """The key of the session the current run was given (None: a run without one)."""
    session = _SESSION.get()
    return None if session is None else session_key(session)


def session_key(session: Any) -> Hashable:
    """A session's key: its ``session_id`` (a ``str`` also names one); a session object
    without a textual id is keyed by itself (identity)."""
    if isinstance(session, str):
        return session
    found = getattr(session, "session_id", None)
    return found if isinstance(found, str) else _ByIdentity(session)


class _ByIdentity:
    """A key that is one object (held, so its id is never reused while keyed)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ByIdentity) and other.value is self.value


def watch_sessions() -> None:
    """Wrap the runner's entry points (once per process) to note each run's session."""
    for name, wrap in (("run", _noting_async), ("run_streamed", _noting)):
        entry = getattr(AgentRunner, name)
        if not getattr(entry, _WRAPPED, False):
            setattr(AgentRunner, name, wrap(entry))


def _noting_async(entry: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(entry)
    async def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        token = _SESSION.set(kwargs.get("session"))  # None too: no outer run's session leaks
        inside = _IN_RUN.set(True)
        try:
            return await entry(self, *args, **kwargs)
        finally:
            _IN_RUN.reset(inside)
            _SESSION.reset(token)

    setattr(run, _WRAPPED, True)
    return run


def _noting(entry: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(entry)
    def run_streamed(self: Any, *args: Any, **kwargs: Any) -> Any:
        token = _SESSION.set(kwargs.get("session"))  # the run's task copies it, as it starts
        inside = _IN_RUN.set(True)
        try:
            return entry(self, *args, **kwargs)
        finally:
            _IN_RUN.reset(inside)
            _SESSION.reset(token)

    setattr(run_streamed, _WRAPPED, True)
    return run_streamed


class Sessions:
    """The run of each session (by key), least recently used first; at most ``keep``
    sessions whose run is idle (ended) are kept: a running or paused run is never
    forgotten while it goes on. Not locked: :class:`Runs` calls it under its lock."""

    def __init__(self, keep: int = KEEP_SESSIONS) -> None:
        self.keep = keep
        self._runs: OrderedDict[Hashable, AgentRun] = OrderedDict()

    def get(self, key: Hashable) -> AgentRun | None:
        run = self._runs.get(key)
        if run is not None:
            self._runs.move_to_end(key)
        return run

    def put(self, key: Hashable, run: AgentRun, live: Callable[[AgentRun], bool]) -> None:
        """``run`` is now the session's; the oldest idle sessions beyond ``keep`` go."""
        self._runs[key] = run
        self._runs.move_to_end(key)
        excess = len(self._runs) - max(self.keep, 0)
        if excess > 0:
            idle = [k for k, r in self._runs.items() if not live(r)][:excess]
            for old in idle:
                del self._runs[old]

    def pop(self, key: Hashable) -> AgentRun | None:
        return self._runs.pop(key, None)

    def __len__(self) -> int:
        return len(self._runs)


__all__ = [
    "KEEP_SESSIONS",
    "Sessions",
    "current_session_key",
    "session_key",
    "watch_sessions",
]
