"""One OpenAI Agents run's firewall, the only place the adapter talks to it, and the
value conversions its calls need (arguments from JSON text, results as JSON-able data)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from agentguard.enforcement.decision import Action, Decision
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.report import FirewallReport


class AgentRun:
    """One run's firewall: batch proposals, start, then complete or withdraw; finish.

    The only place the adapter talks to the firewall. ``start`` may wait for calls it
    relied on, so it runs in a worker thread, off the event loop they finish on.
    """

    def __init__(self, firewall: Firewall) -> None:
        self.firewall = firewall
        self.report: FirewallReport | None = None
        self._proposed: dict[str, Decision] = {}  # call_id -> decision not started yet
        self._started: dict[str, Decision] = {}  # call_id -> decision whose body may run
        self._lock = threading.Lock()

    def propose_turn(self, calls: Sequence[tuple[str, dict[str, Any], str]]) -> None:
        """A model turn's function calls, judged in order before any runs."""
        with self._lock:
            self._sweep("the SDK did not run it (another guardrail, or its arguments, refused it)")
            if calls and self.report is None:
                for decision in self.firewall.propose_batch(list(calls)):
                    if decision.tool_call_id is not None:
                        self._proposed[decision.tool_call_id] = decision

    def decision(self, name: str, args: dict[str, Any], call_id: str) -> Decision:
        """The turn's decision for this call, or a fresh one if the turn did not list it."""
        with self._lock:
            found = self._proposed.pop(call_id, None)
            if found is not None:
                return found
            if self.report is not None:
                return after_finish(name, args)
            return self.firewall.propose(name, args, tool_call_id=call_id)

    async def start(self, decision: Decision) -> Decision:
        """The decision to act on as the body is about to run (a refusal is withdrawn)."""
        if self.report is not None:
            return after_finish(decision.tool, dict(decision.args))
        started: Decision = await asyncio.to_thread(self.firewall.start, decision)
        if started.executes and started.tool_call_id is not None:
            with self._lock:
                self._started[started.tool_call_id] = started
        return started

    def take_started(self, call_id: str) -> Decision | None:
        with self._lock:
            return self._started.pop(call_id, None)

    def ran(self, decision: Decision, result: Any, *, error: str | BaseException | None) -> None:
        with self._lock:
            if self.report is None:
                self.firewall.complete(decision, result, error=error)

    def finish(self) -> FirewallReport:
        with self._lock:
            if self.report is None:
                self._sweep("the run ended before it ran")
                self.report = self.firewall.finish()
            return self.report

    def _sweep(self, reason: str) -> None:
        for decision in self._proposed.values():
            if decision.executes and self.firewall.is_in_flight(decision):
                self.firewall.withdraw(decision, reason)
        self._proposed.clear()

    @property
    def stopped(self) -> bool:
        return self.firewall.stopped


def after_finish(name: str, args: dict[str, Any]) -> Decision:
    """The answer to a call that arrives after its run was stopped and finished."""
    message = "agentguard stopped the run; this call was not executed."
    return Decision(Action.STOP, name, args, message=message)


def arguments_of(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return dict(value) if isinstance(value, Mapping) else {}


def jsonable(value: Any) -> Any:
    """A tool's return value or a final output as the trace keeps it (JSON-able)."""
    if value is None or isinstance(value, (str, int, float, bool, list, dict)):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return str(value)


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


__all__ = ["AgentRun", "after_finish", "arguments_of", "jsonable", "text_of"]
