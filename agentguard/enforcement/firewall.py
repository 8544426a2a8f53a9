"""``Firewall``: every proposed tool call is checked on its prefix before it runs.

The firewall keeps a :class:`~agentguard.monitor.Monitor` of the executed calls (with
their results) and asks it, for each proposal, what the verdicts would be if the call
were appended with its result still unknown (``peek``): a call is refused only when a
constraint becomes *definitively* violated. A final answer (a call to one of
``final_tools``) is also checked as if the run ended after it, so deferred obligations
(``F cite``) fire on the finishing attempt. Severities follow AgentLTL Appendix A.5.3.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from typing_extensions import Unpack

from agentguard.enforcement.agent_tools import (
    AgentTools,
    ToolMismatch,
    ToolMismatchError,
    compare_tools,
    warn_tool_mismatches,
)
from agentguard.enforcement.approval import Approver
from agentguard.enforcement.continuing import lines_after
from agentguard.enforcement.core import history
from agentguard.enforcement.decision import Decision, Violation
from agentguard.enforcement.flight import (
    FirewallProtocolError,
    Flight,
    error_text,
)
from agentguard.enforcement.judging import args_key
from agentguard.enforcement.log import DecisionLog
from agentguard.enforcement.log_anchor import Anchor
from agentguard.enforcement.log_redaction import Redactor
from agentguard.enforcement.options import (
    FirewallConfigError,
    FirewallOptions,
    RecordsAgain,
    Stale,
    check_choices,
    check_limits,
    severity_option,
)
from agentguard.enforcement.otel import DecisionSpans
from agentguard.enforcement.otel import wanted as otel_wanted
from agentguard.enforcement.permissions import Permissions
from agentguard.enforcement.permitting import only_the_end_runs, permissions
from agentguard.enforcement.proposing import Proposing
from agentguard.enforcement.prototype import firewall_prototype, spec_hash
from agentguard.enforcement.report import FirewallReport
from agentguard.enforcement.reporting import TraceNotKeptError
from agentguard.enforcement.shadows import Shadows
from agentguard.enforcement.state import STATE_FORMAT
from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.monitor import Monitor
from agentguard.monitor.signing import Key, verify
from agentguard.monitor.verdict import Classification
from agentguard.scoring.inputs import SpecLike, coerce_spec
from agentguard.semantics.registry import Registry
from agentguard.severity import Severity, SeverityKind
from agentguard.tools.checker import ToolChecker
from agentguard.trace.final_tool import FINAL_TOOLS
from agentguard.trace.model import Call

TOOL_MISMATCH_EVENT: Final = "agentguard.tool_mismatch"
DEFAULT_SCHEMA_SEVERITY: Final = Severity(SeverityKind.SOFT_BLOCK)
DEFAULT_ASK_FALLBACK: Final = Severity(SeverityKind.SOFT_BLOCK)


class FirewallStateError(AgentGuardError, ValueError):
    """A saved firewall state does not fit this spec or is malformed."""


class Firewall(Proposing):
    """Checks proposed calls against a spec; see the module docstring and docs/firewall.md.

    The execution protocol: ``propose`` (or ``propose_batch``) decides; an allowed
    decision is *in flight*. Right before the tool body runs the adapter calls ``start``
    (which may wait for, or re-check against, the calls the approval relied on); then
    ``complete`` with the result or the error, or ``withdraw`` if the call never ran.
    Only completed calls enter the trace.
    """

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
        strict_tools: bool = False,
        schema_severity: Severity | str = DEFAULT_SCHEMA_SEVERITY,
        start_timeout: float = 30.0,
        mode: str = "enforce",
        log_key: bytes | str | None = None,
        log_anchor: Anchor | None = None,
        otel: bool | None = None,
        tracer_provider: Any = None,
        approver: Approver | None = None,
        ask_fallback: Severity | str = DEFAULT_ASK_FALLBACK,
        on_budget: str = "warn",
        keep_trace: bool = False,
    ) -> None:
        check_choices(mode=mode, on_budget=on_budget, on_predicate_error=on_predicate_error)
        check_limits(soft_block_limit, max_finish_sendbacks, start_timeout)
        schema_severity = severity_option("schema_severity", schema_severity)
        ask_fallback = severity_option("ask_fallback", ask_fallback)
        self.on_budget = on_budget  # a constraint past its state budget: log, or stop the run
        self._budget_logged: set[str] = set()
        spec = coerce_spec(spec, registry)  # one rule for every entry: scoring/inputs.py
        final_tools = tuple(final_tools)
        # what depends on the spec and these options alone is built once per process
        # (enforcement/prototype.py); this firewall owns only its run's state
        proto = firewall_prototype(spec, registry, final_tools, enforce_tools)
        self._enforce_tools = enforce_tools  # False: declarations learned later are not checked
        # (the walks over the formulas ran there, under a raised recursion limit, which
        # stays raised: this constructor needs no `allow_deep` frame of its own)
        self.spec = spec
        self._judges_dialogue = proto.judges_dialogue
        self.registry = registry
        self.run_id = run_id or os.urandom(6).hex()
        self.soft_block_limit = soft_block_limit
        self.final_tools = final_tools
        self.max_finish_sendbacks = max_finish_sendbacks
        self.on_predicate_error = on_predicate_error
        self.schema_severity = schema_severity
        self.start_timeout = start_timeout
        self.mode = mode
        self.approver = approver
        self.ask_fallback = ask_fallback
        self.tools = ToolChecker.from_plan(proto.tools)
        # fixed for the run: the per-call steps ask these without a property call
        self._tools_check = self.tools.check if self.tools.enabled else None
        self._tools_observe = self.tools.observe if self.tools.observes else None
        self.monitor = Monitor.from_prototype(proto.monitor)
        self.spec_hash = proto.spec_hash
        self.spec_hashes = proto.spec_hashes  # what a state of this spec may carry
        self._content = proto.content  # equal specs' firewalls share their reports by it
        self._constraints = proto.constraints.copy()
        self._order = proto.order.copy()
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._waiting = 0
        # the history: kept on request (a tool precondition reads it); else counters only
        self.keep_trace = keep_trace
        self._keeps_calls = keep_trace or proto.reads_history
        self._calls: list[Call] = []
        self._executed = 0
        self._tool_count = 0
        self._error_positions: list[int] = []
        self._result_sensitive = proto.result_sensitive
        self._predicate_driven = proto.predicate_driven
        self._inflight: dict[str, Flight] = {}
        self._withdrawn: dict[str, str] = {}  # call_id -> why it never ran
        self._decisions: deque[Decision] = history(keep_trace)
        self._late: deque[Violation] = history(keep_trace)
        self._soft_counts: dict[str, int] = {}
        self._warned: dict[str, int] = {}  # call identity -> generation of its BAW warning
        self._generation = 0
        self._sendbacks = 0
        self._dead_end_at: int | None = None
        self._stopped = False
        self._step = 0
        self._shadows = Shadows(registry, self.final_tools)
        self._report: FirewallReport | None = None
        self._ending = False
        self._log = DecisionLog(
            run_id=self.run_id,
            spec_name=spec.name,
            spec_hash=self.spec_hash,
            path=log_path,
            logger=logger,
            redact=redact,
            key=log_key.encode() if isinstance(log_key, str) else log_key,
            anchor=log_anchor,
        )
        self.tool_mismatches: tuple[ToolMismatch, ...] = ()
        self.strict_tools = strict_tools  # a difference with the agent's tools raises
        if agent_tools is not None:  # (strict: an error, not a warning, after it is logged)
            compare = compare_tools if strict_tools else warn_tool_mismatches
            self.report_tool_mismatches(
                compare(
                    spec, agent_tools, implicit=frozenset(self.final_tools), names=proto.tool_names
                )
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

    def permissions(self, tools: Iterable[str] | None = None) -> Permissions:
        """What may run now, before the model acts: per tool refused, needing approval,
        allowed under argument conditions or free, and the obligations still open
        (``tools``: names to list besides the spec's). It only informs: ``propose`` still
        decides. Exact where the monitor is, labelled where not (docs/firewall.md,
        "What may run now")."""
        with self._lock:
            return permissions(self, tools)

    def offered_only_the_end(self, answer: Permissions, names: Sequence[str]) -> bool:
        """The agent, whose tools are ``names``, was told ``answer``. When it refuses each
        of them for good but the final answer (``permitting.only_the_end_runs``), no call
        can change the run before it ends: the final answer that follows is not sent
        back (it could only be refused again), and the run ends with its violations
        recorded. Returns whether that holds now."""
        with self._lock:
            if only_the_end_runs(self, answer, names):
                self._dead_end_at = self._executed
                return True
            return False

    def report_tool_mismatches(self, mismatches: Sequence[ToolMismatch]) -> None:
        """Keep and log differences between the spec's tools and the agent's (an adapter
        that learns the agent's tools after the run started calls this); with
        ``strict_tools``, any raises :class:`ToolMismatchError` once logged."""
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
        if mismatches and self.strict_tools:
            raise ToolMismatchError(mismatches)

    def declare_tools(self, found: Iterable[A.ToolDecl]) -> None:
        """Declare tools the agent gained after the run began (an MCP server's tools,
        listed again after ``tools/list_changed``), so a call to one is checked like a
        call to a declared tool, not refused as unknown; a tool the spec declares keeps
        the spec's declaration (see :meth:`ToolChecker.declare`). Not kept by
        :meth:`save`: an adapter restoring a run declares them again."""
        if not self._enforce_tools:
            return
        with self._lock:
            self.tools.declare(found)
            self._tools_check = self.tools.check if self.tools.enabled else None

    @classmethod
    def restore(
        cls,
        spec: SpecLike,
        state: Mapping[str, Any],
        *,
        key: Key | None = None,
        stale: Stale = "refuse",
        **kwargs: Unpack[FirewallOptions],
    ) -> Firewall:
        """A firewall continuing a run saved with :meth:`save` (e.g. in another process).

        With ``log_path``, a state older than the run's log is refused: if calls were
        judged or ran after it was saved (``stale="refuse"``, the default), its counts
        and stops are not the run's any more. ``stale=RecordsAgain(calls)`` is for an
        adapter that records those calls again itself (LangGraph resuming a thread from
        the checkpoint of its last model turn); even then a run that ended after them,
        or a call that ran after them and is not one of ``calls``, refuses it."""
        if stale != "refuse" and not isinstance(stale, RecordsAgain):
            raise FirewallConfigError(f"stale must be 'refuse' or RecordsAgain, got {stale!r}")
        from agentguard.enforcement.state import OLD_FORMATS, load, log_chain

        if not isinstance(state, Mapping) or (
            state.get("format") != STATE_FORMAT and state.get("format") not in OLD_FORMATS
        ):
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
        # a document that carries the trace goes on keeping it; one saved without does not
        kwargs.setdefault("keep_trace", "calls" in state)
        # the log is attached once the state is read: the run's chain goes on from the
        # line the state was saved after, never from a fresh genesis (docs/audit.md)
        log_path = kwargs.pop("log_path", None)
        fw = cls(spec, **kwargs)
        saved_hash = state.get("spec_hash")
        if not isinstance(saved_hash, str) or saved_hash not in fw.spec_hashes:
            raise FirewallStateError("the saved state belongs to a different spec")
        try:
            load(fw, state)
            after = log_chain(state)
        except (KeyError, TypeError, ValueError, IndexError, RecursionError) as exc:
            raise FirewallStateError(f"malformed firewall state: {exc}") from None
        if log_path is not None:
            later = lines_after(Path(log_path), fw.run_id, after)
            if later.finished is not None:
                raise FirewallStateError(
                    f"run {fw.run_id!r} ended in {log_path} (its finish line, seq "
                    f"{later.finished}) after this state was saved: a state from before the "
                    "end would roll the run back (its counts and stops); restore the state "
                    "saved at its end"
                )
            unknown = later.decided is not None and (
                not isinstance(stale, RecordsAgain)
                or any(call not in stale.calls for call in later.ran)
            )
            if unknown:
                raise FirewallStateError(
                    f"run {fw.run_id!r} went on in {log_path} after this state was saved "
                    f"(calls judged or run, up to seq {later.decided}): a state from before "
                    "them would roll the run back (its counts and stops); restore its "
                    "latest state"
                )
            fw._log.attach(log_path, after=after)
            if later.decided is not None:  # this log holds the run past the state
                fw._ran_elsewhere = frozenset(c for c in later.ran if c is not None)
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
    "TraceNotKeptError",
    "args_key",
    "decision_from_dict",
    "error_text",
    "spec_hash",
]
