"""Proposing: ``propose`` and ``propose_batch``, each proposed call checked on the
executed prefix (and the calls in flight) before it runs.

A clean ALLOW, the common case, takes a short path here: no policy to apply, its
decision kept only with ``keep_trace`` and logged. Part of the Firewall (see
:mod:`agentguard.enforcement.core`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentguard.enforcement import hooks
from agentguard.enforcement.approval import ApproverRaised
from agentguard.enforcement.decision import Action, Decision
from agentguard.enforcement.flight import Flight, ProposedCall, unpack
from agentguard.enforcement.reporting import Reporting
from agentguard.errors import CallArgumentsError
from agentguard.trace._slots import slot_builder
from agentguard.trace.arguments import freeze_call_arguments
from agentguard.trace.model import Call

NO_CALLS: Final[frozenset[str]] = frozenset()
_allow: Final = slot_builder(Decision)  # every field, in order: a clean ALLOW per call
NO_FLIGHTS: Final[tuple[()]] = ()  # no call in flight: the common case, no list made


class Proposing(Reporting):
    """``propose`` / ``propose_batch``: a decision for each call before it runs."""

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
            self._generation += 1
            if self._warned:
                self._forget_warnings()
            args, uncheckable = freeze_call_arguments(name, args)
            try:  # one call alone: no other call of its turn can share its id (seen: None)
                try:
                    return self._check(name, args, tool_call_id, None, uncheckable)
                except BaseException as exc:  # _guarded, inlined (one frame less per call)
                    self._failed(exc, (name, args))
                    raise
            except BaseException:
                if saved is not None:  # an approver raised (a LangGraph interrupt): undo
                    self._undo_batch(saved, [])
                raise

    def propose_batch(self, calls: Sequence[ProposedCall]) -> list[Decision]:
        """One model generation of parallel calls, checked in order under one lock: each
        sees the earlier allowed ones. ``calls`` are ``(name, args)`` or
        ``(name, args, tool_call_id)``; a tool-call id given twice is refused after its
        first use (frameworks key parallel calls by id, so only one would run)."""
        with self._lock:
            saved = self._counters() if self.approver else None
            self._generation += 1
            if self._warned:
                self._forget_warnings()
            seen: set[str] = set()
            out: list[Decision] = []
            try:
                for entry in calls:
                    name, args, tool_call_id = unpack(entry)
                    try:
                        args, uncheckable = freeze_call_arguments(name, args)
                    except CallArgumentsError:  # a list, a JSON string, ...
                        for d in out:  # the turn is refused whole: none of it will run
                            if self._inflight.pop(d.call_id, None) is not None:
                                reason = f"another call of its turn ({name}) had bad arguments"
                                self._withdrawn_now(d, reason)
                        raise
                    try:  # _guarded, inlined (one frame less per call)
                        out.append(self._check(name, args, tool_call_id, seen, uncheckable))
                    except BaseException as exc:
                        self._failed(exc, (name, args))
                        raise
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

    def _forget_warnings(self) -> None:
        """A new generation began: BLOCK_AND_WARN warnings older than the last one lapse."""
        stale = [k for k, g in self._warned.items() if g < self._generation - 1]
        for key in stale:
            del self._warned[key]

    def _check(
        self,
        name: str,
        args: dict[str, Any],
        tool_call_id: str | None,
        seen: set[str] | None,
        uncheckable: str | None = None,
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
        if self._ending:  # finished (or finishing): no call of this run may run any more
            return self._decide(
                Decision(
                    Action.BLOCK,
                    name,
                    args,
                    step,
                    (),
                    f"agentguard refused this call: its run {self.run_id} already ended.",
                    (),
                    False,
                    call_id,
                    tool_call_id,
                )
            )
        if uncheckable is not None:  # what cannot be checked faithfully never runs
            message = f"agentguard refused this call: {uncheckable}."
            return self._decide(
                Decision(
                    Action.BLOCK, name, args, step, (), message, (), False, call_id, tool_call_id
                )
            )
        if tool_call_id is not None and seen is not None:
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
        call = Call.proposed(name, args)
        flights = list(self._inflight.values()) if self._inflight else NO_FLIGHTS
        extra = [f.call for f in flights] if flights else NO_FLIGHTS
        found = self._findings(call, extra)
        try:
            decision = (
                self._over_budget(call, step, found, call_id, tool_call_id)
                if self.monitor.over_budget()
                else None
            )
            if decision is None and found.clean:  # the common case: nothing to judge
                decision = _allow(
                    Action.ALLOW,
                    name,
                    args,
                    step,
                    (),
                    "",
                    (),
                    False,
                    call_id,
                    tool_call_id,
                    None,
                    None,
                )
                relied = frozenset(f.decision.call_id for f in flights) if flights else NO_CALLS
                self._inflight[call_id] = Flight(decision, call, relied, self._executed)
                # _decide, for a clean ALLOW: kept only with keep_trace, never a stop
                if self.keep_trace:
                    self._decisions.append(decision)
                log = self._log
                if log.active or hooks.SINKS:
                    log.decision(decision)
                if self._spans is not None:
                    self._spans.emit(
                        decision, start_ns=self._check_started, mode=self.mode, scrub=self._scrub
                    )
                if hooks.SINKS:
                    hooks.publish_decision(decision)
                return decision
            if decision is None:
                decision = self._judge(
                    call, step, found, call_id, tool_call_id, inflight=bool(extra)
                )
        except ApproverRaised:  # asked again when the call is proposed again
            self._step = step
            raise
        if decision.executes:
            relied = frozenset(f.decision.call_id for f in flights) if flights else NO_CALLS
            self._inflight[call_id] = Flight(decision, call, relied, self._executed)
        return self._decide(decision)


__all__ = ["NO_CALLS", "Proposing"]
