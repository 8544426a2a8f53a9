"""One final tool and one count: ``metrics.num_tool_calls`` is the same whoever counts it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.enforcement.firewall import Firewall
from agentguard.guard import FINAL_TOOL as GUARD_FINAL_TOOL
from agentguard.language import parse_spec
from agentguard.monitor import Verdict
from agentguard.scoring import verify_trace
from agentguard.trace.final_tool import FINAL_TOOL, FINAL_TOOLS, count_tool_calls
from agentguard.trace.formats import FINAL_ANSWER
from agentguard.trace.model import Trace

SPEC = parse_spec(
    "spec budget\ntool search(q: str)\ntool note()\n"
    "constraint few severity TOLERATE := metrics.num_tool_calls <= 2\n"
    "constraint some severity TOLERATE := metrics.num_tool_calls >= 1\n",
    source="budget.ltl",
)
NAMES = st.lists(st.sampled_from(["search", "note", FINAL_TOOL]), max_size=6)


def test_one_name_everywhere() -> None:
    """The loaders, the guard and the firewall's default use the same final tool name."""
    assert FINAL_TOOL == "final_answer"
    assert FINAL_ANSWER is FINAL_TOOL and GUARD_FINAL_TOOL is FINAL_TOOL
    assert Firewall(SPEC, keep_trace=True).final_tools == FINAL_TOOLS == (FINAL_TOOL,)


def _args(name: str) -> dict[str, str]:
    return {"q": "x"} if name == "search" else {}


def _records(names: list[str]) -> list[dict[str, object]]:
    return [{"tool_name": n, "arguments": _args(n), "tool_result": "ok"} for n in names]


@settings(max_examples=60, deadline=None)
@given(NAMES)
def test_firewall_and_loader_count_alike(names: list[str]) -> None:
    """The firewall's metrics, a loaded trace's metrics and count_tool_calls agree."""
    fw = Firewall(SPEC, keep_trace=True)
    for name in names:
        args = _args(name)
        assert fw.propose(name, args).executes
        fw.record(name, args, "ok")
    loaded = Trace.from_records(_records(names))
    expected = sum(1 for n in names if n != FINAL_TOOL)
    assert fw.trace.metrics["num_tool_calls"] == expected
    assert loaded.metrics["num_tool_calls"] == expected
    assert count_tool_calls(loaded) == expected


@settings(max_examples=60, deadline=None)
@given(NAMES)
def test_online_budget_equals_offline_budget(names: list[str]) -> None:
    """A num_tool_calls budget decided online by the firewall equals the offline verdict."""
    fw = Firewall(SPEC, keep_trace=True)
    for name in names:
        args = _args(name)
        fw.propose(name, args)
        fw.record(name, args, "ok")
    report = fw.finish()
    offline = verify_trace(Trace.from_records(_records(names)), SPEC)
    passed = {c.name: c.passed for c in offline.constraints}
    assert {n: v is Verdict.SATISFIED for n, v in report.verdicts.items()} == passed


def test_custom_final_tools_are_not_counted() -> None:
    """A firewall with its own final tools leaves them out of the count, like the helper."""
    fw = Firewall(SPEC, final_tools=("note",), keep_trace=True)
    for name, args in [("search", {"q": "x"}), ("note", {})]:
        fw.propose(name, args)
        fw.record(name, args, "ok")
    assert fw.trace.metrics["num_tool_calls"] == 1 == count_tool_calls(fw.trace, ("note",))
