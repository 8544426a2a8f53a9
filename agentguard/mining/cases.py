"""Policy test cases from recorded runs: each run replayed, every call expected allowed.

The rollout step after ``mine`` is ``agentguard test SPEC CASES``: the runs the spec was
mined from are the first cases it must pass (each call allowed, the finished run fully
compliant), so an edit to the proposed spec that would refuse what the agent really
did fails a test before it reaches production (docs/mining.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentguard.trace.model import Trace


def _entry(call: Any) -> dict[str, Any]:
    if not call.is_tool:
        return {"message": call.kind, "text": call.args.get("text", "")}
    out: dict[str, Any] = {"tool": call.name, "args": dict(call.args)}
    if call.has_result:
        out["result"] = call.result
    if call.error:
        out["error"] = call.result if isinstance(call.result, str) else "error"
    out["expect"] = "allow"
    return out


def policy_cases(traces: Sequence[Trace], labels: Sequence[str] | None = None) -> dict[str, Any]:
    """``{"cases": [...]}``: one case per run, its calls and messages in order."""
    names = labels or [f"run {i + 1}" for i in range(len(traces))]
    return {
        "cases": [
            {
                "name": f"{label}: a recorded run, every call allowed",
                "calls": [_entry(c) for c in trace],
                "compliance": 1.0,
            }
            for label, trace in zip(names, traces, strict=True)
        ]
    }
