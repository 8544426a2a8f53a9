"""The Firewall's fields, and the few steps every part of it shares.

:class:`~agentguard.enforcement.firewall.Firewall` is assembled from one class per job,
each in its own module, stacked in this order: the fields and shared steps here, judging
a proposal (:mod:`~agentguard.enforcement.judging`), the execution protocol
(:mod:`~agentguard.enforcement.execution`), the end of the run and its state documents
(:mod:`~agentguard.enforcement.reporting`), proposing
(:mod:`~agentguard.enforcement.proposing`), then construction
(:mod:`~agentguard.enforcement.firewall`). The annotations below are what every layer
may read; only the constructor sets them.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Final, TypeVar

from agentguard.enforcement import hooks
from agentguard.enforcement.approval import Approver, ApproverRaised
from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.enforcement.flight import FirewallProtocolError, Flight, call_of
from agentguard.enforcement.log import FAILURE_EVENT, DecisionLog
from agentguard.enforcement.log_redaction import scrub, secret_texts
from agentguard.enforcement.otel import DecisionSpans
from agentguard.enforcement.report import FirewallReport
from agentguard.enforcement.shadows import Shadows
from agentguard.language import ast as A
from agentguard.monitor import Monitor
from agentguard.semantics.registry import Registry
from agentguard.severity import Severity
from agentguard.tools.checker import ToolChecker, ToolProblem
from agentguard.trace.json_values import text_of
from agentguard.trace.model import Call


class FirewallCore:
    """The state of one run, shared by every part of the Firewall."""

    spec: A.Spec
    _judges_dialogue: bool  # the spec names a dialogue event: messages enter the trace
    registry: Registry | None
    run_id: str
    spec_hash: str
    spec_hashes: frozenset[str]  # every hash a saved state of this spec may carry
    _content: object  # shared by equal specs' firewalls (enforcement/prototype.py)
    soft_block_limit: int
    final_tools: tuple[str, ...]
    max_finish_sendbacks: int
    on_predicate_error: str
    on_budget: str
    schema_severity: Severity
    start_timeout: float
    mode: str
    approver: Approver | None
    ask_fallback: Severity
    tools: ToolChecker
    _tools_check: Callable[..., list[ToolProblem]] | None  # None: the spec declares no tools
    _tools_observe: Callable[[Call], None] | None  # None: observing keeps nothing
    monitor: Monitor
    _constraints: dict[str, A.Constraint]
    _order: dict[str, int]
    _lock: threading.RLock
    _cond: threading.Condition
    _waiting: int  # threads waiting on _cond (start, finish): only then is there anyone to wake
    keep_trace: bool
    _keeps_calls: bool  # keep_trace, or a tool precondition that reads the history
    _calls: list[Call]  # the executed calls, while _keeps_calls
    _executed: int  # how many calls entered the trace
    _tool_count: int  # metrics.num_tool_calls: executed tool calls, final answers excluded
    _error_positions: list[int]  # metrics.tool_errors
    _result_sensitive: frozenset[str]  # constraints a result (or a predicate) may decide
    _predicate_driven: frozenset[str]  # those with a user predicate (may not repeat itself)
    _inflight: dict[str, Flight]
    _withdrawn: dict[str, str]  # call_id -> why it never ran
    _decisions: deque[Decision]  # every one with keep_trace; else the last DECISIONS_KEPT flagged
    _late: deque[Violation]  # as _decisions
    _soft_counts: dict[str, int]
    _warned: dict[str, int]  # call identity -> generation of its BLOCK_AND_WARN warning
    _generation: int
    _sendbacks: int
    _dead_end_at: int | None  # the position at which the agent was offered only the end
    _stopped: bool
    _step: int
    _budget_logged: set[str]
    _shadows: Shadows
    _report: FirewallReport | None
    _ending: bool  # finish() began: no call may be approved any more
    _log: DecisionLog
    _spans: DecisionSpans | None
    _check_started: int  # when the check being decided began (ns), for its span

    def _guarded(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except BaseException as exc:
            self._failed(exc, args)
            raise

    def _failed(self, exc: BaseException, args: tuple[Any, ...]) -> None:
        """A firewall step raised ``exc`` while working on ``args``: the approver's own
        exception (a LangGraph interrupt) is raised as it came; any other error is logged
        (scrubbed) and the log flushed before it propagates (the caller re-raises).

        Called from the ``except`` clause of the step (the per-call paths inline their
        ``try`` rather than pay for :meth:`_guarded`'s extra frame)."""
        if isinstance(exc, ApproverRaised):
            raise exc.original from None
        if isinstance(exc, FirewallProtocolError) or not isinstance(exc, Exception):
            return
        secrets = secret_texts(self._log.redact, *call_of(args)) if args else []
        message = scrub(f"{type(exc).__name__}: {text_of(exc)}", secrets)
        self._log.emit(FAILURE_EVENT, warn=True, message=message)
        self._log.flush()

    def _wait(self, timeout: float) -> None:
        """Wait (the lock held) until a call in flight completes or is withdrawn."""
        self._waiting += 1
        try:
            self._cond.wait(timeout)
        finally:
            self._waiting -= 1

    def _wake(self) -> None:
        """A call left the in-flight set: wake the threads waiting for one (if any)."""
        if self._waiting:
            self._cond.notify_all()

    def _decide(self, decision: Decision) -> Decision:
        if self.keep_trace or not _routine(decision):
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
        return scrub(text, secret_texts(self._log.redact, decision.tool, decision.args))

    def _withdrawn_now(self, decision: Decision, reason: str) -> None:
        """Log a call that never ran; a later ``start`` of it is refused with the reason."""
        self._withdrawn[decision.call_id] = reason
        self._log.withdrawn(decision, reason)
        if self._spans is not None:
            self._spans.withdrawn(decision.call_id, reason)


DECISIONS_KEPT: Final = 1_000
"""Without ``keep_trace``, the flagged decisions (and late violations) a firewall keeps in
memory: the latest ones (a TOLERATE constraint may re-flag every call of a long run, a
result may break one again on every call; the log has them all)."""

T = TypeVar("T")


def history(keep_trace: bool) -> deque[T]:
    """Where a firewall keeps its decisions and late violations: all of them with
    ``keep_trace``, else the latest :data:`DECISIONS_KEPT`, so memory stays flat."""
    return deque() if keep_trace else deque(maxlen=DECISIONS_KEPT)


def _routine(d: Decision) -> bool:
    """A clean ALLOW: without ``keep_trace`` the firewall does not keep it (the log does)."""
    return d.action is Action.ALLOW and not d.violations and d.shadow is None and d.approval is None


__all__ = ["DECISIONS_KEPT", "FirewallCore", "history"]
