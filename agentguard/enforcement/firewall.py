"""``Firewall``: every proposed tool call is checked on its prefix before it runs.

The firewall keeps a :class:`~agentguard.monitor.Monitor` of the executed calls (with
their results) and asks it, for each proposal, what the verdicts would be if the call
were appended with its result still unknown (``peek``): a call is refused only when a
constraint becomes *definitively* violated. A final answer (a call to one of
``final_tools``) is also checked as if the run ended after it, so deferred obligations
(``F cite``) fire on the finishing attempt. Severities follow AgentLTL Appendix A.5.3.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from agentguard._recursion import allow_deep
from agentguard.enforcement import hooks
from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.enforcement.flight import (
    Findings,
    FirewallProtocolError,
    Flight,
    ProposedCall,
    call_of,
    error_text,
    named,
    refusal,
    unpack,
)
from agentguard.enforcement.log import (
    ERROR_EVENT,
    FAILURE_EVENT,
    FINISH_EVENT,
    DecisionLog,
    Redactor,
)
from agentguard.enforcement.messages import compose
from agentguard.enforcement.policy import Counts, Limits, judge
from agentguard.enforcement.report import FirewallReport
from agentguard.enforcement.shadows import Shadows
from agentguard.enforcement.state import STATE_FORMAT
from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.monitor import Monitor, Verdict
from agentguard.monitor.verdict import Classification
from agentguard.semantics.registry import Registry
from agentguard.severity import Severity, SeverityKind
from agentguard.tools.checker import ToolChecker, ToolProblem
from agentguard.trace.final_tool import FINAL_TOOLS, count_tool_calls
from agentguard.trace.model import Call, Trace

PREDICATE_POLICIES: Final = ("fail_closed", "fail_open")
DEFAULT_SCHEMA_SEVERITY: Final = Severity(SeverityKind.SOFT_BLOCK)


class FirewallConfigError(AgentGuardError, ValueError):
    """A Firewall option has an invalid value."""


class FirewallStateError(AgentGuardError, ValueError):
    """A saved firewall state does not fit this spec or is malformed."""


def args_key(name: str, args: Mapping[str, Any]) -> str:
    """The identity of a call for BLOCK_AND_WARN's identical-retry rule."""
    return name + "\x00" + json.dumps(args, sort_keys=True, default=repr, separators=(",", ":"))


