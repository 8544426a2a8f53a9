"""Judging a proposed call: what it would violate, then the severity policy and its effects.

``_findings`` asks the monitor (and the tool checker and the shadow monitors) what the
call would violate on the executed prefix plus the calls in flight, with no effect;
``_judge`` turns that into a :class:`~agentguard.enforcement.decision.Decision` through
the pure severity policy (:func:`agentguard.enforcement.policy.judge`), asks an approver
for ASK constraints, and applies the outcome's counters. Part of the Firewall (see
:mod:`agentguard.enforcement.core`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from agentguard.enforcement.approval import Approval, ApprovalRequest, Approver, ask
from agentguard.enforcement.core import FirewallCore
from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.enforcement.flight import Findings
from agentguard.enforcement.log import BUDGET_EVENT, ERROR_EVENT
from agentguard.enforcement.log_redaction import safe_args, scrub, secret_texts
from agentguard.enforcement.messages import compose
from agentguard.enforcement.policy import DEAD_END_NOTE, Counts, Limits, Outcome, judge
from agentguard.monitor import Verdict
from agentguard.tools.checker import ToolProblem
from agentguard.trace.identity import call_key
from agentguard.trace.model import Call

SHADOW_NOTE: Final = "Shadow mode: not enforced, the call ran. Enforce mode would say: "


args_key = call_key
"""The identity of a call for BLOCK_AND_WARN's identical-retry rule (:func:`call_key`)."""


class Judging(FirewallCore):
    """What a proposed call would violate, and the decision the policy makes of it."""

    def _findings(self, call: Call, extra: Sequence[Call]) -> Findings:
        """What ``call`` would violate after the executed calls and ``extra`` (no effects)."""
        name, args = call.name, call.args
        ending = name in self.final_tools
        check = self._tools_check
        problems = check(name, args, self._calls, extra) if check is not None else []
        if extra:
            peek = self.monitor.peek([*extra, call], ending=ending)
            base = self.monitor.peek(list(extra)).verdicts
        else:
            peek = self.monitor.peek(call, ending=ending)
            if not (
                peek.changed
                or peek.errors
                or problems
                or self._shadows.active
                or (ending and False in peek.final.values())
            ):  # the common case: no verdict moves, nothing to sort out below
                return Findings(peek.verdicts, [], [], {}, problems, True)
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
        for n in self._shadows.active if self._shadows.active else ():  # violated again?
            if self._shadows.base(n, extra) is Verdict.VIOLATED:
                continue
            if self._shadows.peek(n, extra, call, ending).verdicts[n] is Verdict.VIOLATED:
                violated.append(n)
        clean = not (violated or deferred or errors or problems)
        return Findings(peek.verdicts, violated, deferred, errors, problems, clean)

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
        if outcome.sendback and self._dead_end_at == self._executed:
            outcome = Outcome(Action.ALLOW, note=DEAD_END_NOTE)  # a send-back changes nothing
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
        secrets = secret_texts(self._log.redact, call.name, call.args)
        self._log.emit(
            ERROR_EVENT,
            warn=True,
            step=step,
            tool=call.name,
            args=safe_args(self._log.redact, call.name, call.args),
            constraint=constraint,
            message=scrub(f"ignored (fail-open): {error}", secrets),
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


__all__ = ["SHADOW_NOTE", "Judging", "args_key"]
