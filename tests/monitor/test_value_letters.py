"""One pass over a call for every value (value_letters.py) gives the per-value verdicts."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.language import parse_spec
from agentguard.monitor import Monitor, Verdict
from agentguard.monitor.nodes import BoolNode, Node
from agentguard.monitor.quantified import QuantNode
from agentguard.semantics.evaluator import holds
from agentguard.trace.model import UNKNOWN, Call, Trace
from tests.semantics.test_indexed import quantified as keyed_quantified
from tests.semantics.test_indexed import traces as keyed_traces
from tests.strategies import quantified
from tests.strategies import traces as data_traces

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


def _per_value(node: Node) -> int:
    """Make every quantified node under ``node`` ask per value; how many there were."""
    if isinstance(node, QuantNode):
        had = node._letters is not None
        node._letters = None
        return int(had)
    if isinstance(node, BoolNode):
        return sum(_per_value(c) for c in node.children)
    return 0


@SETTINGS
@given(st.one_of(keyed_quantified(), quantified()), st.one_of(keyed_traces(), data_traces()))
def test_one_pass_equals_per_value_letters(f: A.Formula, trace: Trace) -> None:
    """Verdicts, peeks (with their finals) and the final verdict match step by step.

    A final the per-value path leaves unknown (None) the one-pass path may know; then it
    must be the truth of the run ending with that call (its real result).
    """
    fast, slow = Monitor([A.Constraint("c", f)]), Monitor([A.Constraint("c", f)])
    _per_value(slow.node("c"))
    slow._router = None  # every call steps it (monitor/routing.py would skip some)
    prefix = Trace()
    for call in trace:
        for proposed in (call, call.with_result(UNKNOWN)):
            a, b = fast.peek(proposed, ending=True), slow.peek(proposed, ending=True)
            assert a.verdicts == b.verdicts
            if a.final != b.final:
                assert b.final["c"] is None
                with contextlib.suppress(AgentGuardError):
                    assert a.final["c"] == holds(f, prefix.append(call))
        assert dict(fast.step(call)) == dict(slow.step(call))
        prefix = prefix.append(call)
    assert fast.finish(trace.metrics) == slow.finish(trace.metrics)
    with contextlib.suppress(AgentGuardError):
        assert (fast.finish(trace.metrics)["c"] is Verdict.SATISFIED) == holds(f, trace)


def test_fifty_constraints_on_shared_tools_keep_their_lanes() -> None:
    """Constraints that share tools but test different lanes judge only their own lane."""
    text = "\n".join(
        f"constraint c{k} := forall o: G(use(id = o, lane = {k}) -> O open(id = o))"
        for k in range(50)
    )
    m = Monitor(parse_spec(text))
    assert all(m.node(f"c{k}")._letters is not None for k in range(50))  # type: ignore[attr-defined]
    for v in range(20):
        m.step(Call("open", {"id": v}))
    m.step(Call("use", {"id": 3, "lane": 7}))
    assert all(v is Verdict.PENDING for v in m.verdicts.values())
    peek = m.peek(Call("use", {"id": 99, "lane": 12}))
    assert peek.changed == ("c12",)
    m.step(Call("use", {"id": 99, "lane": 12}))
    assert [n for n, v in m.verdicts.items() if v is Verdict.VIOLATED] == ["c12"]