def spec_hash(spec: A.Spec) -> str:
    """Content hash of the spec text (or of its constraints when built in Python)."""
    text = spec.text or "\n".join(f"{c.name}:{c.formula!r}:{c.severity}" for c in spec.constraints)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Firewall:
    """Checks proposed calls against a spec; see the module docstring and docs/firewall.md.

    The execution protocol: ``propose`` (or ``propose_batch``) decides; an allowed
    decision is *in flight*. Right before the tool body runs the adapter calls ``start``
    (which may wait for, or re-check against, the calls the approval relied on); then
    ``complete`` with the result or the error, or ``withdraw`` if the call never ran.
    Only completed calls enter the trace.
    """

    @allow_deep
    def __init__(
        self,
        spec: A.Spec | str | Path,
        *,
        run_id: str | None = None,
        log_path: str | Path | None = None,
        logger: Any = None,
        soft_block_limit: int = 3,
        final_tools: tuple[str, ...] = FINAL_TOOLS,
        max_finish_sendbacks: int = 3,
        on_predicate_error: str = "fail_closed",
        redact: Redactor | None = None,
        registry: Registry | None = None,
        enforce_tools: bool = True,
        schema_severity: Severity | str = DEFAULT_SCHEMA_SEVERITY,
        start_timeout: float = 30.0,
    ) -> None:
        if on_predicate_error not in PREDICATE_POLICIES:
            raise FirewallConfigError(
                f"on_predicate_error must be one of {PREDICATE_POLICIES}, "
                f"got {on_predicate_error!r}"
            )
        if soft_block_limit < 0 or max_finish_sendbacks < 0:
            raise FirewallConfigError("soft_block_limit and max_finish_sendbacks must be >= 0")
        if start_timeout < 0:
            raise FirewallConfigError("start_timeout must be >= 0")
        if isinstance(schema_severity, str):
            try:
                schema_severity = Severity.parse(schema_severity)
            except ValueError:
                raise FirewallConfigError(
                    f"schema_severity must be a severity such as 'SOFT_BLOCK' or "
                    f"'SOFT_BLOCK(2)', got {schema_severity!r}"
                ) from None
        if not isinstance(spec, A.Spec):
            from agentguard.language import load_spec

            spec = load_spec(spec, registry=registry)
        self.spec = spec
        self.registry = registry
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.soft_block_limit = soft_block_limit
        self.final_tools = tuple(final_tools)
        self.max_finish_sendbacks = max_finish_sendbacks
        self.on_predicate_error = on_predicate_error
        self.schema_severity = schema_severity
        self.start_timeout = start_timeout
        self.tools = ToolChecker(
            spec.tools if enforce_tools else (), implicit=self.final_tools, registry=registry
        )
        self.monitor = Monitor(spec, registry=registry, uncounted=self.final_tools)
        self.spec_hash = spec_hash(spec)
        self._constraints = {c.name: c for c in spec.constraints}
        self._order = {c.name: i for i, c in enumerate(spec.constraints)}
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._calls: list[Call] = []
        self._inflight: dict[str, Flight] = {}
        self._withdrawn: dict[str, str] = {}  # call_id -> why it never ran
        self._decisions: list[Decision] = []
        self._late: list[Violation] = []
        self._soft_counts: dict[str, int] = {}
        self._warned: dict[str, int] = {}  # call identity -> generation of its BAW warning
        self._generation = 0
        self._sendbacks = 0
        self._stopped = False
        self._step = 0
        self._shadows = Shadows(registry, self.final_tools)
        self._report: FirewallReport | None = None
        self._log = DecisionLog(
            run_id=self.run_id,
            spec_name=spec.name,
            spec_hash=self.spec_hash,
            path=log_path,
            logger=logger,
            redact=redact,
        )

    # ------------------------------------------------------------------ properties
    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def trace(self) -> Trace:
        """The executed calls with their results."""
        with self._lock:
            return Trace(tuple(self._calls), self._metrics())

    def _metrics(self) -> dict[str, Any]:
        """The run's metrics record, counted as the loaders count a trace read back."""
        out: dict[str, Any] = {"num_tool_calls": self._tool_calls()}
        errors = [c.position for c in self._calls if c.error]
        if errors:
            out["tool_errors"] = errors
        return out

    def _tool_calls(self) -> int:
        """``metrics.num_tool_calls`` of the run: executed calls, final answers excluded."""
        return count_tool_calls(self._calls, self.final_tools)

    @property
    def decisions(self) -> tuple[Decision, ...]:
        return tuple(self._decisions)

    @property
    def in_flight(self) -> tuple[Decision, ...]:
        """Allowed decisions neither completed nor withdrawn yet, in approval order."""
        with self._lock:
            return tuple(f.decision for f in self._inflight.values())

    def is_in_flight(self, decision: Decision) -> bool:
        with self._lock:
            return decision.call_id in self._inflight

    @property
    def log_path(self) -> Path | None:
        return self._log.path

    def classification(self) -> dict[str, Classification]:
        """Safety / mixed / liveness of every constraint."""
        return self.monitor.classification()

    # ------------------------------------------------------------------ proposing
    def propose(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        tool_call_id: str | None = None,
    ) -> Decision:
        """Decide on one call before it runs (one model generation; not executed here)."""
        with self._lock:
            self._next_generation()
            decision: Decision = self._guarded(
                self._check, name, dict(args or {}), tool_call_id, set()
            )
            return decision

    def propose_batch(self, calls: Sequence[ProposedCall]) -> list[Decision]:
        """One model generation of parallel calls, checked in order under one lock: each
        sees the earlier allowed ones. ``calls`` are ``(name, args)`` or
        ``(name, args, tool_call_id)``; a tool-call id given twice is refused after its
        first use (frameworks key parallel calls by id, so only one would run)."""
        with self._lock:
            self._next_generation()
            seen: set[str] = set()
            out = []
            for entry in calls:
                name, args, tool_call_id = unpack(entry)
                out.append(self._guarded(self._check, name, dict(args), tool_call_id, seen))
            return out

    def _next_generation(self) -> None:
        self._generation += 1
        stale = [k for k, g in self._warned.items() if g < self._generation - 1]
        for key in stale:
            del self._warned[key]

    def _guarded(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except FirewallProtocolError:
            raise
        except Exception as exc:
            secrets = self._log.secrets(*call_of(args)) if args else []
            message = self._log.scrub(f"{type(exc).__name__}: {exc}", secrets)
            self._log.emit(FAILURE_EVENT, warn=True, message=message)
            self._log.flush()
            raise

    def _check(
        self, name: str, args: dict[str, Any], tool_call_id: str | None, seen: set[str]
    ) -> Decision:
        step = self._step
        self._step += 1
        call_id = f"{self.run_id}:{step}"
        if self._stopped:
            message = "The run was already stopped by agentguard."
            return self._decide(
                Decision(
                    Action.STOP, name, args, step, (), message, (), False, call_id, tool_call_id
                )
            )
        if tool_call_id is not None:
            if tool_call_id in seen:
                message = (
                    f"agentguard refused this call: its tool-call id {tool_call_id!r} is used "
                    "by another call of the same turn, and only one of them would run. "
                    "Give every call of a turn its own id."
                )
                return self._decide(
                    Decision(
                        Action.BLOCK,
                        name,
                        args,
                        step,
                        (),
                        message,
                        (),
                        False,
                        call_id,
                        tool_call_id,
                    )
                )
            seen.add(tool_call_id)
        call = Call(name, args)
        flights = list(self._inflight.values())
        extra = [f.call for f in flights]
        found = self._findings(call, extra)
        decision = self._judge(call, step, found, call_id, tool_call_id, inflight=bool(extra))
        if decision.executes:
            relied = frozenset(f.decision.call_id for f in flights)
            self._inflight[call_id] = Flight(decision, call, relied, len(self._calls))
        return self._decide(decision)

    def _findings(self, call: Call, extra: Sequence[Call]) -> Findings:
        """What ``call`` would violate after the executed calls and ``extra`` (no effects)."""
        name, args = call.name, call.args
        ending = name in self.final_tools
        problems = self.tools.check(name, args, self._calls, extra) if self.tools.enabled else []
        if extra:
            peek = self.monitor.peek([*extra, call], ending=ending)
            base = self.monitor.peek(list(extra)).verdicts
        else:
            peek = self.monitor.peek(call, ending=ending)
            base = self.monitor.verdicts
        errors = (
            {n: e for n, e in peek.errors.items() if base[n] is not Verdict.VIOLATED}
            if peek.errors
            else {}
        )
        violated = [
            n
            for n in peek.changed
            if peek.verdicts[n] is Verdict.VIOLATED
            and base[n] is not Verdict.VIOLATED
            and n not in errors
        ]
        deferred: list[str] = []
        if ending:
            deferred = [
                n
                for n, ok in peek.final.items()
                if ok is False and base[n] is not Verdict.VIOLATED and n not in violated
            ]
        for n in self._shadows.names():  # constraints violated before: violated again?
            if self._shadows.base(n, extra) is Verdict.VIOLATED:
                continue
            if self._shadows.peek(n, extra, call, ending).verdicts[n] is Verdict.VIOLATED:
                violated.append(n)
        return Findings(peek.verdicts, violated, deferred, errors, problems)

    def _judge(
        self,
        call: Call,
        step: int,
        found: Findings,
        call_id: str,
        tool_call_id: str | None,
        *,
        inflight: bool,
    ) -> Decision:
        """The decision for ``call`` given what it violates: policy.judge, then its effects."""
        name = call.name
        ending = name in self.final_tools
        violations = self._violations(call, step, found)
        if not violations:
            return Decision(
                Action.ALLOW, name, call.args, step, (), "", (), False, call_id, tool_call_id
            )
        key = args_key(name, call.args)
        outcome = judge(
            violations,
            counts=Counts(self._soft_counts, self._sendbacks),
            limits=Limits(self.soft_block_limit, self.max_finish_sendbacks),
            retry=self._warned.get(key) == self._generation - 1,
            ending=ending,
        )
        action = outcome.action
        if outcome.warned:
            self._warned[key] = self._generation
        for constraint in outcome.counted:
            self._soft_counts[constraint] = self._soft_counts.get(constraint, 0) + 1
        if outcome.sendback:
            self._sendbacks += 1
        deferred = set(found.deferred)
        if not action.executes and not inflight:  # repair hints for the model
            violations = [  # tool checks carry their own hints
                self._with_hint(v, call, v.constraint in deferred)
                if v.constraint in self._constraints
                else v
                for v in violations
            ]
        pending: tuple[str, ...] = ()
        if not action.executes:  # what the model still has to do, with the refusal
            ends = self.monitor.peek_end()
            names = {v.constraint for v in violations}
            pending = tuple(
                n
                for n, v in found.verdicts.items()
                if v is Verdict.PENDING and n not in names and ends.get(n) is not True
            )
        message = compose(
            action, violations, pending, escalated=outcome.escalated, note=outcome.note
        )
        if action is Action.STOP:
            self._stopped = True
        return Decision(
            action,
            name,
            dict(call.args),
            step,
            tuple(violations),
            message,
            pending,
            outcome.escalated,
            call_id,
            tool_call_id,
        )

    def _violations(self, call: Call, step: int, found: Findings) -> list[Violation]:
        """Every violation of ``found`` (tool checks merged per kind), in spec order;
        predicate errors per ``on_predicate_error``."""
        out: dict[str, Violation] = {}
        for p in found.problems:  # tool-interface checks first; several of one kind are merged
            if p.error and not self._fail_closed(step, call, p.constraint, p.error):
                continue
            prior = out.get(p.constraint)
            if prior is None:
                out[p.constraint] = self._tool_violation(p)
            else:
                out[p.constraint] = dataclasses.replace(
                    prior,
                    detail=f"{prior.detail}; {p.detail}",
                    hint=f"{prior.hint}; {p.hint}",
                )
        for n in found.violated:
            out[n] = self._violation(n, f"calling {call.name} now violates it", "")
        for n in found.deferred:
            out[n] = self._violation(n, "ending the run now leaves it unsatisfied", "")
        for n, errs in found.errors.items():
            if n not in out and self._fail_closed(step, call, n, errs[0]):
                out[n] = self._violation(n, f"a user predicate failed (fail-closed): {errs[0]}", "")
        return sorted(out.values(), key=lambda v: self._order.get(v.constraint, -1))

    def _fail_closed(self, step: int, call: Call, constraint: str, error: str) -> bool:
        """Does a predicate error block? Under fail-open it is logged and ignored."""
        if self.on_predicate_error == "fail_closed":
            return True
        secrets = self._log.secrets(call.name, call.args)
        self._log.emit(
            ERROR_EVENT,
            warn=True,
            step=step,
            tool=call.name,
            args=self._log.safe_args(call.name, call.args),
            constraint=constraint,
            message=self._log.scrub(f"ignored (fail-open): {error}", secrets),
        )
        return False

    def _with_hint(self, v: Violation, call: Call, ending: bool) -> Violation:
        hint = self.monitor.hint(v.constraint, call, ending=ending)
        return dataclasses.replace(v, hint=hint) if hint else v

    def _tool_violation(self, p: ToolProblem) -> Violation:
        """A tool-declaration problem as a violation of its synthetic constraint (weight 0:
        it is not a constraint of the procedure and never enters the compliance score)."""
        title = {
            "schema": f"The call does not fit the declaration of {p.tool}.",
            "dependency": f"An argument of {p.tool} must be a value seen earlier in the run.",
            "requires": f"The precondition of {p.tool} does not hold.",
        }[p.kind]
        return Violation(p.constraint, self.schema_severity, None, 0.0, title, p.detail, p.hint)

    def _violation(self, name: str, detail: str, hint: str) -> Violation:
        c = self._constraints[name]
        return Violation(name, c.severity, c.layer, c.weight, c.message, detail, hint)

    def _decide(self, decision: Decision) -> Decision:
        self._decisions.append(decision)
        self._log.decision(decision)
        if hooks.SINKS:
            hooks.publish_decision(decision)
        if decision.action is Action.STOP:
            self._log.flush()
        return decision

    # ------------------------------------------------------------------ running
    def start(self, decision: Decision, *, timeout: float | None = None) -> Decision:
        """The call is about to run: the same decision if it may, else a refusal.

        A call whose approval relied on calls still in flight (it is not allowed on the
        executed calls alone, or not alongside the calls running now) waits, up to
        ``timeout`` seconds (default ``start_timeout``), for them to finish; then it is
        re-checked against what really ran. A refused call counts as withdrawn (logged).
        """
        with self._cond:
            reason = self._withdrawn.get(decision.call_id)
            if reason is not None:  # withdrawn meanwhile (a sibling stopped the run...)
                return refusal(decision, f"agentguard did not run this call: {reason}.")
            flight = self._flight(decision, "start")
            if flight.started:
                raise FirewallProtocolError(f"{named(decision)} was already started")
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
                self._cond.wait(remaining)
            if self._inflight.get(decision.call_id) is not flight:
                return self._refuse_ended(flight)
            out: Decision = self._guarded(self._recheck, flight)
            return out

    def _refuse_ended(self, flight: Flight) -> Decision:
        reason = self._withdrawn.get(flight.decision.call_id, "the run ended before it started")
        return refusal(flight.decision, f"agentguard did not run this call: {reason}.")

    def _withdrawn_now(self, decision: Decision, reason: str) -> None:
        """Log a call that never ran; a later ``start`` of it is refused with the reason."""
        self._withdrawn[decision.call_id] = reason
        self._log.withdrawn(decision, reason)

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
        if not flight.relied and not running and flight.position == len(self._calls):
            return True  # nothing happened since its approval
        accepted = {v.constraint for v in flight.decision.violations}
        closed = self.on_predicate_error == "fail_closed"
        prefixes: list[Sequence[Call]] = [[]] if not running else [[], running]
        return all(
            not (self._findings(flight.call, extra).names(closed) - accepted) for extra in prefixes
        )

    def _recheck(self, flight: Flight) -> Decision:
        """Judge the call again on what really ran (executed calls, then the running ones)."""
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
            flight.position = len(self._calls)
            self._inflight[old.call_id] = flight
            if fresh != old:
                self._decide(fresh)
            return fresh
        self._decide(fresh)
        self._withdrawn_now(old, f"re-checked when it was about to start: {fresh.message}")
        self._cond.notify_all()
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
        with self._cond:
            flight = self._flight(decision, "complete")
            del self._inflight[decision.call_id]
            try:
                if error is not None:
                    result = error_text(error) if result is None else result
                late: list[Violation] = self._guarded(
                    self._commit, flight.call, result, error is not None, flight.decision
                )
            finally:
                self._cond.notify_all()
            return late

    def withdraw(self, decision: Decision, reason: str) -> None:
        """The call never ran (its arguments were rejected, a sibling stopped the run...):
        it leaves the in-flight set without entering the trace, and the log says why."""
        with self._cond:
            flight = self._flight(decision, "withdraw")
            if flight.started:
                raise FirewallProtocolError(
                    f"cannot withdraw {named(decision)}: it started; complete it with its error"
                )
            del self._inflight[decision.call_id]
            self._withdrawn_now(flight.decision, reason)
            self._cond.notify_all()

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
        args = dict(args or {})
        with self._cond:
            flight = self._inflight.get(call_id) if call_id is not None else None
            if flight is None:
                flight = next(
                    (
                        f
                        for f in self._inflight.values()
                        if f.call.name == name and dict(f.call.args) == args
                    ),
                    None,
                )
            if flight is not None:
                return self.complete(flight.decision, result, error=error)
            if error is not None:
                result = error_text(error) if result is None else result
            late: list[Violation] = self._guarded(
                self._commit, Call(name, args), result, error is not None, None
            )
            return late

    def _commit(
        self, proposed: Call, result: Any, error: bool, decision: Decision | None
    ) -> list[Violation]:
        name, args = proposed.name, dict(proposed.args)
        known = {v.constraint for v in decision.violations} if decision is not None else set()
        call = Call(name, args, result, len(self._calls), error)  # Call decodes JSON text
        changed = self.monitor.advance(call)
        self._calls.append(call)
        if self.tools.enabled:
            self.tools.observe(call)
        after = self.monitor.verdicts
        late = []
        again = self._shadows.advance(call, known)
        for n in changed:
            if after[n] is Verdict.VIOLATED:
                if n not in known:
                    detail = self.monitor.node(n).error or f"the result of {name} violates it"
                    late.append(self._violation(n, detail, ""))
                self._shadows.excuse(self._constraints[n], call.position, self._calls)
        for n in again:  # a constraint violated before, violated again by this result
            late.append(self._violation(n, f"the result of {name} violates it again", ""))
            self._shadows.excuse(self._constraints[n], call.position, self._calls)
        self._log.result(call, decision)
        if late:
            late.sort(key=lambda v: self._order[v.constraint])
            self._late.extend(late)
            if any(v.severity.kind is SeverityKind.HARD_STOP for v in late):
                self._stopped = True
            self._log.late(len(self._calls) - 1, name, args, late, self._stopped)
            if self._stopped:
                self._log.flush()
        return late

    # ------------------------------------------------------------------ the end
    def finish(self, metrics: Mapping[str, Any] | None = None) -> FirewallReport:
        """End the run: offline verdicts of every constraint, the compliance report, history."""
        with self._cond:
            if self._report is not None:
                return self._report
            self._settle()
            from agentguard.scoring.verify import verify_trace

            merged = {**self._metrics(), **dict(metrics or {})}
            trace = Trace(tuple(self._calls), merged)
            compliance = verify_trace(trace, self.spec, registry=self.registry)
            verdicts = self.monitor.finish(merged)
            self._report = FirewallReport(
                compliance=compliance,
                decisions=tuple(self._decisions),
                trace=trace,
                stopped=self._stopped,
                log_path=self._log.path,
                run_id=self.run_id,
                spec_name=self.spec.name,
                spec_hash=self.spec_hash,
                verdicts=verdicts,
                late_violations=tuple(self._late),
            )
            self._log.emit(
                FINISH_EVENT,
                step=self._step,
                action="finish",
                message=f"compliance {compliance.score:.3f} ({compliance.label})",
                verdict=compliance.label,
            )
            self._log.close()
            return self._report

    def _settle(self) -> None:
        """Before the report: wait (up to ``start_timeout``) for the calls that started to
        complete; calls that never started are withdrawn, calls still running are left out
        of the trace and logged as unfinished."""
        for flight in [f for f in self._inflight.values() if not f.started]:
            del self._inflight[flight.decision.call_id]
            self._withdrawn_now(flight.decision, "the run ended before it started")
        deadline = time.monotonic() + self.start_timeout
        while self._inflight:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._cond.wait(remaining)
        for flight in list(self._inflight.values()):
            del self._inflight[flight.decision.call_id]
            self._withdrawn_now(
                flight.decision, "it started but had not finished when the run ended"
            )

    # ------------------------------------------------------------------ state files
    def save_state(self) -> dict[str, Any]:
        """A versioned JSON-able document; :meth:`restore` continues with identical verdicts."""
        from agentguard.enforcement.state import save

        with self._lock:
            return save(self)

    @classmethod
    def restore(
        cls, spec: A.Spec | str | Path, state: Mapping[str, Any], **kwargs: Any
    ) -> Firewall:
        """A firewall continuing a run saved with :meth:`save_state` (e.g. in another process)."""
        from agentguard.enforcement.state import load

        if not isinstance(state, Mapping) or state.get("format") != STATE_FORMAT:
            raise FirewallStateError(
                f"not a firewall state document (expected format {STATE_FORMAT})"
            )
        kwargs.setdefault("run_id", state.get("run_id"))
        fw = cls(spec, **kwargs)
        if state.get("spec_hash") != fw.spec_hash:
            raise FirewallStateError("the saved state belongs to a different spec")
        try:
            load(fw, state)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise FirewallStateError(f"malformed firewall state: {exc}") from None
        return fw


def violation_from_dict(d: Mapping[str, Any]) -> Violation:
    return Violation.from_dict(d)


def decision_from_dict(d: Mapping[str, Any]) -> Decision:
    """The inverse of ``Decision.to_dict``."""
    return Decision.from_dict(d)


__all__ = [
    "STATE_FORMAT",
    "Firewall",
    "FirewallConfigError",
    "FirewallProtocolError",
    "FirewallReport",
    "FirewallStateError",
    "args_key",
    "decision_from_dict",
    "error_text",
    "spec_hash",
]
