"""The state the adapters share: :class:`GuardSession`.

One session per smolagents agent, one per invocation behind the LangChain middleware.
It holds the current run's firewall, every attempt with its decision, and the report of
the last finished run. A run can be continued (``start_run(resume=True)`` or
``start_run(state=...)``), so a conversation's next turn extends the same trace; a run
that ended any other way is never silently replaced by a fresh firewall (a call after
the end goes to the ended run's firewall, which refuses and logs it). Frameworks run
tools in worker threads (where contextvars do not follow), so the state lives on the
session object, behind a lock. :func:`agentguard.guard` (the dispatcher) re-exports it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typing_extensions import Unpack

from agentguard.enforcement.decision import Action, Decision, RunStopped, Violation
from agentguard.enforcement.flight import FirewallProtocolError
from agentguard.enforcement.offering import Offer, check_offer, explained
from agentguard.enforcement.options import FirewallOptions, Stale
from agentguard.errors import AgentGuardError
from agentguard.guard_batch import EDITED, MISSING, Pending, collect, superseded
from agentguard.guard_shared import (
    EXECUTING,
    DecisionListener,
    FirewallFactory,
    stop_decision,
)
from agentguard.scoring.inputs import SpecLike
from agentguard.severity import SeverityKind
from agentguard.trace.model import MESSAGE_NAMES, CallKind, Trace

if TYPE_CHECKING:
    from agentguard.enforcement.firewall import Firewall, FirewallReport
    from agentguard.enforcement.flight import ProposedCall


class GuardSession:
    """Guard state: one firewall per run, the attempts, the last report.

    ``attempts`` lists every decision of this run in the order it was made, allowed or
    not (a continued run's earlier decisions are in ``report.decisions``); ``trace`` is
    the executed calls with their results, from the first turn on; ``report`` is the last
    finished run's :class:`FirewallReport` (compliance with deferred constraints
    evaluated, decisions, log path).
    """

    def __init__(
        self,
        spec: SpecLike,
        *,
        firewall_factory: FirewallFactory | None = None,
        on_decision: DecisionListener | None = None,
        offer: Offer | None = None,
        **firewall_kwargs: Unpack[FirewallOptions],
    ) -> None:
        self.spec = spec
        self.offer = check_offer(offer)  # what the adapter tells the model before a turn
        self.firewall_kwargs: FirewallOptions = firewall_kwargs.copy()
        self._factory = firewall_factory
        self._on_decision = on_decision
        self._lock = threading.RLock()
        self._firewall: Firewall | None = None
        self._finished: Firewall | None = None
        # batch decisions no call collected yet, by tool in proposal order, and the same by
        # the framework's tool-call id (a call naming its id is collected at once)
        self._predecided: dict[str, list[Pending]] = {}
        self._predecided_ids: dict[str, Pending] = {}
        self._owners: dict[str, Firewall] = {}  # call_id -> its run's firewall, until resolved
        self.attempts: list[Decision] = []
        self.late_violations: list[Violation] = []
        self.report: FirewallReport | None = None
        self.stop: Decision | None = None
        self.closed = False  # an adapter ended this session for good (no call may run)
        self._observed: set[str] = set()  # framework ids of the messages already observed
        # may a call start a run of its own? Only the session's first (no run yet) and
        # after a ``finish_run(next_run=True)``: a run that ended any other way (a STOP, a
        # crash, the framework's end) is continued only explicitly (start_run), never
        # silently replaced by a fresh firewall that forgot its counts and stops
        self._fresh_allowed = True

    # run lifecycle ---------------------------------------------------------------
    def start_run(
        self,
        *,
        resume: bool = False,
        state: Mapping[str, Any] | None = None,
        stale: Stale = "refuse",
    ) -> None:
        """Begin a run with a fresh firewall (a previous unfinished run is finished first).

        ``state`` (a :meth:`Firewall.save` document) continues the run it was saved from
        (``stale`` as for :meth:`Firewall.restore`); ``resume=True`` continues this
        session's current run, or else its last finished one (a conversation's next turn)."""
        with self._lock:
            if resume and state is None and self._firewall is not None:
                return
            if resume and state is None:
                state = self.save_state()
            if self._firewall is not None:
                self.finish_run()
            self._firewall = self._new_firewall(state, stale)
            self._fresh_allowed = False
            self._finished = None
            self._predecided.clear()
            self._predecided_ids.clear()
            self.attempts = []
            self.late_violations = []
            self.report = None
            self.stop = None

    def finish_run(self, *, next_run: bool = False) -> FirewallReport | None:
        """End the current run: deferred constraints are evaluated, the log is closed.

        Calls still running in other threads are waited for (up to the firewall's
        ``start_timeout``), outside the session's lock so that they can complete. A call
        that arrives after the end is refused by the finished run's firewall (and
        logged there), unless ``next_run``: the caller marks a run boundary it alone can
        see (a hand-built graph's :meth:`ToolNodeGuard.finish`), and the next call starts
        a fresh run.
        """
        with self._lock:
            if next_run:
                self._fresh_allowed = True
            if self._firewall is None:
                return self.report
            self.withdraw_unclaimed("the run ended before the framework ran it")
            # the finishing firewall answers every later call (it refuses them) from now
            firewall, self._firewall = self._firewall, None
            self._finished = firewall
        report = firewall.finish()
        with self._lock:
            self.report = report
            self._finished = firewall
            return self.report

    def save_state(self) -> dict[str, Any] | None:
        """The current (else the last finished) run's firewall state; None before any run
        (or with a ``firewall_factory`` stand-in without ``save``). The monitor is not
        ended by ``finish``, so a finished run can be continued."""
        with self._lock:
            firewall = self._firewall or self._finished
            save = getattr(firewall, "save", None)
            state: dict[str, Any] | None = None if save is None else save()
            return state

    @property
    def active(self) -> bool:
        return self._firewall is not None

    @property
    def firewall(self) -> Firewall:
        """The firewall calls go to now: the current run's; else, once a run ended, that
        finished run's (it refuses every call and logs it: fail closed); else a new run's,
        started on first use (the first call, or the first after ``finish_run(next_run=True)``)."""
        with self._lock:
            if self._firewall is not None:
                return self._firewall
            if self._finished is not None and not self._fresh_allowed:
                return self._finished
            self.start_run()
            firewall = self._firewall
            if firewall is None:  # pragma: no cover - start_run always sets it
                raise AgentGuardError("the firewall could not be started")
            return firewall

    def _new_firewall(self, state: Mapping[str, Any] | None, stale: Stale) -> Firewall:
        from agentguard.enforcement.firewall import Firewall

        if state is not None:  # a restored run is built from its state, never by the factory
            return Firewall.restore(self.spec, state, stale=stale, **self.firewall_kwargs)
        if self._factory is not None:
            return self._factory()
        # agent runs are short and their traces exported: a session keeps the trace
        options: FirewallOptions = {"keep_trace": True, **self.firewall_kwargs}
        return Firewall(self.spec, **options)

    # checking calls ----------------------------------------------------------------
    # The execution protocol of docs/firewall.md, with the session's bookkeeping: a batch
    # checked when the model turn arrives is collected call by call when each tool runs.
    def propose(
        self, name: str, args: Mapping[str, Any], *, tool_call_id: str | None = None
    ) -> Decision:
        """The decision for one call: taken from an earlier batch check, or asked now.
        A closed session (its adapter ended the run for good) refuses it: no new run."""
        with self._lock:
            if tool_call_id is not None or name in self._predecided:
                decision = collect(self._predecided, self._predecided_ids, name, args, tool_call_id)
                if decision is not None:
                    return decision
                stale = superseded(self._predecided, self._predecided_ids, tool_call_id)
                if stale is not None:  # the call came edited: what was decided never runs
                    self.withdraw(stale, EDITED)
            if self.closed and (self._firewall is not None or self._finished is None):
                # closing, or closed before any run: no firewall to refuse it in its log
                message = f"agentguard did not run {name}: the run already ended."
                return Decision(Action.BLOCK, name, dict(args), message=message)
            firewall = self._firewall or self.firewall  # a finished run's refuses it
            decision = firewall.propose(name, args, tool_call_id=tool_call_id)
            decision = explained(firewall, [decision])[0] if self.offer else decision
            self._note(decision, firewall)
        return decision

    def propose_and_start(self, name: str, args: Mapping[str, Any]) -> Decision:
        """:meth:`propose` (naming no tool-call id), then :meth:`start` if the call may
        run: the decision it runs under, or the refusal of either step.

        What a tool gate does right before the tool body. The usual call (this tool's
        only batch decision is waiting for it, holding the very same argument objects)
        is collected here in one lock round trip, as :func:`~agentguard.guard_batch.collect` would;
        any other is proposed as :meth:`propose` does.
        """
        lock = self._lock
        lock.acquire()  # not ``with``: its special-method lookups cost as much as the lock
        try:
            found: Decision | None = None
            queue = self._predecided.get(name)
            if queue is not None and len(queue) == 1:
                entry = queue[0]
                proposed = entry[0].args
                if len(proposed) == len(args):
                    for key, value in args.items():  # _same_values, inlined
                        if proposed.get(key, MISSING) is not value:
                            break
                    else:  # taken as guard_batch.take takes it: the queue empties
                        del self._predecided[name]
                        tool_call_id = entry[2]
                        by_id = self._predecided_ids
                        if tool_call_id is not None and by_id.get(tool_call_id) is entry:
                            del by_id[tool_call_id]
                        found = entry[0]
            decision = self.propose(name, args) if found is None else found
        finally:
            lock.release()
        if decision.action not in EXECUTING:
            return decision
        # start, inlined
        firewall = self._owners.get(decision.call_id)  # one dict read: GIL-atomic, no lock
        if firewall is None:
            return decision
        started = firewall.start(decision)
        if started is not decision:
            self._restarted(decision, started)
        return started

    def propose_batch(self, calls: Sequence[ProposedCall]) -> list[Decision]:
        """Check a parallel batch in order before any of it runs; later ``propose`` reuses it."""
        lock = self._lock
        lock.acquire()  # not ``with``: its special-method lookups cost as much as the lock
        try:
            firewall = self._firewall or self.firewall
            decisions = firewall.propose_batch(calls)
            if len(decisions) != len(calls):  # checked first, as zip(strict=True) would after
                raise AgentGuardError(
                    f"the firewall answered {len(calls)} proposed call(s) with "
                    f"{len(decisions)} decision(s)"
                )
            decisions = explained(firewall, decisions) if self.offer else decisions
            pending, by_id = self._predecided, self._predecided_ids
            owners, attempts = self._owners, self.attempts
            index = 0  # the calls indexed: zip or enumerate build an iterator per batch
            for decision in decisions:
                call = calls[index]
                index += 1  # noqa: SIM113 - enumerate costs twice a counter per batch
                name, tool_call_id = call[0], call[2] if len(call) == 3 else None
                entry: Pending = (decision, name, tool_call_id, [])
                queue = pending.get(name)
                if queue is None:
                    pending[name] = [entry]
                else:
                    queue.append(entry)
                if tool_call_id is not None and tool_call_id not in by_id:
                    by_id[tool_call_id] = entry
                # _note, inlined (one frame less per call)
                action = decision.action
                if action in EXECUTING and decision.call_id:
                    owners[decision.call_id] = firewall
                attempts.append(decision)
                if action is Action.STOP and self.stop is None:
                    self.stop = decision
                if self._on_decision is not None:
                    self._on_decision(decision)
        finally:
            lock.release()
        return decisions

    def start(self, decision: Decision) -> Decision:
        """The call is about to run: the decision if it may, else a refusal (see
        ``Firewall.start``); the firewall may wait here, so the session is not locked."""
        firewall = self._owners.get(decision.call_id)  # one dict read: GIL-atomic, no lock
        if firewall is None or not decision.executes:
            return decision  # not one of this run's calls in flight (a stand-in firewall)
        started = firewall.start(decision)
        if started is not decision:
            self._restarted(decision, started)
        return started

    def _restarted(self, decision: Decision, started: Decision) -> None:
        """``start`` answered with a new decision (a re-check, a refusal): noted; a
        refused call is no longer in flight."""
        with self._lock:
            self._note(started)
            if not started.executes:
                self._owners.pop(decision.call_id, None)

    def complete(
        self,
        decision: Decision,
        result: Any = None,
        *,
        error: str | BaseException | None = None,
    ) -> None:
        """The call ran; raises RunStopped if its result makes the run stop.

        Outside the session's lock (a run being finished waits for running calls).
        """
        firewall = self._owners.pop(decision.call_id, None)  # GIL-atomic: no lock needed
        if firewall is None:  # a stand-in firewall without the protocol's bookkeeping
            firewall = self._firewall or self.firewall
            found = firewall.record(decision.tool, decision.args, result)
        else:
            try:  # asked first, not after: in flight is the usual answer
                found = firewall.complete(decision, result, error=error)
            except FirewallProtocolError:  # raised before anything changed
                if firewall.is_in_flight(decision):
                    raise
                return  # the run ended first and logged the call as unfinished
        if found or firewall.stopped:  # else there is nothing to note (found: a list)
            with self._lock:
                self._after(firewall, decision.tool, decision.args, list(found))

    def withdraw(self, decision: Decision, reason: str) -> None:
        """The call never ran; a decision already resolved is left alone."""
        with self._lock:
            firewall = self._owners.pop(decision.call_id, None)
        if firewall is not None and firewall.is_in_flight(decision):
            firewall.withdraw(decision, reason)

    def withdraw_predecided(
        self, name: str, args: Mapping[str, Any], reason: str, tool_call_id: str | None = None
    ) -> None:
        """Withdraw one batch decision for this call that no tool came to collect."""
        with self._lock:
            decision = collect(self._predecided, self._predecided_ids, name, args, tool_call_id)
            if decision is not None:
                self.withdraw(decision, reason)

    def withdraw_unclaimed(self, reason: str) -> None:
        """Withdraw every batch decision no call came to collect (the framework never ran
        it: arguments rejected, a sibling raised or stopped the run)."""
        if not self._predecided:  # the usual case: every call collected its decision
            return
        with self._lock:
            leftovers = [p[0] for queue in self._predecided.values() for p in queue]
            self._predecided.clear()
            self._predecided_ids.clear()
            for decision in leftovers:
                self.withdraw(decision, reason)

    def clear_predecided(self) -> None:
        """Older name of :meth:`withdraw_unclaimed`."""
        self.withdraw_unclaimed("the framework never ran this call")

    def record(
        self,
        name: str,
        args: Mapping[str, Any],
        result: Any,
        *,
        error: str | BaseException | None = None,
        tool_call_id: str | None = None,
    ) -> None:
        """Record an executed call (with its ``error``, if it failed; ``tool_call_id``: see
        ``Firewall.ran_elsewhere``); raises RunStopped if its result makes the run stop."""
        with self._lock:
            firewall = self.firewall
            found = list(firewall.record(name, args, result, error=error, call_id=tool_call_id))
            self._after(firewall, name, args, found)

    def observe(self, kind: CallKind, text: str, *, key: str | None = None, **fields: Any) -> None:
        """A dialogue event of the run (:meth:`Firewall.observe`). ``key`` names the
        framework's message, so one seen on an earlier turn is observed once; a message
        that breaks a HARD_STOP constraint raises RunStopped, as a result does."""
        with self._lock:
            if key is not None:
                if key in self._observed:
                    return
                self._observed.add(key)
            firewall = self._firewall or self.firewall
            observe = getattr(firewall, "observe", None)  # a factory's stand-in may lack it
            if observe is None:
                return
            found = list(observe(kind, text, **fields))
            if found:  # a stop from before is the next call's to report, not the message's
                self._after(firewall, MESSAGE_NAMES[kind], {"text": text}, found)

    def _after(
        self, firewall: Firewall, name: str, args: Mapping[str, Any], found: list[Violation]
    ) -> None:
        self.late_violations.extend(found)
        if firewall.stopped and self.stop is None:
            stops = [v for v in found if v.severity.kind is SeverityKind.HARD_STOP] or found
            decision = stop_decision(name, args, stops)
            self.stop = decision
            raise RunStopped(decision)

    def _note(self, decision: Decision, firewall: Firewall | None = None) -> None:
        if decision.executes and decision.call_id:
            self._owners[decision.call_id] = self.firewall if firewall is None else firewall
        self.attempts.append(decision)
        if decision.action is Action.STOP and self.stop is None:
            self.stop = decision
        if self._on_decision is not None:
            self._on_decision(decision)

    # what a run left behind ------------------------------------------------------
    @property
    def trace(self) -> Trace:
        """Executed calls with results (of the current run, or else the last finished one)."""
        with self._lock:
            if self._firewall is not None:
                return self._firewall.trace
            if self.report is not None:
                return self.report.trace
            return Trace()

    @property
    def compliance(self) -> Any:
        """The last finished run's ComplianceReport (None before any run finished)."""
        return None if self.report is None else self.report.compliance

    @property
    def log_path(self) -> Path | None:
        """Where the JSON-lines decision log was written (None if no log was asked for)."""
        if self.report is not None and self.report.log_path is not None:
            return Path(self.report.log_path)
        configured = self.firewall_kwargs.get("log_path")
        return None if configured is None else Path(configured)

    @property
    def stopped(self) -> bool:
        return self.stop is not None


__all__ = ["GuardSession"]
