"""The severity policy of AgentLTL Appendix A.5.3 as a pure function.

Given the violations a proposed call would cause, the counts the run has kept so far and
the firewall's limits, :func:`judge` says what happens to the call and what the caller
must count. It reads no monitor and mutates nothing, so every rule is testable on plain
values; the :class:`~agentguard.enforcement.firewall.Firewall` keeps the orchestration
(which violations, locking, persistence) and applies the outcome.

The rules, strongest first:

* ``HARD_STOP``: the call does not run and the run ends.
* ``SOFT_BLOCK(k)``: the call does not run; after ``k`` blocked attempts of the same
  constraint the next violation escalates to a stop (``k`` defaults to the firewall's
  ``soft_block_limit``).
* ``BLOCK_AND_WARN``: the call does not run and the model is warned, unless it is an
  identical retry of a call warned in the *immediately preceding* generation (model turn):
  then it runs as an override. A sibling in the same parallel batch is not a retry (the
  model has not seen the warning yet), and the override covers that one call only.
* ``TOLERATE``: the call runs; the violation is logged.
* ``ASK`` (an extension beyond the paper): with an approver, a call whose only refusing
  violations are ``ASK`` ones is held for approval (``Outcome.ask``); the approver's
  answer comes back as ``approval``: approved, the call runs (``OVERRIDE``, a deliberate
  exception); denied, it is blocked. A stronger refusal fired by the same call (a stop,
  a block) wins without asking. Without an approver, ``ASK`` acts as
  ``Limits.ask_fallback`` (SOFT_BLOCK with the default limit unless configured).

A refused final answer is sent back to the model at most ``max_finish_sendbacks`` times;
after that the run finishes with the violations recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from agentguard.enforcement.decision import Action, Violation
from agentguard.severity import DEFAULT_SEVERITY, Severity, SeverityKind


@dataclass(frozen=True, slots=True)
class Limits:
    """The firewall's configured limits."""

    soft_block: int = 3
    finish_sendbacks: int = 3
    ask_fallback: Severity = DEFAULT_SEVERITY  # what ASK is without an approver


@dataclass(frozen=True, slots=True)
class Counts:
    """What the run has counted so far: blocked SOFT_BLOCK attempts per constraint, and
    final answers sent back."""

    soft_blocks: Mapping[str, int]
    sendbacks: int = 0


DEAD_END_NOTE: Final = (
    "Nothing but the final answer may run now (every tool of the agent is refused for "
    "good): finishing with the violations recorded."
)
"""The note of a final answer not sent back because no call could run before it."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happens to the call, and what the caller must count.

    ``warned``: a refusal carrying a BLOCK_AND_WARN warning, which the model may override
    by repeating the call in its next generation. ``counted``: SOFT_BLOCK constraints whose blocked-attempt count
    goes up by one. ``sendback``: a refused final answer that uses up one send-back.
    """

    action: Action
    escalated: bool = False
    warned: bool = False
    counted: tuple[str, ...] = ()
    sendback: bool = False
    note: str = ""
    ask: tuple[str, ...] = ()  # ASK constraints to put to the approver (the call is held)
    denied: bool = False  # the approver refused the call


def judge(
    violations: Sequence[Violation],
    *,
    counts: Counts,
    limits: Limits,
    retry: bool = False,
    ending: bool = False,
    approver: bool = False,
    approval: bool | None = None,
) -> Outcome:
    """The action for a call causing ``violations`` (see the module docstring).

    ``retry``: the call is identical to one refused with a BLOCK_AND_WARN warning in the
    immediately preceding generation. ``ending``: the call is a final answer.
    ``approver``: an approver can be asked; ``approval``: its answer for this call.
    """
    if not violations:
        return Outcome(Action.ALLOW)
    if not approver:  # ASK falls back to a configured severity
        fallback = limits.ask_fallback
        violations = [
            Violation(v.constraint, fallback, v.layer, v.weight, v.message, v.detail, v.hint)
            if v.severity.kind is SeverityKind.ASK
            else v
            for v in violations
        ]
    stop = block = override = escalated = warned = False
    asked: list[str] = []
    for v in violations:
        kind = v.severity.kind
        if kind is SeverityKind.ASK:
            asked.append(v.constraint)
        elif kind is SeverityKind.HARD_STOP:
            stop = True
        elif kind is SeverityKind.SOFT_BLOCK:
            limit = v.severity.limit if v.severity.limit is not None else limits.soft_block
            if counts.soft_blocks.get(v.constraint, 0) >= limit:
                stop = escalated = True
            else:
                block = True
        elif kind is SeverityKind.BLOCK_AND_WARN:
            warned = True
            if retry:
                override = True
            else:
                block = True
        elif kind is SeverityKind.TOLERATE:
            pass
        else:  # pragma: no cover - exhaustive over SeverityKind
            raise AssertionError(kind)
    if stop:
        return Outcome(Action.STOP, escalated=escalated)
    if block:
        counted = tuple(
            dict.fromkeys(
                v.constraint for v in violations if v.severity.kind is SeverityKind.SOFT_BLOCK
            )
        )
        if ending and counts.sendbacks >= limits.finish_sendbacks and not asked:
            note = (
                f"Send-back limit ({limits.finish_sendbacks}) reached: finishing with the "
                "violations recorded."
            )
            return Outcome(Action.ALLOW, note=note)
        return Outcome(Action.BLOCK, warned=warned, counted=counted, sendback=ending)
    if asked:
        if approval is None:
            return Outcome(Action.BLOCK, ask=tuple(dict.fromkeys(asked)))
        if not approval:
            return Outcome(Action.BLOCK, denied=True, sendback=ending)
        override = True
    # only TOLERATE, overridden BLOCK_AND_WARN and approved ASK violations remain: it runs
    return Outcome(Action.OVERRIDE if override else Action.ALLOW)


__all__ = ["DEAD_END_NOTE", "Counts", "Limits", "Outcome", "judge"]
