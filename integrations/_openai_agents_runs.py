"""Which run an SDK event belongs to: one stable identity per run, across its pauses.

Within one ``Runner.run`` call every hook, guardrail and tool context carries the run's
``Usage`` object, so the run is found by it. A run paused for a human's approval is
resumed by a new ``Runner.run(agent, state)`` with a *copy* of that object (or one read
back from JSON in another process), so a second key is needed: the ids of the calls the
model made. A resumed run's context lists them (the SDK keeps a record of each call in
the run's context and carries it in the ``RunState``), and a resumed call carries its
own; a run holding one of those ids is the run that continues, with its firewall, its
counts and its log chain. A context that lists calls no run here holds (a state resumed
without its firewall, or long forgotten) continues a run agentguard cannot judge: its
calls are refused, never judged by a fresh firewall that forgot the run's history.

A run nested in one of this run's tool calls (an ``Agent.as_tool`` agent, or a guarded
agent a tool's function runs) is part of that run: the wrapped invoker marks the calls
it runs (:func:`enclosing`), so the nested run's calls join the enclosing run's trace.

A new ``Runner.run`` given an SDK ``Session`` is the next turn of that session's run
(:mod:`._openai_agents_sessions`): it continues the run its last turn belonged to (the
same one while it goes on; once it ended, a firewall restored from it), never a fresh
one. Without a session a ``Runner.run`` is a run of its own, whatever its input holds.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

from agentguard.enforcement.report import FirewallReport
from agentguard.errors import AgentGuardError

from ._openai_agents_run import AgentRun
from ._openai_agents_sessions import Sessions, current_session_key, refuse_inside_run

KEEP_ENDED: Final = 256
"""Ended runs remembered (by their usage objects and call ids) for their late events."""

_ENCLOSING: ContextVar[tuple[tuple[int, AgentRun], ...]] = ContextVar(
    "agentguard_openai_agents_enclosing", default=()
)
"""The runs whose tool call the current code runs in, innermost first, keyed by guard."""


@contextmanager
def enclosing_call(owner: object, run: AgentRun) -> Iterator[None]:
    """Code run inside this block (a tool's function) is inside a call of ``run``."""
    token = _ENCLOSING.set(((id(owner), run), *_ENCLOSING.get()))
    try:
        yield
    finally:
        _ENCLOSING.reset(token)


def enclosing(owner: object) -> AgentRun | None:
    """The run of ``owner`` (a guard) whose tool call the current code runs in, if any."""
    for key, run in _ENCLOSING.get():
        if key == id(owner):
            return run
    return None


def context_call_ids(context: Any) -> set[str]:
    """The ids of the calls a context knows: a tool context's own call, and the calls the
    SDK recorded in the run's context (carried by a ``RunState`` across a pause)."""
    ids: set[str] = set()
    own = getattr(context, "tool_call_id", None)
    if isinstance(own, str):
        ids.add(own)
    records = getattr(context, "_tool_invocations", None)
    if isinstance(records, dict):
        ids.update(key for key in records if isinstance(key, str))
    return ids


class Runs:
    """The runs of one guard: found by usage object, by call id, or by nesting."""

    def __init__(
        self,
        owner: object,
        new_run: Callable[[], AgentRun],
        continue_run: Callable[[AgentRun], AgentRun],
        sessions: Sessions,
    ) -> None:
        self._owner = owner
        self._new_run = new_run
        self._continue_run = continue_run
        self.sessions = sessions
        self._lock = threading.Lock()
        self._usages: dict[int, tuple[Any, AgentRun]] = {}  # the object kept: ids stay unique
        self._by_call: dict[str, list[AgentRun]] = {}  # several: a provider may reuse ids
        self._live: dict[int, AgentRun] = {}
        self._ended: OrderedDict[int, AgentRun] = OrderedDict()
        self._born: dict[int, int] = {}  # id(run) -> when it began, the latest highest
        self._births = itertools.count()

    def of(self, context: Any, turn: Collection[str] = ()) -> AgentRun:
        """The run ``context`` (a run, hook or tool context) belongs to; a new one at the
        first event of a run that continues none. ``turn``: the ids of the model turn
        being proposed (the SDK records them in the context before the hook runs)."""
        usage = getattr(context, "usage", None)
        with self._lock:
            found = self._usages.get(id(usage))
            if found is not None and found[0] is usage:
                return found[1]
            run = enclosing(self._owner) or self._continued(context, turn)
            if run is None:
                run = self._session_turn(current_session_key())
            self._usages[id(usage)] = (usage, run)
            return run

    def _session_turn(self, key: Hashable | None) -> AgentRun:
        """The run a new ``Runner.run`` belongs to: its session's (the one going on, else
        a continuation of the one that ended), or a new one (no session, or its first
        turn, or the first after :meth:`next_session_run`)."""
        previous = None if key is None else self.sessions.get(key)
        if previous is not None and id(previous) in self._live:
            return previous  # paused, or ended by an exception: its next turn goes on
        if previous is None:
            run = self._new_run()
        else:
            try:
                run = self._continue_run(previous)
            except AgentGuardError as exc:  # (its log went on elsewhere, say): fail closed
                return self._refusing(
                    f"agentguard refused this call: this session's run "
                    f"{previous.firewall.run_id} cannot be continued ({exc}); start a new "
                    "run with agent.agentguard.next_run(session)."
                )
        self._live[id(run)] = run
        self._born[id(run)] = next(self._births)
        if key is not None:
            self.sessions.put(key, run, lambda r: id(r) in self._live)
        return run

    def next_session_run(self, key: Hashable) -> AgentRun | None:
        """Forget the session ``key``'s run (its next turn starts a new one); the run,
        for the caller to finish. Not from inside a run (:func:`refuse_inside_run`)."""
        refuse_inside_run("ending a session's run")
        with self._lock:
            return self.sessions.pop(key)

    def of_session(self, key: Hashable) -> AgentRun | None:
        """The run of the session ``key`` (going on or ended), if kept."""
        with self._lock:
            return self.sessions.get(key)

    def _continued(self, context: Any, turn: Collection[str]) -> AgentRun | None:
        """The run ``context`` continues: the run holding one of the calls it names; a
        refusing run when it continues a run agentguard does not hold (it names calls
        of earlier turns, or carries a human's approvals); None for a new run."""
        ids = context_call_ids(context).difference(turn)
        found = self._holder(ids)
        if found is not None:
            return found
        if not ids or not (turn or getattr(context, "_approvals", None)):
            return None
        return self._refusing(
            "agentguard refused this call: this run continues a run agentguard does not hold "
            "(a RunState resumed without its firewall: restore it with "
            "agent.agentguard.restore_run(document) first)."
        )

    def _refusing(self, why: str) -> AgentRun:
        """A run whose firewall ended before it began: it refuses every call (``why``
        is the model's answer), and logs it."""
        run = self._new_run()
        run.refusal = why
        run.finish()
        self._retire(run)
        return run

    def note_calls(self, run: AgentRun, ids: Iterable[str]) -> None:
        """The model made these calls in ``run``: a resumed context naming one finds it."""
        with self._lock:
            for call_id in ids:
                run.call_ids.add(call_id)
                holders = self._by_call.setdefault(call_id, [])
                if run not in holders:
                    holders.append(run)

    def adopt(self, run: AgentRun) -> None:
        """A run restored from a saved document: found by its calls' ids."""
        with self._lock:
            self._live[id(run)] = run
            self._born[id(run)] = next(self._births)
            for call_id in run.call_ids:
                self._by_call.setdefault(call_id, []).append(run)

    def end(self, run: AgentRun) -> tuple[FirewallReport, bool]:
        """Finish ``run``; the report, and whether this call ended it (first end)."""
        with self._lock:
            first = self._live.pop(id(run), None) is not None
        report = run.finish()
        if first:
            with self._lock:
                self._retire(run)
        return report, first

    def _retire(self, run: AgentRun) -> None:
        self._ended[id(run)] = run
        while len(self._ended) > KEEP_ENDED:
            _, old = self._ended.popitem(last=False)
            self._born.pop(id(old), None)
            for key in [k for k, (_, r) in self._usages.items() if r is old]:
                del self._usages[key]
            for call_id in old.call_ids:
                holders = [r for r in self._by_call.get(call_id, ()) if r is not old]
                if holders:
                    self._by_call[call_id] = holders
                else:
                    self._by_call.pop(call_id, None)

    def find(self, call_ids: Iterable[str]) -> AgentRun | None:
        """The run holding ``call_ids`` (None if none holds one)."""
        with self._lock:
            return self._holder(call_ids)

    def _holder(self, call_ids: Iterable[str]) -> AgentRun | None:
        """The run holding the most of ``call_ids`` (a resumed context names every call
        of its run), a run still going before one that ended, the latest first: a
        provider that numbers its calls call_0, call_1... reuses ids across runs."""
        count: dict[int, int] = {}
        runs: dict[int, AgentRun] = {}
        for call_id in call_ids:
            for run in self._by_call.get(call_id, ()):
                count[id(run)] = count.get(id(run), 0) + 1
                runs[id(run)] = run
        if not runs:
            return None
        best = max(runs, key=lambda k: (count[k], k in self._live, self._born.get(k, -1)))
        return runs[best]

    @property
    def live(self) -> tuple[AgentRun, ...]:
        """Runs that began and have not ended (paused, or ended by an exception)."""
        with self._lock:
            return tuple(self._live.values())


__all__ = ["KEEP_ENDED", "Runs", "context_call_ids", "enclosing", "enclosing_call"]
