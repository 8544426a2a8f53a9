"""The execution protocol: an allowed call starts, completes (or is withdrawn).

``start`` runs right before the tool body (it may wait for, or re-check against, the
calls the approval relied on); ``complete`` enters the call with its result or error
into the trace and reports the violations found only now; ``withdraw`` says a call never
ran; ``record`` and ``observe`` are the shorthands adapters use. Only completed calls
enter the trace ("the trace is what ran"). Part of the Firewall (see
:mod:`agentguard.enforcement.core`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Final

from agentguard.enforcement import hooks
from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.enforcement.flight import FirewallProtocolError, Flight, error_text, named, refusal
from agentguard.enforcement.judging import Judging
from agentguard.monitor import Verdict
from agentguard.monitor.peek import Snapshot
from agentguard.severity import SeverityKind
from agentguard.trace.arguments import freeze_call_arguments
from agentguard.trace.json_values import text_of
from agentguard.trace.model import MESSAGE_NAMES, UNKNOWN, Call, CallKind

NO_NAMES: Final[AbstractSet[str]] = frozenset()
"""The constraints a clean decision accepted: none."""


class Execution(Judging):
    """start / complete / withdraw (and record / observe) of the calls a proposal allowed."""

    # the tool-call ids the log shows ran under this run after the state it was restored
    # from (Firewall.restore with a log; None: no log was read): recorded again by the
    # adapter that took the run over, each enters the trace once more and the log not
    # again (its lines are there already)
    _ran_elsewhere: frozenset[str] | None = None

    @property
    def ran_elsewhere(self) -> frozenset[str] | None:
        """The tool-call ids the run's log shows ran after the state this firewall was
        restored from, not recorded again yet; None when the log holds no line of the
        run after that state (a fresh firewall, a restore without ``log_path``, a log
        file that never saw the run's later part). An adapter taking a run over records
        again only these: a call the conversation shows but the log does not never ran
        under the guard (a tool may write the conversation; writing it, that tool left
        its own lines in the log)."""
        return self._ran_elsewhere

    def start(self, decision: Decision, *, timeout: float | None = None) -> Decision:
        """The call is about to run: the same decision if it may, else a refusal.

        A call whose approval relied on calls still in flight (it is not allowed on the
        executed calls alone, or not alongside the calls running now) waits, up to
        ``timeout`` seconds (default ``start_timeout``), for them to finish; then it is
        re-checked against what really ran. A refused call counts as withdrawn (logged).
        """
        with self._lock:  # the lock under _cond (no Condition.__enter__ frame)
            reason = self._withdrawn.get(decision.call_id)
            if reason is not None:  # withdrawn meanwhile (a sibling stopped the run...)
                return refusal(decision, f"agentguard did not run this call: {reason}.")
            flight = self._flight(decision, "start")
            if flight.started:
                raise FirewallProtocolError(f"{named(decision)} was already started")
            if (  # the common case, _admits' first answer: nothing happened since approval
                not flight.relied
                and flight.position == self._executed
                and not self._stopped
                and not any(f.started for f in self._inflight.values())
            ):
                flight.started = True
                return flight.decision
            limit = self.start_timeout if timeout is None else timeout
            deadline = time.monotonic() + limit
            while not self._stopped:
                if self._inflight.get(decision.call_id) is not flight:
                    return self._refuse_ended(flight)  # the run finished while it waited
                running = [f.call for f in self._inflight.values() if f.started]
                if self._admits(flight, running):
                    flight.started = True
                    return flight.decision
                waiting = [cid for cid in flight.relied if cid in self._inflight]
                remaining = deadline - time.monotonic()
                if not waiting or remaining <= 0:
                    break
                self._wait(remaining)
            if self._inflight.get(decision.call_id) is not flight:
                return self._refuse_ended(flight)
            out: Decision = self._guarded(self._recheck, flight)
            return out

    def _refuse_ended(self, flight: Flight) -> Decision:
        reason = self._withdrawn.get(flight.decision.call_id, "the run ended before it started")
        return refusal(flight.decision, f"agentguard did not run this call: {reason}.")

    def _flight(self, decision: Decision, verb: str) -> Flight:
        flight = self._inflight.get(decision.call_id)
        if flight is None:
            raise FirewallProtocolError(
                f"cannot {verb} {named(decision)}: it is not in flight (refused, already "
                "completed or withdrawn, or from another run)"
            )
        return flight

    def _admits(self, flight: Flight, running: Sequence[Call]) -> bool:
        """May the call start now without relying on calls that have not finished?"""
        if not flight.relied and not running and flight.position == self._executed:
            return True  # nothing happened since its approval
        accepted = {v.constraint for v in flight.decision.violations}
        closed = self.on_predicate_error == "fail_closed"
        prefixes: list[Sequence[Call]] = [[]] if not running else [[], running]
        return all(
            not (self._findings(flight.call, extra).names(closed) - accepted) for extra in prefixes
        )

    def _recheck(self, flight: Flight) -> Decision:
        """Judge the call again on what really ran (executed calls, then the running ones)."""
        if self._spans is not None:
            self._check_started = time.time_ns()
        old = flight.decision
        del self._inflight[old.call_id]
        running = [f.call for f in self._inflight.values() if f.started]
        step = old.step
        if self._stopped:
            fresh = Decision(
                Action.STOP,
                old.tool,
                old.args,
                step,
                (),
                "The run was stopped by agentguard before this call started.",
                (),
                False,
                old.call_id,
                old.tool_call_id,
            )
        else:
            # on the executed calls alone (what it relied on may still be running, result
            # unknown), and, if that is clean, alongside the calls running now
            found = self._findings(flight.call, [])
            beside = False
            if running and not found.names(self.on_predicate_error == "fail_closed"):
                found, beside = self._findings(flight.call, running), True
            fresh = self._judge(
                flight.call, step, found, old.call_id, old.tool_call_id, inflight=beside
            )
        if fresh.executes:
            flight.decision, flight.started = fresh, True
            flight.position = self._executed
            self._inflight[old.call_id] = flight
            if fresh != old:
                self._decide(fresh)
            return fresh
        self._decide(fresh)
        self._withdrawn_now(old, f"re-checked when it was about to start: {fresh.message}")
        self._wake()
        return fresh

    def complete(
        self,
        decision: Decision,
        result: Any = None,
        *,
        error: str | BaseException | None = None,
    ) -> list[Violation]:
        """The call ran: it enters the trace with its result (or its error, kept on the
        call); returns the violations found only now that the result is known."""
        with self._lock:
            return self._complete(self._flight(decision, "complete"), result, error)

    def _complete(
        self, flight: Flight, result: Any, error: str | BaseException | None
    ) -> list[Violation]:
        """:meth:`complete` of a flight found in flight (the lock held)."""
        del self._inflight[flight.decision.call_id]
        try:
            if error is not None:
                result = error_text(error) if result is None else result
            call = flight.call
            fresh = not flight.relied and flight.position == self._executed
            try:  # _guarded, inlined (one frame less per call)
                late = self._commit(call, result, error is not None, flight.decision, fresh)
            except BaseException as exc:
                self._failed(exc, (call,))
                raise
            if self._spans is not None:
                failed = None if error is None else error_text(error)
                self._spans.done(flight.decision.call_id, failed)
        finally:
            if self._waiting:
                self._cond.notify_all()
        return late

    def withdraw(self, decision: Decision, reason: str, *, started: bool = False) -> None:
        """The call never ran (its arguments were rejected, a sibling stopped the run...):
        it leaves the in-flight set without entering the trace, and the log says why.

        ``started=True`` also withdraws a call that started and was paused before it
        finished, never to finish: a LangGraph ``interrupt()`` inside the tool, after
        which LangGraph runs the tool again from the start, as a new call, if the run is
        resumed (without it, withdrawing a started call is a protocol error)."""
        with self._cond:
            flight = self._flight(decision, "withdraw")
            if flight.started and not started:
                raise FirewallProtocolError(
                    f"cannot withdraw {named(decision)}: it started; complete it with its error"
                )
            del self._inflight[decision.call_id]
            self._withdrawn_now(flight.decision, reason)
            self._wake()

    def record(
        self,
        name: str,
        args: Mapping[str, Any] | None,
        result: Any,
        *,
        call_id: str | None = None,
        error: str | BaseException | None = None,
    ) -> list[Violation]:
        """Shorthand for :meth:`complete`: matched to the in-flight decision by ``call_id``
        when given, else by name and arguments (a call never proposed is recorded as is)."""
        args, _ = freeze_call_arguments(name, args)  # matched as proposed was
        with self._lock:
            if self._report is not None:
                raise FirewallProtocolError(
                    f"{name} was recorded after its run {self.run_id} ended; a run continues "
                    "only through Firewall.restore (or its adapter's continuation)"
                )  # the lock under _cond: Condition.__enter__ is a Python call
            flight = self._inflight.get(call_id) if call_id is not None else None
            if flight is None:
                for f in self._inflight.values():
                    if f.call.name == name and f.call.args == args:  # a dict, as proposed
                        flight = f
                        break
            if flight is not None:
                return self._complete(flight, result, error)
            if error is not None:
                result = error_text(error) if result is None else result
            # a step of the run though nothing decided it: the step count stays at least
            # the number of calls (a restored state is checked for it) and ids stay unique
            self._step += 1
            elsewhere = self._ran_elsewhere
            logged = not (elsewhere and call_id in elsewhere)
            if not logged:  # its lines are in the log, from the process that ran it
                self._ran_elsewhere = elsewhere - {call_id}  # type: ignore[operator]
            late: list[Violation] = self._guarded(
                self._commit, Call(name, args), result, error is not None, None, False, logged
            )
            return late

    def observe(self, kind: CallKind, text: Any, **fields: Any) -> list[Violation]:
        """A dialogue event: a message the user sent (``"user"``) or the assistant wrote
        (``"assistant"``). Nothing is decided (it already happened): it is logged
        (``agentguard.message``) and, when the spec names a dialogue event, enters the
        trace and advances the monitor; returns the violations it caused, as
        :meth:`complete` does for a result (docs/firewall.md, "Dialogue events")."""
        if self._report is not None:
            raise FirewallProtocolError(
                f"a {kind} message was observed after its run {self.run_id} ended"
            )
        if not self._judges_dialogue:  # judged on tool calls only: the log alone keeps it
            if kind in MESSAGE_NAMES and not (self._log.active or hooks.SINKS):
                return []  # and no log is kept (a bad kind still fails below)
            message = Call.message(kind, text, **fields)
            with self._lock:
                self._log.message(message, judged=False)
            return []
        message = Call.message(kind, text, **fields)
        with self._lock:  # the lock under _cond: Condition.__enter__ is a Python call
            late: list[Violation] = self._guarded(
                self._commit, message, UNKNOWN, False, None, False
            )
            return late

    def _commit(
        self,
        proposed: Call,
        result: Any,
        error: bool,
        decision: Decision | None,
        fresh: bool,
        logged: bool = True,
    ) -> list[Violation]:
        """Enter an executed call: the monitor, the tool checker, the shadows, the log.

        ``fresh``: ``decision`` was judged on exactly the executed calls (no call in flight
        then, none completed since), so its verdicts are this step's wherever the result
        cannot matter. ``logged=False``: the log has the call's lines already (it ran
        under this run in another process: :attr:`ran_elsewhere`).
        """
        name, args = proposed.name, proposed.args  # the firewall's own copy of the arguments
        known: AbstractSet[str] = (
            {v.constraint for v in decision.violations}
            if decision is not None and decision.violations
            else NO_NAMES
        )
        try:
            call = proposed.ran(result, self._executed, error)  # JSON text decoded
        except Exception as exc:  # noqa: BLE001 - the call ran: it enters the trace anyway
            # a result no reading can hold (a container whose iteration raises...): the
            # call is entered with what can be said of it, never left out of the trace
            unreadable = f"<the result could not be read: {type(exc).__name__}: {text_of(exc)}>"
            call = proposed.ran(unreadable, self._executed, error)
        is_tool = call.kind == "tool"
        snaps = None
        if not self._keeps_calls:  # no history to rebuild a shadow from: keep the states
            quiet = fresh and not known and not self._result_sensitive
            snaps = {} if quiet else self._snapshots(call, known, fresh)
        changed = self.monitor.advance(call)
        self._executed += 1
        if self._keeps_calls:
            self._calls.append(call)
        if is_tool:
            if name not in self.final_tools:
                self._tool_count += 1
            if self._tools_observe is not None:
                self._tools_observe(call)
        if error:
            self._error_positions.append(call.position)
        late: list[Violation] = (
            self._broken_by(call, changed, known, snaps)
            if changed or self._shadows.active  # else nothing moved: no late violation
            else []
        )
        hard = False
        if late:  # the run's state first: a log that fails to write cannot undo a stop
            late.sort(key=lambda v: self._order[v.constraint])
            self._late.extend(late)
            hard = any(v.severity.kind is SeverityKind.HARD_STOP for v in late)
            if hard and self.mode == "enforce":
                self._stopped = True
        if not (logged and (self._log.active or hooks.SINKS)):
            pass
        elif is_tool:
            self._log.result(call, decision)
        else:
            self._log.message(call, judged=True)
        if late and logged:
            self._log.late(
                call.position,
                name,
                args,
                late,
                self._stopped or hard,
                shadow=self.mode == "shadow",
            )
            if self._stopped:
                self._log.flush()
        return late

    def _broken_by(
        self,
        call: Call,
        changed: list[str],
        known: AbstractSet[str],
        snaps: dict[str, Snapshot] | None,
    ) -> list[Violation]:
        """The violations ``call`` brings only now that it ran (its result, or a
        constraint violated before and violated again), each broken constraint moved to
        a shadow monitor from its state before the call (``snaps``, or the kept calls)."""
        name = call.name
        late: list[Violation] = []
        if changed:
            verdicts = self.monitor.verdicts
            broken = [n for n in changed if verdicts[n] is Verdict.VIOLATED]
        else:
            broken = []
        again = self._shadows.advance(call, known | set(broken)) if self._shadows.active else []
        for n in broken:
            if n not in known:
                what = f"the result of {name}" if call.is_tool else f"the {name}"
                detail = self.monitor.node(n).error or f"{what} violates it"
                late.append(self._violation(n, detail, ""))
            if n in self._shadows:
                continue  # already excused from its shadow above
            if snaps is None:
                self._shadows.excuse(self._constraints[n], call.position, self._calls)
            else:  # the state just before this call, without the calls kept
                snap = snaps[n]
                self._shadows.start(self._constraints[n], self.monitor.fork(snap))
        for n in again:  # a constraint violated before, violated again by this result
            late.append(self._violation(n, f"the result of {name} violates it again", ""))
        return late

    def _snapshots(self, call: Call, known: AbstractSet[str], fresh: bool) -> dict[str, Snapshot]:
        """The states, before ``call``, of the constraints it may break for the first time
        (each would start a shadow monitor from there). A fresh decision already said what
        the call breaks, except where the result (or a user predicate) may change it."""
        monitor, shadows = self.monitor, self._shadows
        candidates = []
        for n in monitor.affected(call.name):
            if n in shadows or monitor.verdicts[n] is not Verdict.PENDING:
                continue
            if fresh and n not in known and n not in self._result_sensitive:
                continue
            candidates.append(n)
        if not candidates:
            return {}
        # A snapshot of a quantified constraint costs as much as its instances: take only
        # those the call really breaks (a peek with its result says which, exactly, but
        # for user predicates, which may answer differently the second time).
        peek = monitor.peek(call)
        return {
            n: monitor.snapshot(n)
            for n in candidates
            if n in self._predicate_driven
            or n in peek.errors
            or peek.verdicts[n] is Verdict.VIOLATED
        }


__all__ = ["Execution"]
