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
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from typing_extensions import Unpack

from agentguard._recursion import allow_deep
from agentguard.enforcement import hooks
from agentguard.enforcement.agent_tools import AgentTools, ToolMismatch, warn_tool_mismatches
from agentguard.enforcement.approval import Approval, ApprovalRequest, Approver, ApproverRaised, ask
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
    BUDGET_EVENT,
    ERROR_EVENT,
    FAILURE_EVENT,
    FINISH_EVENT,
    DecisionLog,
    Redactor,
)
from agentguard.enforcement.messages import compose
from agentguard.enforcement.options import FirewallOptions
from agentguard.enforcement.otel import DecisionSpans
from agentguard.enforcement.otel import wanted as otel_wanted
from agentguard.enforcement.policy import Counts, Limits, judge
from agentguard.enforcement.report import FirewallReport
from agentguard.enforcement.shadows import Shadows
from agentguard.enforcement.state import STATE_FORMAT
from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.language.dialogue import spec_mentions_dialogue
from agentguard.monitor import Monitor, Verdict
from agentguard.monitor.signing import Key, sign, verify
from agentguard.monitor.verdict import Classification
from agentguard.scoring.inputs import SpecLike, coerce_spec
from agentguard.semantics.registry import Registry
from agentguard.severity import Severity, SeverityKind
from agentguard.tools.checker import ToolChecker, ToolProblem
from agentguard.trace.final_tool import FINAL_TOOLS, count_tool_calls
from agentguard.trace.model import UNKNOWN, Call, CallKind, Trace

