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
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple

from agentguard._recursion import allow_deep
from agentguard.enforcement import hooks
from agentguard.enforcement.decision import Action, Decision, Severity, SeverityKind, Violation
from agentguard.enforcement.log import FAILURE_EVENT, FINISH_EVENT, DecisionLog, Redactor
from agentguard.enforcement.messages import compose
from agentguard.enforcement.report import FirewallReport
from agentguard.enforcement.schema import ToolChecker, ToolProblem
from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.monitor import Monitor, Verdict
from agentguard.monitor.verdict import Classification
from agentguard.semantics.registry import Registry
from agentguard.trace.model import UNKNOWN, Call, Trace

STATE_FORMAT: Final = "agentguard.firewall/1"
PREDICATE_POLICIES: Final = ("fail_closed", "fail_open")
DEFAULT_SCHEMA_SEVERITY: Final = Severity(SeverityKind.SOFT_BLOCK)


class FirewallConfigError(AgentGuardError, ValueError):
    """A Firewall option has an invalid value."""


class FirewallStateError(AgentGuardError, ValueError):
    """A saved firewall state does not fit this spec or is malformed."""


class _InFlight(NamedTuple):
    """A call that was allowed but whose result has not been recorded yet."""

    call: Call
    decision: Decision


def args_key(name: str, args: Mapping[str, Any]) -> str:
    """The identity of a call for BLOCK_AND_WARN's identical-retry rule."""
    return name + "\x00" + json.dumps(args, sort_keys=True, default=repr, separators=(",", ":"))


