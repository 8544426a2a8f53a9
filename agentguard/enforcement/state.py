"""Firewall state documents: what :meth:`Firewall.save` writes and
:meth:`Firewall.restore` reads, so a run continues in another process with identical
decisions (the monitor, calls in flight, decisions, counters, the BLOCK_AND_WARN retry
pointers, each shadow monitor's state; the executed calls only where the firewall keeps
them).

Format 2 is the firewall's state, not its history: a firewall that keeps no trace saves
without one, the shadows as monitor states (format 1 listed the positions each shadow
skipped and replayed the calls), the run's counters and the values seen at the tools'
``from`` sources, so its size is the monitors' (flat for finite-state ones) and not the
run's. Format 1 documents still restore (they always carry the calls)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from typing import Any, Final, Protocol, get_args

from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.enforcement.flight import Flight
from agentguard.enforcement.log import DecisionLog
from agentguard.enforcement.shadows import Shadows
from agentguard.language import ast as A
from agentguard.monitor import Monitor
from agentguard.monitor.persistence import expect_bool, expect_int, expect_list, expect_mapping
from agentguard.semantics.registry import Registry
from agentguard.tools.checker import ToolChecker
from agentguard.trace.final_tool import count_tool_calls
from agentguard.trace.model import UNKNOWN, Call, CallKind


class Firewall(Protocol):
    """What a state document saves of a firewall (the firewall module imports this one,
    not the reverse: no import cycle)."""

    run_id: str
    spec: A.Spec
    spec_hash: str
    registry: Registry | None
    final_tools: tuple[str, ...]
    tools: ToolChecker
    monitor: Monitor
    _keeps_calls: bool
    _calls: list[Call]
    _executed: int
    _tool_count: int
    _error_positions: list[int]
    _constraints: dict[str, A.Constraint]
    _decisions: deque[Decision]
    _inflight: dict[str, Flight]
    _late: deque[Violation]
    _soft_counts: dict[str, int]
    _warned: dict[str, int]
    _generation: int
    _shadows: Shadows
    _withdrawn: dict[str, str]
    _sendbacks: int
    _stopped: bool
    _step: int
    _log: DecisionLog


STATE_FORMAT: Final = "agentguard.firewall/2"
OLD_FORMATS: Final = ("agentguard.firewall/1",)
"""Formats :func:`load` still reads (format 1 carries the calls and the excused positions)."""


def save(fw: Firewall) -> dict[str, Any]:
    """The state document of ``fw`` (the caller holds its lock)."""
    history: dict[str, Any] = (
        {"calls": [c.to_record() for c in fw._calls]}
        if fw._keeps_calls
        else {
            "executed": fw._executed,
            "tool_count": fw._tool_count,
            "error_positions": list(fw._error_positions),
            "observed": fw.tools.observed(),
        }
    )
    return {
        "format": STATE_FORMAT,
        "run_id": fw.run_id,
        "spec_hash": fw.spec_hash,
        "monitor": fw.monitor.save(),
        **history,
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
        "shadows": fw._shadows.save(),
        "withdrawn": dict(fw._withdrawn),
        "sendbacks": fw._sendbacks,
        "stopped": fw._stopped,
        "step": fw._step,
        # the log's chain so far: a restored run continues it (docs/audit.md)
        "log_chain": None if (last := fw._log.chain_position) is None else list(last),
    }


def log_chain(state: Mapping[str, Any]) -> tuple[int, str] | None:
    """The ``(seq, hash)`` of the run's last log line when ``state`` was saved, or None
    (no file log then, or a state from before the field)."""
    value = state.get("log_chain")
    if value is None:
        return None
    entries = expect_list(value, "log_chain")
    if len(entries) != 2:
        raise ValueError("log_chain must be [seq, hash]")
    return expect_int(entries[0], "log_chain seq"), _text(entries[1], "log_chain hash")


def load(fw: Firewall, state: Mapping[str, Any]) -> None:
    """Put ``state`` into a fresh firewall of the same spec, every field checked (its
    type, its range, that names are this spec's constraints and positions this run's
    calls); ``ValueError`` names the first field that does not fit."""
    fw.monitor = Monitor.restore(
        fw.spec,
        expect_mapping(state.get("monitor"), "monitor"),
        registry=fw.registry,
        uncounted=fw.final_tools,
    )
    if "calls" in state:
        _load_calls(fw, expect_list(state.get("calls"), "calls"))
    else:
        _load_counters(fw, state)
    if fw.monitor.position != fw._executed:
        raise ValueError("the monitor's position does not match the executed calls")
    fw._decisions = deque(
        (_decision(d) for d in expect_list(state.get("decisions"), "decisions")),
        maxlen=fw._decisions.maxlen,
    )
    for i, f in enumerate(expect_list(state.get("inflight"), "inflight")):
        f = expect_mapping(f, f"inflight[{i}]")
        decision = _decision(f.get("decision"))
        relied = expect_list(f.get("relied", []), f"inflight[{i}].relied")
        fw._inflight[decision.call_id] = Flight(
            decision,
            _call(f.get("call"), 0),
            frozenset(_text(r, f"inflight[{i}].relied") for r in relied),
            expect_int(f.get("position", fw._executed), "position", hi=fw._executed),
            expect_bool(f.get("started", False), f"inflight[{i}].started"),
        )
    if "shadows" in state:
        shadows = expect_mapping(state.get("shadows"), "shadows")
        for name, doc in shadows.items():
            fw._shadows.restore(_constraint(fw, name, "shadows"), expect_mapping(doc, name))
    else:  # format 1: the positions each shadow skipped, replayed on the calls
        excused = expect_mapping(state.get("excused", {}), "excused")
        for name, positions in excused.items():
            hi = max(len(fw._calls) - 1, 0)
            skipped = [
                expect_int(p, f"excused[{name!r}]", hi=hi)
                for p in expect_list(positions, f"excused[{name!r}]")
            ]
            fw._shadows.rebuild(_constraint(fw, name, "excused"), skipped, fw._calls)
    if not fw._keeps_calls:
        fw._calls = []  # read for the shadows; this firewall keeps no trace
    late = expect_list(state.get("late"), "late")
    fw._late = deque((_violation(v) for v in late), maxlen=fw._late.maxlen)
    fw._soft_counts = _counts(state.get("soft_counts"), "soft_counts")
    fw._warned = _counts(state.get("warned", {}), "warned")
    fw._generation = expect_int(state.get("generation", 0), "generation")
    withdrawn = expect_mapping(state.get("withdrawn", {}), "withdrawn")
    fw._withdrawn = {_text(k, "withdrawn"): _text(v, "withdrawn") for k, v in withdrawn.items()}
    fw._sendbacks = expect_int(state.get("sendbacks"), "sendbacks")
    fw._stopped = expect_bool(state.get("stopped"), "stopped")
    fw._step = expect_int(state.get("step"), "step", lo=fw._tool_count)


def _load_calls(fw: Firewall, records: list[Any]) -> None:
    """The executed calls, and what the firewall counts and indexes from them."""
    fw._calls = [_call(r, i) for i, r in enumerate(records)]
    fw._executed = len(fw._calls)
    fw._tool_count = count_tool_calls(fw._calls, fw.final_tools)
    fw._error_positions = [c.position for c in fw._calls if c.error]
    for call in fw._calls:
        if call.is_tool:
            fw.tools.observe(call)


def _load_counters(fw: Firewall, state: Mapping[str, Any]) -> None:
    """A state saved without the calls: the counters and the ``from`` values seen."""
    if fw._keeps_calls:
        raise ValueError(
            "the state carries no executed calls (saved by a firewall that kept no trace): "
            "restore it with keep_trace=False and a spec whose tools read no history"
        )
    fw._executed = expect_int(state.get("executed"), "executed")
    fw._tool_count = expect_int(state.get("tool_count"), "tool_count", hi=fw._executed)
    errors = expect_list(state.get("error_positions", []), "error_positions")
    hi = max(fw._executed - 1, 0)
    fw._error_positions = [expect_int(p, "error_positions", hi=hi) for p in errors]
    fw.tools.restore_observed(expect_list(state.get("observed", []), "observed"))


def _constraint(fw: Firewall, name: str, field: str) -> A.Constraint:
    if name not in fw._constraints:
        raise ValueError(f"{field} names {name!r}, not a constraint of this spec")
    return fw._constraints[name]


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must hold strings, got {type(value).__name__}")
    return value


def _counts(value: Any, what: str) -> dict[str, int]:
    counts = expect_mapping(value, what)
    return {_text(k, what): expect_int(v, f"{what}[{k!r}]") for k, v in counts.items()}


def _call(record: Any, position: int) -> Call:
    record = expect_mapping(record, f"call {position}")
    arguments = expect_mapping(record.get("arguments", {}), f"call {position} arguments")
    return Call(
        _text(record.get("tool_name"), f"call {position} tool_name"),
        dict(arguments),
        record.get("tool_result", UNKNOWN),
        position,
        expect_bool(record.get("is_error", False), f"call {position} is_error"),
        _kind(record.get("kind", "tool"), position),
    )


CALL_KINDS: Final = get_args(CallKind)


def _kind(value: Any, position: int) -> CallKind:
    if value not in CALL_KINDS:
        raise ValueError(f"call {position} kind: expected one of {CALL_KINDS}, got {value!r}")
    kind: CallKind = value
    return kind


def _violation(d: Any) -> Violation:
    d = expect_mapping(d, "a violation")
    _text(d.get("constraint"), "a violation's constraint")
    _text(d.get("severity"), "a violation's severity")
    if d.get("layer") is not None:
        _text(d.get("layer"), "a violation's layer")
    weight = d.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)):
        raise ValueError("a violation's weight must be a number")
    if not math.isfinite(weight):
        raise ValueError("a violation's weight must be finite")
    for name in ("message", "detail", "hint"):
        _text(d.get(name, ""), f"a violation's {name}")
    return Violation.from_dict(d)


def _decision(d: Any) -> Decision:
    d = expect_mapping(d, "a decision")
    if d.get("action") not in {a.value for a in Action}:
        raise ValueError(f"a decision's action {d.get('action')!r:.40} is not an action")
    _text(d.get("tool"), "a decision's tool")
    expect_mapping(d.get("args", {}), "a decision's args")
    expect_int(d.get("step", 0), "a decision's step")
    for v in expect_list(d.get("violations", []), "a decision's violations"):
        _violation(v)
    _text(d.get("message", ""), "a decision's message")
    for n in expect_list(d.get("pending", []), "a decision's pending"):
        _text(n, "a decision's pending")
    expect_bool(d.get("escalated", False), "a decision's escalated")
    _text(d.get("call_id", ""), "a decision's call_id")
    if d.get("tool_call_id") is not None:
        _text(d.get("tool_call_id"), "a decision's tool_call_id")
    return Decision.from_dict(d)


__all__ = ["OLD_FORMATS", "STATE_FORMAT", "load", "log_chain", "save"]