TOOL_MISMATCH_EVENT: Final = "agentguard.tool_mismatch"
PREDICATE_POLICIES: Final = ("fail_closed", "fail_open")
BUDGET_POLICIES: Final = ("warn", "stop")
MODES: Final = ("enforce", "shadow")
SHADOW_NOTE: Final = "Shadow mode: not enforced, the call ran. Enforce mode would say: "
DEFAULT_SCHEMA_SEVERITY: Final = Severity(SeverityKind.SOFT_BLOCK)
DEFAULT_ASK_FALLBACK: Final = Severity(SeverityKind.SOFT_BLOCK)


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
        spec: SpecLike,
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
        agent_tools: AgentTools | None = None,
        schema_severity: Severity | str = DEFAULT_SCHEMA_SEVERITY,
        start_timeout: float = 30.0,
        mode: str = "enforce",
        log_key: bytes | str | None = None,
        otel: bool | None = None,
        tracer_provider: Any = None,
        approver: Approver | None = None,
        ask_fallback: Severity | str = DEFAULT_ASK_FALLBACK,
        on_budget: str = "warn",
    ) -> None:
        if mode not in MODES:
            raise FirewallConfigError(f"mode must be one of {MODES}, got {mode!r}")
        if on_budget not in BUDGET_POLICIES:
            raise FirewallConfigError(
                f"on_budget must be one of {BUDGET_POLICIES}, got {on_budget!r}"
            )
        self.on_budget = on_budget  # a constraint past its state budget: log, or stop the run
        self._budget_logged: set[str] = set()
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
        if isinstance(ask_fallback, str):
            try:
                ask_fallback = Severity.parse(ask_fallback)
            except ValueError:
                raise FirewallConfigError(
                    f"ask_fallback must be a severity such as 'SOFT_BLOCK', got {ask_fallback!r}"
                ) from None
        if ask_fallback.kind is SeverityKind.ASK:
            raise FirewallConfigError("ask_fallback must be a severity other than ASK")
        spec = coerce_spec(spec, registry)  # one rule for every entry: scoring/inputs.py
        self.spec = spec
        self.registry = registry
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.soft_block_limit = soft_block_limit
        self.final_tools = tuple(final_tools)
        self.max_finish_sendbacks = max_finish_sendbacks
        self.on_predicate_error = on_predicate_error
        self.schema_severity = schema_severity
        self.start_timeout = start_timeout
        self.mode = mode
        self.approver = approver
        self.ask_fallback = ask_fallback
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
            key=log_key.encode() if isinstance(log_key, str) else log_key,
        )
        self.tool_mismatches: tuple[ToolMismatch, ...] = ()
        if agent_tools is not None:
            self.report_tool_mismatches(
                warn_tool_mismatches(spec, agent_tools, implicit=frozenset(self.final_tools))
            )
        self._spans: DecisionSpans | None = None
        self._check_started = 0  # when the check being decided began (ns), for its span
        if otel_wanted(otel, tracer_provider):  # opentelemetry is imported only then
            self._spans = DecisionSpans(
                tracer_provider, run_id=self.run_id, spec=spec.name, spec_hash=self.spec_hash
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

    def report_tool_mismatches(self, mismatches: Sequence[ToolMismatch]) -> None:
        """Keep and log differences between the spec's tools and the agent's (an adapter
        that learns the agent's tools after the run started calls this)."""
        with self._lock:
            self.tool_mismatches = (*self.tool_mismatches, *mismatches)
            for mismatch in mismatches:
                self._log.emit(
                    TOOL_MISMATCH_EVENT,
                    warn=True,
                    tool=mismatch.tool,
                    message=mismatch.message,
                    verdict=mismatch.kind,
                )

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
            saved = self._counters() if self.approver else None
            self._next_generation()
            try:
                decision: Decision = self._guarded(
                    self._check, name, dict(args or {}), tool_call_id, set()
                )
            except BaseException:
                if saved is not None:  # an approver raised (a LangGraph interrupt): undo
                    self._undo_batch(saved, [])
                raise
            return decision

    def propose_batch(self, calls: Sequence[ProposedCall]) -> list[Decision]:
        """One model generation of parallel calls, checked in order under one lock: each
        sees the earlier allowed ones. ``calls`` are ``(name, args)`` or
        ``(name, args, tool_call_id)``; a tool-call id given twice is refused after its
        first use (frameworks key parallel calls by id, so only one would run)."""
        with self._lock:
            saved = self._counters() if self.approver else None
            self._next_generation()
            seen: set[str] = set()
            out: list[Decision] = []
            try:
                for entry in calls:
                    name, args, tool_call_id = unpack(entry)
                    out.append(self._guarded(self._check, name, dict(args), tool_call_id, seen))
            except BaseException:
                if saved is not None:  # an approver raised (a LangGraph interrupt)
                    self._undo_batch(saved, out)
                raise
            return out

    def _counters(self) -> tuple[int, dict[str, int], dict[str, int], int]:
        return self._generation, dict(self._warned), dict(self._soft_counts), self._sendbacks

    def _undo_batch(
        self, saved: tuple[int, dict[str, int], dict[str, int], int], decided: list[Decision]
    ) -> None:
        """An approver interrupted a batch: the turn will be proposed again (LangGraph
        re-runs the node on resume), so its earlier calls are withdrawn (logged) and the
        counters they moved are restored; nothing of the turn ran."""
        self._generation, self._warned, self._soft_counts, self._sendbacks = saved
        for d in decided:
            if d.call_id in self._inflight:
                del self._inflight[d.call_id]
                self._withdrawn_now(d, "its turn was interrupted to ask for an approval")

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
        except ApproverRaised as exc:  # the approver's own exception (a LangGraph interrupt)
            raise exc.original from None
        except Exception as exc:
            secrets = self._log.secrets(*call_of(args)) if args else []
            message = self._log.scrub(f"{type(exc).__name__}: {exc}", secrets)
            self._log.emit(FAILURE_EVENT, warn=True, message=message)
            self._log.flush()
            raise

    def _check(
        self, name: str, args: dict[str, Any], tool_call_id: str | None, seen: set[str]
    ) -> Decision:
        if self._spans is not None:
            self._check_started = time.time_ns()
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
        try:
            decision = self._over_budget(call, step, found, call_id, tool_call_id) or self._judge(
                call, step, found, call_id, tool_call_id, inflight=bool(extra)
            )
        except ApproverRaised:  # asked again when the call is proposed again
            self._step = step
            raise
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
        counts = Counts(self._soft_counts, self._sendbacks)
        limits = Limits(self.soft_block_limit, self.max_finish_sendbacks, self.ask_fallback)
        retry = self._warned.get(key) == self._generation - 1
        asking = self.approver is not None
        outcome = judge(
            violations, counts=counts, limits=limits, retry=retry, ending=ending, approver=asking
        )
        approval: Approval | None = None
        if outcome.ask and self.mode == "enforce" and self.approver is not None:
            held = tuple(v for v in violations if v.constraint in outcome.ask)
            approval = self._ask(self.approver, call, call_id, held)
            outcome = judge(
                violations,
                counts=counts,
                limits=limits,
                retry=retry,
                ending=ending,
                approver=True,
                approval=approval.approved,
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
        note = outcome.note
        if approval is not None:
            who = f" by {approval.by}" if approval.by else ""
            verdict = "Approved" if approval.approved else "Denied"
            note = f"{verdict}{who} at {approval.at}" + (
                f": {approval.reason}" if approval.reason else "."
            )
        elif outcome.ask:  # shadow mode: enforce mode would have held it for approval
            note = "Enforce mode would hold this call for approval (ASK)."
        message = compose(action, violations, pending, escalated=outcome.escalated, note=note)
        shadow = None
        if self.mode == "shadow" and not action.executes:  # computed as enforced, not applied
            action, shadow, message = Action.ALLOW, action, SHADOW_NOTE + message
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
            shadow,
            None if approval is None else approval.to_dict(),
        )

    def _ask(
        self, approver: Approver, call: Call, call_id: str, held: tuple[Violation, ...]
    ) -> Approval:
        """Put a call that would violate ASK constraints to the approver (under the lock:
        approvals of one run are asked one at a time)."""
        lines = [f"- {v.constraint}: {v.message or v.detail} ({v.detail})" for v in held]
        request = ApprovalRequest(
            self.run_id,
            call_id,
            call.name,
            dict(call.args),
            held,
            f"agentguard asks for approval: {call.name} would violate\n" + "\n".join(lines),
        )
        return ask(approver, request)

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

    def _over_budget(
        self, call: Call, step: int, found: Findings, call_id: str, tool_call_id: str | None
    ) -> Decision | None:
        """Log each constraint whose monitor passed its state budget (once per firewall);
        under ``on_budget="stop"``, a call such a constraint leaves undecided stops the run
        (its verdict would be late: it cannot say whether the call is allowed)."""
        over = self.monitor.over_budget()
        if not over:
            return None
        for n in over:
            if n not in self._budget_logged:
                self._budget_logged.add(n)
                self._log.emit(
                    BUDGET_EVENT,
                    warn=True,
                    step=step,
                    tool=call.name,
                    constraint=n,
                    message="its monitor exceeded the state budget: verdicts may come late",
                )
        blind = [n for n in over if found.verdicts.get(n) is Verdict.PENDING]
        if self.on_budget != "stop" or not blind:
            return None
        self._stopped = True
        message = (
            f"agentguard stopped the run: the monitor of {', '.join(blind)} exceeded its "
            "state budget and cannot tell whether this call is allowed (on_budget='stop')."
        )
        args = dict(call.args)
        return Decision(
            Action.STOP, call.name, args, step, (), message, (), False, call_id, tool_call_id
        )

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
        if self._spans is not None:
            self._spans.emit(
                decision, start_ns=self._check_started, mode=self.mode, scrub=self._scrub
            )
        if hooks.SINKS:
            hooks.publish_decision(decision)
        if decision.action is Action.STOP:
            self._log.flush()
        return decision

    def _scrub(self, decision: Decision, text: str) -> str:
        return self._log.scrub(text, self._log.secrets(decision.tool, decision.args))

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

    def observe(self, kind: CallKind, text: Any, **fields: Any) -> list[Violation]:
        """A dialogue event: a message the user sent (``"user"``) or the assistant wrote
        (``"assistant"``). Nothing is decided (it already happened): it is logged
        (``agentguard.message``) and, when the spec names a dialogue event, enters the
        trace and advances the monitor; returns the violations it caused, as
        :meth:`complete` does for a result (docs/firewall.md, "Dialogue events")."""
        message = Call.message(kind, text, **fields)
        with self._cond:
            if not spec_mentions_dialogue(self.spec):  # judged on tool calls only
                self._log.message(message, judged=False)
                return []
            late: list[Violation] = self._guarded(self._commit, message, UNKNOWN, False, None)
            return late

    def _commit(
        self, proposed: Call, result: Any, error: bool, decision: Decision | None
    ) -> list[Violation]:
        name, args = proposed.name, dict(proposed.args)
        known = {v.constraint for v in decision.violations} if decision is not None else set()
        # Call decodes JSON text
        call = Call(name, args, result, len(self._calls), error, proposed.kind)
        changed = self.monitor.advance(call)
        self._calls.append(call)
        if self.tools.enabled and call.is_tool:
            self.tools.observe(call)
        after = self.monitor.verdicts
        late = []
        again = self._shadows.advance(call, known)
        for n in changed:
            if after[n] is Verdict.VIOLATED:
                if n not in known:
                    what = f"the result of {name}" if call.is_tool else f"the {name}"
                    detail = self.monitor.node(n).error or f"{what} violates it"
                    late.append(self._violation(n, detail, ""))
                self._shadows.excuse(self._constraints[n], call.position, self._calls)
        for n in again:  # a constraint violated before, violated again by this result
            late.append(self._violation(n, f"the result of {name} violates it again", ""))
            self._shadows.excuse(self._constraints[n], call.position, self._calls)
        if call.is_tool:
            self._log.result(call, decision)
        else:
            self._log.message(call, judged=True)
        if late:
            late.sort(key=lambda v: self._order[v.constraint])
            self._late.extend(late)
            hard = any(v.severity.kind is SeverityKind.HARD_STOP for v in late)
            if hard and self.mode == "enforce":
                self._stopped = True
            self._log.late(
                len(self._calls) - 1,
                name,
                args,
                late,
                self._stopped or hard,
                shadow=self.mode == "shadow",
            )
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
                mode=self.mode,
            )
            shadow: dict[str, Any] = {}
            if self.mode == "shadow":
                would = self._report.would_block
                shadow = {"shadow": True, "would_block": [d.call_id for d in would]}
            self._log.emit(
                FINISH_EVENT,
                step=self._step,
                action="finish",
                message=f"compliance {compliance.score:.3f} ({compliance.label})",
                verdict=compliance.label,
                **shadow,
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
    def save(self, *, key: Key | None = None) -> dict[str, Any]:
        """A versioned JSON-able document; :meth:`restore` continues with identical verdicts.

        With ``key`` (bytes or text) the document carries an HMAC-SHA256, and
        ``restore(..., key=key)`` refuses it once edited (a stopped run un-stopped)."""
        from agentguard.enforcement.state import save

        with self._lock:
            return sign(save(self), key)

    def save_state(self) -> dict[str, Any]:
        """Deprecated name of :meth:`save` (one verb pair: ``save`` / ``restore``)."""
        warnings.warn(
            "Firewall.save_state() is deprecated; use Firewall.save()", DeprecationWarning, 2
        )
        return self.save()

    @classmethod
    def restore(
        cls,
        spec: SpecLike,
        state: Mapping[str, Any],
        *,
        key: Key | None = None,
        **kwargs: Unpack[FirewallOptions],
    ) -> Firewall:
        """A firewall continuing a run saved with :meth:`save` (e.g. in another process)."""
        from agentguard.enforcement.state import load

        if not isinstance(state, Mapping) or state.get("format") != STATE_FORMAT:
            raise FirewallStateError(
                f"not a firewall state document (expected format {STATE_FORMAT})"
            )
        refused = verify(state, key)
        if refused:
            raise FirewallStateError(refused)
        run_id = state.get("run_id")
        if run_id is not None and not isinstance(run_id, str):
            raise FirewallStateError("malformed firewall state: run_id must be a string")
        kwargs.setdefault("run_id", run_id)
        fw = cls(spec, **kwargs)
        if state.get("spec_hash") != fw.spec_hash:
            raise FirewallStateError("the saved state belongs to a different spec")
        try:
            load(fw, state)
        except (KeyError, TypeError, ValueError, IndexError, RecursionError) as exc:
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