def spec_hash(spec: A.Spec) -> str:
    """Content hash of the spec text (or of its constraints when built in Python)."""
    text = spec.text or "\n".join(f"{c.name}:{c.formula!r}:{c.severity}" for c in spec.constraints)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Firewall:
    """Checks proposed calls against a spec; see the module docstring and docs/firewall.md."""

    @allow_deep
    def __init__(
        self,
        spec: A.Spec | str | Path,
        *,
        run_id: str | None = None,
        log_path: str | Path | None = None,
        logger: Any = None,
        soft_block_limit: int = 3,
        final_tools: tuple[str, ...] = ("final_answer",),
        max_finish_sendbacks: int = 3,
        on_predicate_error: str = "fail_closed",
        redact: Redactor | None = None,
        registry: Registry | None = None,
        enforce_tools: bool = True,
        schema_severity: Severity | str = DEFAULT_SCHEMA_SEVERITY,
    ) -> None:
        if on_predicate_error not in PREDICATE_POLICIES:
            raise FirewallConfigError(
                f"on_predicate_error must be one of {PREDICATE_POLICIES}, "
                f"got {on_predicate_error!r}"
            )
        if soft_block_limit < 0 or max_finish_sendbacks < 0:
            raise FirewallConfigError("soft_block_limit and max_finish_sendbacks must be >= 0")
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
        self.tools = ToolChecker(spec.tools if enforce_tools else (), implicit=self.final_tools)
        self.monitor = Monitor(spec, registry=registry, uncounted=self.final_tools)
        self.spec_hash = spec_hash(spec)
        self._constraints = {c.name: c for c in spec.constraints}
        self._order = {c.name: i for i, c in enumerate(spec.constraints)}
        self._lock = threading.RLock()
        self._calls: list[Call] = []
        self._inflight: list[_InFlight] = []
        self._decisions: list[Decision] = []
        self._late: list[Violation] = []
        self._soft_counts: dict[str, int] = {}
        self._insist: str | None = None
        self._sendbacks = 0
        self._stopped = False
        self._step = 0
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
            return Trace(tuple(self._calls), {"num_tool_calls": self._tool_calls()})

    def _tool_calls(self) -> int:
        """``metrics.num_tool_calls`` of the run: executed calls, final answers excluded."""
        final = self.final_tools
        return sum(1 for c in self._calls if c.name not in final)

    @property
    def decisions(self) -> tuple[Decision, ...]:
        return tuple(self._decisions)

    @property
    def log_path(self) -> Path | None:
        return self._log.path

    def classification(self) -> dict[str, Classification]:
        """Safety / mixed / liveness of every constraint."""
        return self.monitor.classification()

    # ------------------------------------------------------------------ checking
    def propose(self, name: str, args: Mapping[str, Any] | None = None) -> Decision:
        """Decide on one call before it runs (it is not executed by the firewall)."""
        with self._lock:
            decision: Decision = self._guarded(self._check, name, dict(args or {}))
            return decision

    def propose_batch(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Decision]:
        """Parallel calls, checked in order under one lock; each sees the earlier allowed ones."""
        with self._lock:
            return [self._guarded(self._check, n, dict(a)) for n, a in calls]

    def _guarded(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:
            self._log.emit(FAILURE_EVENT, warn=True, message=f"{type(exc).__name__}: {exc}")
            self._log.flush()
            raise

    def _check(self, name: str, args: dict[str, Any]) -> Decision:
        step = self._step
        self._step += 1
        if self._stopped:
            return self._decide(
                Decision(
                    Action.STOP,
                    name,
                    args,
                    step,
                    message="The run was already stopped by agentguard.",
                )
            )
        call = Call(name, args)
        ending = name in self.final_tools
        extra = [f.call for f in self._inflight] if self._inflight else []
        problems = self.tools.check(name, args, self._calls, extra) if self.tools.enabled else []
        if extra:
            peek = self.monitor.peek([*extra, call], ending=ending)
            base = self.monitor.peek(extra).verdicts
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
        if not violated and not deferred and not errors and not problems:
            self._insist = None
            decision = Decision(Action.ALLOW, name, args, step)
            self._inflight.append(_InFlight(call, decision))
            return self._decide(decision)
        return self._violations(
            call, step, peek.verdicts, violated, deferred, errors, bool(extra), problems
        )

    def _violations(
        self,
        call: Call,
        step: int,
        verdicts: Mapping[str, Verdict],
        violated: list[str],
        deferred: list[str],
        errors: Mapping[str, tuple[str, ...]],
        inflight: bool,
        problems: Sequence[ToolProblem] = (),
    ) -> Decision:
        found: dict[str, Violation] = {}
        for p in problems:  # tool-interface checks first; several of one kind are merged
            prior = found.get(p.constraint)
            if prior is None:
                found[p.constraint] = self._tool_violation(p)
            else:
                found[p.constraint] = dataclasses.replace(
                    prior,
                    detail=f"{prior.detail}; {p.detail}",
                    hint=f"{prior.hint}; {p.hint}",
                )
        for n in violated:
            found[n] = self._violation(n, f"calling {call.name} now violates it", "")
        for n in deferred:
            found[n] = self._violation(n, "ending the run now leaves it unsatisfied", "")
        for n, errs in errors.items():
            if self.on_predicate_error == "fail_closed" and n not in found:
                found[n] = self._violation(
                    n, f"a user predicate failed (fail-closed): {errs[0]}", ""
                )
            elif self.on_predicate_error == "fail_open":
                self._log.emit(
                    "agentguard.predicate_error",
                    warn=True,
                    step=step,
                    tool=call.name,
                    constraint=n,
                    message=f"ignored (fail-open): {errs[0]}",
                )
        violations = sorted(found.values(), key=lambda v: self._order.get(v.constraint, -1))
        action, escalated = self._action(call, violations)
        ending = call.name in self.final_tools
        sendback_note = ""
        if ending and action is Action.BLOCK:
            if self._sendbacks >= self.max_finish_sendbacks:
                action = Action.ALLOW
                sendback_note = (
                    f"Send-back limit ({self.max_finish_sendbacks}) reached: finishing with the "
                    "violations recorded."
                )
            else:
                self._sendbacks += 1
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
            pending = tuple(
                n
                for n, v in verdicts.items()
                if v is Verdict.PENDING and n not in found and ends.get(n) is not True
            )
        message = compose(action, violations, pending, escalated=escalated, note=sendback_note)
        decision = Decision(
            action, call.name, dict(call.args), step, tuple(violations), message, pending, escalated
        )
        if action.executes:
            self._inflight.append(_InFlight(call, decision))
        else:
            for v in violations:
                if v.severity.kind is SeverityKind.SOFT_BLOCK:
                    self._soft_counts[v.constraint] = self._soft_counts.get(v.constraint, 0) + 1
        if action is Action.STOP:
            self._stopped = True
        return self._decide(decision)

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

    def _action(self, call: Call, violations: Sequence[Violation]) -> tuple[Action, bool]:
        """The strongest action over the violations (STOP > BLOCK > OVERRIDE > ALLOW)."""
        key = args_key(call.name, call.args)
        stop = block = override = escalated = False
        warned = False
        for v in violations:
            kind = v.severity.kind
            if kind is SeverityKind.HARD_STOP:
                stop = True
            elif kind is SeverityKind.SOFT_BLOCK:
                limit = v.severity.limit if v.severity.limit is not None else self.soft_block_limit
                if self._soft_counts.get(v.constraint, 0) >= limit:
                    stop = escalated = True
                else:
                    block = True
            elif kind is SeverityKind.BLOCK_AND_WARN:
                warned = True
                if self._insist == key:
                    override = True
                else:
                    block = True
        if warned:
            # the identical very next retry overrides; any other proposal moves the pointer
            self._insist = None if (override and not block and not stop) else key
        else:
            self._insist = None
        if stop:
            return Action.STOP, escalated
        if block:
            return Action.BLOCK, False
        return (Action.OVERRIDE if override else Action.ALLOW), False

    def _decide(self, decision: Decision) -> Decision:
        self._decisions.append(decision)
        self._log.decision(decision)
        if hooks.SINKS:
            hooks.publish_decision(decision)
        if decision.action is Action.STOP:
            self._log.flush()
        return decision

    # ------------------------------------------------------------------ results
    def record(self, name: str, args: Mapping[str, Any] | None, result: Any) -> list[Violation]:
        """Record an executed call with its result; returns violations found only now."""
        with self._lock:
            out: list[Violation] = self._guarded(self._record, name, dict(args or {}), result)
            return out

    def _record(self, name: str, args: dict[str, Any], result: Any) -> list[Violation]:
        known: set[str] = set()
        for i, f in enumerate(self._inflight):
            if f.call.name == name and dict(f.call.args) == args:
                known = {v.constraint for v in f.decision.violations}
                del self._inflight[i]
                break
        call = Call(name, args, result, len(self._calls))
        changed = self.monitor.advance(call)
        self._calls.append(call)
        if self.tools.enabled:
            self.tools.observe(call)
        after = self.monitor.verdicts
        late = []
        for n in changed:
            if after[n] is Verdict.VIOLATED and n not in known:
                detail = self.monitor.node(n).error or f"the result of {name} violates it"
                late.append(self._violation(n, detail, ""))
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
        with self._lock:
            if self._report is not None:
                return self._report
            from agentguard.scoring.verify import verify_trace

            merged = {"num_tool_calls": self._tool_calls(), **dict(metrics or {})}
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

    # ------------------------------------------------------------------ state files
    def save_state(self) -> dict[str, Any]:
        """A versioned JSON-able document; :meth:`restore` continues with identical verdicts."""
        with self._lock:
            return {
                "format": STATE_FORMAT,
                "run_id": self.run_id,
                "spec_hash": self.spec_hash,
                "monitor": self.monitor.save(),
                "calls": [c.to_record() for c in self._calls],
                "inflight": [
                    {"call": f.call.to_record(), "decision": self._decisions.index(f.decision)}
                    for f in self._inflight
                ],
                "decisions": [d.to_dict() for d in self._decisions],
                "late": [v.to_dict() for v in self._late],
                "soft_counts": dict(self._soft_counts),
                "insist": self._insist,
                "sendbacks": self._sendbacks,
                "stopped": self._stopped,
                "step": self._step,
            }

    @classmethod
    def restore(
        cls, spec: A.Spec | str | Path, state: Mapping[str, Any], **kwargs: Any
    ) -> Firewall:
        """A firewall continuing a run saved with :meth:`save_state` (e.g. in another process)."""
        if not isinstance(state, Mapping) or state.get("format") != STATE_FORMAT:
            raise FirewallStateError(
                f"not a firewall state document (expected format {STATE_FORMAT})"
            )
        kwargs.setdefault("run_id", state.get("run_id"))
        fw = cls(spec, **kwargs)
        if state.get("spec_hash") != fw.spec_hash:
            raise FirewallStateError("the saved state belongs to a different spec")
        try:
            fw.monitor.load(state["monitor"])
            fw._calls = [_call(r, i) for i, r in enumerate(state["calls"])]
            for call in fw._calls:
                fw.tools.observe(call)
            fw._decisions = [decision_from_dict(d) for d in state["decisions"]]
            fw._inflight = [
                _InFlight(_call(f["call"], 0), fw._decisions[f["decision"]])
                for f in state["inflight"]
            ]
            fw._late = [violation_from_dict(v) for v in state["late"]]
            fw._soft_counts = {str(k): int(v) for k, v in state["soft_counts"].items()}
            fw._insist = state["insist"]
            fw._sendbacks = int(state["sendbacks"])
            fw._stopped = bool(state["stopped"])
            fw._step = int(state["step"])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise FirewallStateError(f"malformed firewall state: {exc}") from None
        return fw


def _call(record: Mapping[str, Any], position: int) -> Call:
    return Call(
        str(record["tool_name"]),
        dict(record.get("arguments", {})),
        record.get("tool_result", UNKNOWN),
        position,
    )


def violation_from_dict(d: Mapping[str, Any]) -> Violation:
    return Violation(
        d["constraint"],
        Severity.parse(d["severity"]),
        d.get("layer"),
        float(d.get("weight", 1.0)),
        d.get("message", ""),
        d.get("detail", ""),
        d.get("hint", ""),
    )


def decision_from_dict(d: Mapping[str, Any]) -> Decision:
    """The inverse of ``Decision.to_dict``."""
    return Decision(
        Action(d["action"]),
        d["tool"],
        dict(d.get("args", {})),
        int(d.get("step", 0)),
        tuple(violation_from_dict(v) for v in d.get("violations", ())),
        d.get("message", ""),
        tuple(d.get("pending", ())),
        bool(d.get("escalated", False)),
    )


__all__ = [
    "Firewall",
    "FirewallConfigError",
    "FirewallReport",
    "FirewallStateError",
    "args_key",
    "decision_from_dict",
    "spec_hash",
]
