"""Firewall state documents: what :meth:`Firewall.save_state` writes and
:meth:`Firewall.restore` reads, so a run continues in another process with identical
decisions (the monitor, executed calls, calls in flight, decisions, counters, the
BLOCK_AND_WARN retry pointers, the positions excused from each shadow monitor)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from agentguard.enforcement.decision import Decision, Violation
from agentguard.enforcement.flight import Flight
from agentguard.trace.model import UNKNOWN, Call

if TYPE_CHECKING:
    from agentguard.enforcement.firewall import Firewall

STATE_FORMAT: Final = "agentguard.firewall/1"


def save(fw: Firewall) -> dict[str, Any]:
    """The state document of ``fw`` (the caller holds its lock)."""
    return {
        "format": STATE_FORMAT,
        "run_id": fw.run_id,
        "spec_hash": fw.spec_hash,
        "monitor": fw.monitor.save(),
        "calls": [c.to_record() for c in fw._calls],
        "inflight": [
            {
                "call": f.call.to_record(),
                "decision": f.decision.to_dict(),
                "relied": sorted(f.relied),
                "position": f.position,
                "started": f.started,
            }
            for f in fw._inflight.values()
        ],
        "decisions": [d.to_dict() for d in fw._decisions],
        "late": [v.to_dict() for v in fw._late],
        "soft_counts": dict(fw._soft_counts),
        "warned": dict(fw._warned),
        "generation": fw._generation,
        "excused": {n: sorted(p) for n, p in fw._shadows.excused.items()},
        "withdrawn": dict(fw._withdrawn),
        "sendbacks": fw._sendbacks,
        "stopped": fw._stopped,
        "step": fw._step,
    }


def load(fw: Firewall, state: Mapping[str, Any]) -> None:
    """Put ``state`` into a fresh firewall of the same spec (raises KeyError, TypeError,
    ValueError or IndexError on a malformed document)."""
    fw.monitor.load(state["monitor"])
    fw._calls = [_call(r, i) for i, r in enumerate(state["calls"])]
    for call in fw._calls:
        if call.is_tool:
            fw.tools.observe(call)
    fw._decisions = [Decision.from_dict(d) for d in state["decisions"]]
    for f in state["inflight"]:
        decision = Decision.from_dict(f["decision"])
        fw._inflight[decision.call_id] = Flight(
            decision,
            _call(f["call"], 0),
            frozenset(f.get("relied", ())),
            int(f.get("position", len(fw._calls))),
            bool(f.get("started", False)),
        )
    for name, positions in state.get("excused", {}).items():
        for position in positions:
            fw._shadows.excuse(fw._constraints[name], int(position), fw._calls)
    fw._late = [Violation.from_dict(v) for v in state["late"]]
    fw._soft_counts = {str(k): int(v) for k, v in state["soft_counts"].items()}
    fw._warned = {str(k): int(v) for k, v in state.get("warned", {}).items()}
    fw._generation = int(state.get("generation", 0))
    fw._withdrawn = {str(k): str(v) for k, v in state.get("withdrawn", {}).items()}
    fw._sendbacks = int(state["sendbacks"])
    fw._stopped = bool(state["stopped"])
    fw._step = int(state["step"])


def _call(record: Mapping[str, Any], position: int) -> Call:
    return Call(
        str(record["tool_name"]),
        dict(record.get("arguments", {})),
        record.get("tool_result", UNKNOWN),
        position,
        bool(record.get("is_error", False)),
        record.get("kind", "tool"),
    )


__all__ = ["STATE_FORMAT", "load", "save"]
