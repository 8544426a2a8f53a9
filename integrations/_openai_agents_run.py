"""One OpenAI Agents run's firewall, the only place the adapter talks to it, and the
value conversions its calls need (results as JSON-able data).

A call goes through three SDK stages: the model turn (``on_llm_end``: the turn's calls
proposed as one batch), agentguard's tool input guardrail (the call's decision: a
refusal is rejected there, an allowed call is *held* for the invoker), and the wrapped
invoker (``start`` right before the function, then ``complete``). The SDK may drop a
call between two stages (another guardrail rejects it, a hook raises, the task is
cancelled, it waits for a human's approval): the call never ran, so its decision is
withdrawn, with the reason, as soon as the SDK is done with it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentguard.enforcement.decision import Decision
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.flight import FirewallProtocolError, refusal
from agentguard.enforcement.report import FirewallReport
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.json_values import json_value
from agentguard.trace.json_values import text_of as shown

from ._openai_agents_args import Prepared, same_arguments
from ._waiting_start import waiting_start


@dataclass(frozen=True)
class Pending:
    """A decision waiting for its call's next stage, with the arguments it judged."""

    decision: Decision
    prepared: Prepared


class AgentRun:
    """One run's firewall: batches, decisions held for the invoker, start, complete or
    withdraw; finish. ``call_ids`` are the ids of every call the model made in the run:
    a run resumed after a pause is found again by them (:mod:`._openai_agents_runs`).

    ``start`` may wait for calls it relied on, so it runs in asyncio's executor, off the
    event loop they finish on.
    """

    def __init__(self, firewall: Firewall, declared: Sequence[str] = ()) -> None:
        self.firewall = firewall
        self.declared = tuple(declared)
        """The function tools whose declarations the firewall's spec carries, in order."""
        self.learned: list[str] = []
        """Function tools declared to the firewall after it was built, in order."""
        self.report: FirewallReport | None = None
        self.refusal: str | None = None
        """Why every call of this run is refused, for the model (a run agentguard does
        not hold: its firewall ended before it began)."""
        self.call_ids: set[str] = set()
        self.claimed: set[str] = set()
        """Calls allowed to run, running or that ran: the same call allowed again (its
        paused state resumed twice, at once or one after the other) is a replay."""
        self._batch: dict[str, Pending] = {}  # call_id -> turn decision, no guardrail yet
        self._held: dict[str, Pending] = {}  # call_id -> allowed by the guardrail
        self._lock = threading.Lock()
        self.answered = False
        """A final answer was allowed: the run ends with it. A second one (the paused
        state resumed twice at once, both answering before either ended the run) is a
        replay, refused like a replayed call."""

    @property
    def ended(self) -> bool:
        return self.report is not None

    # the model turn ----------------------------------------------------------------
    def propose_turn(
        self, calls: Sequence[tuple[str, Prepared, str]], call_ids: Sequence[str]
    ) -> None:
        """A model turn: its call ids join the run's; ``calls`` (those that will run now,
        their arguments as the tools will receive them) are judged in order first."""
        with self._lock:
            self.call_ids.update(call_ids)
            self.claimed.difference_update(call_ids)  # a provider reusing an id: a new call
            self._sweep(self._batch, "the SDK never ran it (its model turn ended without it)")
            if not calls:
                return
            batch = [(name, prepared.args, call_id) for name, prepared, call_id in calls]
            decisions = self.firewall.propose_batch(batch)
            for (_, prepared, call_id), decision in zip(calls, decisions, strict=True):
                self._batch[call_id] = Pending(decision, prepared)  # a refusal is the answer

    # one call --------------------------------------------------------------------
    def decide(self, name: str, prepared: Prepared, call_id: str) -> Decision:
        """The decision for this call: its turn's, if it judged these arguments; else a
        fresh one (a turn decision on other arguments is withdrawn). A call allowed
        before in this run (its paused state resumed twice) is refused."""
        with self._lock:
            found = self._batch.pop(call_id, None)
            decision: Decision | None = None
            if found is not None:
                same = found.decision.tool == name and (
                    found.prepared.raw == prepared.raw
                    or same_arguments(found.prepared.args, prepared.args)
                )
                if same:
                    decision = found.decision
                else:
                    self._withdraw(found.decision, "the call that ran had other arguments")
            if decision is None:
                decision = self.firewall.propose(name, prepared.args, tool_call_id=call_id)
            if not decision.executes:
                return decision
            if name == FINAL_TOOL:
                if not self.answered:
                    self.answered = True
                    return decision
                reason = "the run already gave its final answer (a state resumed twice)"
                self._withdraw(decision, reason)
                return refusal(decision, f"agentguard refused this answer: {reason}.")
            if call_id not in self.claimed:
                self.claimed.add(call_id)
                return decision
            reason = f"the call {call_id} was already run in this run (a state resumed twice)"
            self._withdraw(decision, reason)
            return refusal(decision, f"agentguard refused this call: {reason}.")

    def unbatch(self, call_id: str, reason: str) -> None:
        """The call will not run with its turn: its turn decision is withdrawn."""
        with self._lock:
            found = self._batch.pop(call_id, None)
            if found is not None:
                self._withdraw(found.decision, reason)

    def turn_arguments(self, call_id: str, raw: str) -> Prepared | None:
        """The arguments this call's turn prepared, if the call still has that text."""
        with self._lock:
            found = self._batch.get(call_id)
        return found.prepared if found is not None and found.prepared.raw == raw else None

    def hold(self, decision: Decision, prepared: Prepared) -> None:
        """An allowed call passed agentguard's guardrail: kept for the invoker."""
        if decision.tool_call_id is not None:
            with self._lock:
                self._held[decision.tool_call_id] = Pending(decision, prepared)

    def take(self, call_id: str) -> Pending | None:
        """The held decision of a call whose invoker is running (None if none)."""
        with self._lock:
            return self._held.pop(call_id, None)

    def drop(self, call_id: str, reason: str) -> None:
        """The SDK is done with a call it never invoked: its held decision is withdrawn."""
        with self._lock:
            found = self._held.pop(call_id, None)
            if found is not None:
                self._withdraw(found.decision, reason)

    def withdraw(self, decision: Decision, reason: str) -> None:
        """The allowed call never ran (the SDK would refuse its arguments...)."""
        with self._lock:
            self._withdraw(decision, reason)

    async def start(self, decision: Decision) -> Decision:
        """The decision to act on as the function is about to run (a refusal counts as
        withdrawn). Cancelled while it waits, a call that started meanwhile is withdrawn:
        its function never runs."""
        future = waiting_start(self.firewall.start, decision)  # not a pool's thread
        try:
            started: Decision = await asyncio.shield(future)
        except asyncio.CancelledError:
            future.add_done_callback(self._unstart)
            raise
        if not started.executes:
            self._unclaim(decision)
        return started

    def withdraw_started(self, decision: Decision, reason: str) -> None:
        """A call that started, whose function never ran to its end: it was refused at
        the door (its validation would hand it other arguments), or it paused (an agent
        tool whose agent waits for an approval: the SDK runs it again, as a new call, on
        resume)."""
        self._unclaim(decision)
        if self.firewall.is_in_flight(decision):
            self.firewall.withdraw(decision, reason, started=True)

    def _unclaim(self, decision: Decision) -> None:
        if decision.tool_call_id is not None:
            with self._lock:
                self.claimed.discard(decision.tool_call_id)

    def _unstart(self, future: asyncio.Future[Decision]) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        started = future.result()
        if started.executes and self.firewall.is_in_flight(started):
            self.firewall.withdraw(started, "cancelled before its function ran", started=True)

    def ran(self, decision: Decision, result: Any, *, error: str | BaseException | None) -> None:
        """The function ran (and returned ``result`` or raised ``error``)."""
        try:
            self.firewall.complete(decision, result, error=error)
        except FirewallProtocolError:
            if self.firewall.is_in_flight(decision):
                raise  # else the run ended first and logged the call as unfinished

    def finish(self) -> FirewallReport:
        with self._lock:
            if self.report is None:
                self._sweep(self._batch, "the run ended before the SDK ran it")
                self._sweep(self._held, "the run ended before the SDK ran it")
                self.report = self.firewall.finish()
            return self.report

    def _sweep(self, pending: dict[str, Pending], reason: str) -> None:
        for found in pending.values():
            self._withdraw(found.decision, reason)
        pending.clear()

    def _withdraw(self, decision: Decision, reason: str) -> None:
        if decision.tool_call_id is not None:
            self.claimed.discard(decision.tool_call_id)
        if decision.executes and self.firewall.is_in_flight(decision):
            try:
                self.firewall.withdraw(decision, reason)
            except FirewallProtocolError:  # it started meanwhile: its invoker completes it
                return


def jsonable(value: Any) -> Any:
    """A tool's return value or a final output as the trace keeps it (JSON-able: a
    model's dump, anything else as the core's :func:`json_value` reads it, which never
    raises: a value whose ``__str__`` raises is still a result the call ran with)."""
    if value is None or isinstance(value, (str, int, float, bool, list, dict)):
        return value
    return json_value(value)


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=shown)


__all__ = ["AgentRun", "Pending", "jsonable", "text_of"]
