"""Law of ``ToolPermission.doomed``: a tool the answer marks doomed leaves no compliant
continuation. Checked against the product of the constraints' automata, explored
breadth-first from the states a call of the tool leads to (every data-bit combination a
letter, as the answer assumes): no reachable product state accepts in every machine."""

from __future__ import annotations

from collections import deque
from itertools import product
from typing import Any

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from agentguard.enforcement.firewall import Firewall
from agentguard.language import ast as A
from agentguard.monitor.machine import Machine
from agentguard.monitor.nodes import AutomatonNode
from agentguard.monitor.stepping import OTHER, Letter
from agentguard.monitor.verdict import Verdict
from agentguard.severity import Severity, SeverityKind
from tests.monitor.strategies import formulas, trace_predicates
from tests.strategies import TOOLS, data_formulas

CANDIDATES = (*TOOLS, "unnamed")
_T = st.sampled_from(TOOLS)
_K = st.integers(0, 2)


@st.composite
def procedures(draw: st.DrawFn) -> list[A.Formula]:
    """A constraint that asks for calls of a tool (a need) and one that bounds them (a
    room), on the same tool, among others: the shapes whose conjunction a call can doom."""
    x = draw(_T)
    need = draw(
        st.one_of(
            st.builds(lambda k: A.TracePredicate("CalledN", (x, k, ">=")), _K),
            st.builds(lambda y: A.Always(A.Implies(A.Event(y), A.Eventually(A.Event(x)))), _T),
            st.builds(
                lambda before, after: A.TracePredicate("InOrder", ((*before, x, *after),)),
                st.lists(_T, max_size=2),
                st.lists(_T, max_size=1),
            ),
        )
    )
    room = draw(
        st.one_of(
            st.builds(
                lambda k, op: A.TracePredicate("CalledN", (x, k, op)),
                _K,
                st.sampled_from(["=", "<="]),
            ),
            st.just(A.Always(A.Not(A.Event(x)))),
            st.just(A.Always(A.Implies(A.Event(x), A.Next(A.Always(A.Not(A.Event(x))), True)))),
        )
    )
    others = draw(st.lists(st.one_of(trace_predicates(), formulas(), data_formulas()), max_size=2))
    return [need, room, *others]


PRODUCT_STATES = 20_000
VALUES = st.one_of(st.integers(-3, 3), st.booleans(), st.none())
CALLS = st.tuples(
    st.sampled_from(CANDIDATES), st.dictionaries(st.sampled_from(["k"]), VALUES, max_size=1)
)


def _letters(m: Machine, tool: str) -> list[Letter]:
    cls = tool if tool in m.names else OTHER
    return [(cls, mask) for mask in range(1 << len(m._data[cls]))]


def _satisfiable(parts: list[tuple[Machine, set[int]]]) -> bool | None:
    """Can some continuation (every tool, every data bit free) make every machine
    accept, starting from any combination of the given states? None: too large."""
    tools = sorted({n for m, _ in parts for n in m.names} | {"\\x00other"})
    starts = list(product(*(sorted(states) for _, states in parts)))
    seen = set(starts)
    queue = deque(starts)
    while queue:
        states = queue.popleft()
        if all(m.accepts(s) for (m, _), s in zip(parts, states, strict=True)):
            return True
        for tool in tools:
            nexts = [
                {m.step(s, letter) for letter in _letters(m, tool)}
                for (m, _), s in zip(parts, states, strict=True)
            ]
            for combo in product(*(sorted(n) for n in nexts)):
                if combo not in seen:
                    if len(seen) >= PRODUCT_STATES:
                        return None
                    seen.add(combo)
                    queue.append(combo)
    return False


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    procedures(),
    st.lists(CALLS, max_size=4),
)
def test_a_doomed_tool_leaves_no_compliant_continuation(
    fs: list[A.Formula], prefix: list[tuple[str, dict[str, Any]]]
) -> None:
    tolerate = Severity(SeverityKind.TOLERATE)  # every call runs: the prefix is as given
    spec = A.Spec("s", tuple(A.Constraint(f"c{i}", f, severity=tolerate) for i, f in enumerate(fs)))
    fw = Firewall(spec, keep_trace=True)
    for name, args in prefix:
        fw.complete(fw.start(fw.propose(name, args)), "ok")
    answer = fw.permissions(CANDIDATES)
    nodes = {n: fw.monitor.node(n) for n in fw.monitor.verdicts}
    assume(all(isinstance(node, AutomatonNode) for node in nodes.values()))
    event(f"tools doomed: {len(answer.doomed)}")
    for tool in answer.doomed:
        parts = []
        for name, node in nodes.items():
            assert isinstance(node, AutomatonNode)
            if fw.monitor.verdicts[name] is Verdict.VIOLATED or node.error or node.budget:
                continue
            m = node.machine
            parts.append((m, {m.step(node.state, letter) for letter in _letters(m, tool)}))
        assert _satisfiable(parts) is not True, (tool, answer[tool].doomed)
