"""Satisfiability and validity on the monitor's automaton agree with an independent DFA oracle."""

from __future__ import annotations

from hypothesis import given, settings

from agentguard import parse_formula
from agentguard._recursion import deep_recursion
from agentguard.analysis.search import explore
from agentguard.monitor.builder import build_machine
from agentguard.semantics.predicates import values_match
from tests.oracles.formulas import FUTURE, MIXED, Formula, formulas, to_agentguard
from tests.oracles.ltlf_oracle import dfa, empty_trace_holds
from tests.oracles.marks import engine_for, needs

# parsing raises the process-wide recursion limit once; do it before Hypothesis starts
# watching the limit, so it does not see the change as made by a test
with deep_recursion():
    pass


def _oracle(f: Formula, future: bool) -> tuple[bool, bool]:
    """(satisfiable, valid) over finite traces, the empty trace included."""
    auto = dfa(f, engine_for(future))
    after_one = {
        auto.delta[s][x] for s in range(auto.num_states) for x in range(len(auto.delta[s]))
    }
    nonempty_sat = bool(after_one & auto.accepting)
    nonempty_valid = after_one <= auto.accepting
    empty = empty_trace_holds(f)
    return empty or nonempty_sat, empty and nonempty_valid


def _ours(f: Formula) -> tuple[bool | None, bool | None]:
    e = explore(build_machine(parse_formula(to_agentguard(f)), None, values_match))
    return e.satisfiable, e.valid


@needs(engine_for(True))
@settings(max_examples=150, deadline=None)
@given(formulas(depth=3, fragment=FUTURE))
def test_future_formulas_match_the_oracle(f: Formula) -> None:
    """Future LTLf: exact satisfiability and validity."""
    assert _ours(f) == _oracle(f, True)


@needs(engine_for(False))
@settings(max_examples=80, deadline=None)
@given(formulas(depth=3, fragment=MIXED))
def test_mixed_past_future_formulas_match_the_oracle(f: Formula) -> None:
    """Past and future operators together: still exact."""
    assert _ours(f) == _oracle(f, False)
