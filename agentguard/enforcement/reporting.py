"""The end of a run and its state documents: the executed trace, ``finish`` with its
report, ``save`` / ``restore`` of a run that continues elsewhere.

Part of the Firewall (see :mod:`agentguard.enforcement.core`).
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from agentguard._identity_cache import IdentityCache
from agentguard.enforcement.decision import Decision
from agentguard.enforcement.execution import Execution
from agentguard.enforcement.report import FirewallReport
from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.monitor import Verdict
from agentguard.monitor.signing import Key, sign
from agentguard.scoring.report import ComplianceReport, ConstraintResult
from agentguard.trace.formats.agentguard_logs import FINISH_EVENT
from agentguard.trace.model import Trace


class TraceNotKeptError(AgentGuardError, RuntimeError):
    """The Firewall was asked for its trace but keeps none (``keep_trace=False``)."""


class Reporting(Execution):
    """The executed trace, the report at the end, the saved state."""

    @property
    def trace(self) -> Trace:
        """The executed calls with their results (kept with ``keep_trace=True``)."""
        with self._lock:
            if not self._keeps_calls:
                raise TraceNotKeptError(
                    "this Firewall keeps no trace (memory stays flat however long the run): "
                    "build it with Firewall(..., keep_trace=True), or read the run back "
                    "from its decision log (log_path=...: agentguard.load_traces(LOG) or "
                    "`agentguard check LOG`)"
                )
            return Trace(tuple(self._calls), self._metrics())

    def _metrics(self) -> dict[str, Any]:
        """The run's metrics record, counted as the loaders count a trace read back."""
        out: dict[str, Any] = {"num_tool_calls": self._tool_count}
        if self._error_positions:
            out["tool_errors"] = list(self._error_positions)
        return out

    @property
    def decisions(self) -> tuple[Decision, ...]:
        """Every decision (``keep_trace=True``); without it, those that refused a call or
        carried a violation, an approval or a shadow-mode refusal (the log has them all)."""
        return tuple(self._decisions)

    def finish(self, metrics: Mapping[str, Any] | None = None) -> FirewallReport:
        """End the run: offline verdicts of every constraint, the compliance report, history."""
        with self._cond:
            if self._report is not None:
                return self._report
            self._ending = True  # calls proposed while it settles are refused
            self._settle()
            if self._spans is not None:
                self._spans.unfinished()
            from agentguard.scoring.verify import verify_trace

            merged = {**self._metrics(), **dict(metrics or {})}
            verdicts = self.monitor.finish(merged)
            # the monitor's final verdicts are the offline ones: the same score and label
            summary = online_compliance(
                self.spec, verdicts, self.monitor.errors(), content=self._content
            )
            compliance: ComplianceReport | Callable[[], ComplianceReport] = summary
            if self._keeps_calls:  # the details (witnesses, tool checks) when first read
                trace = Trace(tuple(self._calls), merged)
                compliance = functools.partial(
                    verify_trace, trace, self.spec, registry=self.registry
                )
            else:
                trace = Trace((), merged)
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
                trace_kept=self._keeps_calls,
            )
            shadow: dict[str, Any] = {}
            if self.mode == "shadow":
                would = self._report.would_block
                shadow = {"shadow": True, "would_block": [d.call_id for d in would]}
            self._log.emit(
                FINISH_EVENT,
                step=self._step,
                action="finish",
                message=f"compliance {summary.score:.3f} ({summary.label})",
                verdict=summary.label,
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
            self._wait(remaining)
        for flight in list(self._inflight.values()):
            del self._inflight[flight.decision.call_id]
            self._withdrawn_now(
                flight.decision, "it started but had not finished when the run ended"
            )

    # ------------------------------------------------------------------ state files
    def save(self, *, key: Key | None = None) -> dict[str, Any]:
        """A versioned JSON-able document; :meth:`restore` continues with identical verdicts.

        It is the firewall's state: the executed calls only where it keeps them
        (``keep_trace=True``, or a tool precondition reading the history), otherwise the
        monitors' states and the run's counters, whose size does not grow with the run
        for finite-state monitors. With ``key`` (bytes or text) the document carries an
        HMAC-SHA256, and ``restore(..., key=key)`` refuses it once edited (a stopped run
        un-stopped)."""
        from agentguard.enforcement.state import save

        with self._lock:
            return sign(save(self), key)

    def save_state(self) -> dict[str, Any]:
        """Deprecated name of :meth:`save` (one verb pair: ``save`` / ``restore``)."""
        warnings.warn(
            "Firewall.save_state() is deprecated; use Firewall.save()", DeprecationWarning, 2
        )
        return self.save()


NOT_KEPT_DETAIL = (
    "Decided online; the trace was not kept (Firewall(keep_trace=True), or the run's "
    "decision log, gives the details)."
)


def online_compliance(
    spec: A.Spec,
    verdicts: Mapping[str, Verdict],
    errors: Mapping[str, str],
    *,
    content: object = None,
) -> ComplianceReport:
    """The compliance report from the monitor's final verdicts (equal to the offline
    evaluator's, so the score is the same), without the trace's per-call details.

    It depends on the spec and the outcomes alone (a frozen value), so runs that end
    alike share one: the runs of an agent mostly do, and building it was half of
    ``finish``. ``content`` (the token its firewall prototype shares with equal specs',
    ``enforcement/prototype.py``) keys it by the spec's content instead of its identity:
    equal specs (the same file loaded per run) share their reports too."""
    outcome = (tuple(verdicts.items()), tuple(errors.items()))
    if content is not None:
        return _online_reports.get(
            (id(content), *outcome),
            content,
            None,
            lambda: _online_compliance(spec, verdicts, errors),
        )
    key = (id(spec), *outcome)
    return _online_reports.get(key, spec, None, lambda: _online_compliance(spec, verdicts, errors))


_online_reports: IdentityCache[ComplianceReport] = IdentityCache(256)


def _online_compliance(
    spec: A.Spec, verdicts: Mapping[str, Verdict], errors: Mapping[str, str]
) -> ComplianceReport:
    from agentguard.scoring.report import score_of
    from agentguard.scoring.verify import assemble_report, details_of

    results = tuple(
        ConstraintResult(
            c.name,
            c.layer,
            c.weight,
            verdicts[c.name] is Verdict.SATISFIED,
            f"Evaluation error: {errors[c.name]}" if c.name in errors else NOT_KEPT_DETAIL,
            str(c.severity),
            c.message,
            errors.get(c.name),
        )
        for c in spec.constraints
    )
    summary = score_of(results), details_of(results, (), ())
    return assemble_report(results, spec, Trace(()), (), (), summary)


__all__ = ["NOT_KEPT_DETAIL", "Reporting", "TraceNotKeptError", "online_compliance"]
