"""What the refused-call tests share: a guarded run's own transcript, scored offline,
must equal the firewall's online report (docs/traces.md, "Calls agentguard refused")."""

from __future__ import annotations

from typing import Any

from agentguard import parse_spec, verify_trace
from agentguard.enforcement.report import FirewallReport
from agentguard.language.dialogue import spec_mentions_dialogue
from agentguard.trace import Trace, trace_from_json
from agentguard.trace.refusal import is_refusal


def calls_of(trace: Trace) -> list[tuple[str, dict[str, Any], Any, bool]]:
    """Each position's name, arguments, result and error flag. A user message's
    ``tool_calls`` is left out: the readers write 0, the adapters observe no count (a
    difference of the dialogue events, not of what ran)."""
    return [
        (
            c.name,
            {k: v for k, v in c.args.items() if c.kind != "user" or k != "tool_calls"},
            c.result,
            c.error,
        )
        for c in trace
    ]


def assert_offline_equals_online(transcript: Any, spec: str, report: FirewallReport) -> Trace:
    """The transcript read back is the run's trace (calls, results, errors, dialogue
    events when the spec names them, ``num_tool_calls``) and scores as the run did."""
    parsed = parse_spec(spec)
    offline = trace_from_json(transcript, messages=spec_mentions_dialogue(parsed))
    assert calls_of(offline) == calls_of(report.trace)
    assert not any(is_refusal(c.result) for c in offline)
    assert offline.metrics["num_tool_calls"] == sum(
        1 for c in report.trace if c.is_tool and c.name != "final_answer"
    )
    scored = verify_trace(transcript, parsed)
    online = report.compliance
    assert scored.score == online.score
    assert [(c.name, c.passed) for c in scored.constraints] == [
        (c.name, c.passed) for c in online.constraints
    ]
    return offline
