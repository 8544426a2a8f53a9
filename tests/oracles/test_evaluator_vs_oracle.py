"""agentguard's ``holds`` agrees with independent LTLf engines on random formula/trace pairs.

Future formulas are checked against Spot (``spot.from_ltlf``), past and mixed ones against
MONA's automaton of the first-order encoding; the empty trace against the documented
convention (see ``docs/oracles.md``). Any disagreement is reported smallest first.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings

from agentguard import Trace, holds, parse_formula

from .comparison import Disagreement, Plan, engine_if_available, plan_params, report
from .formulas import (
    FUTURE,
    MIXED,
    PAST,
    Atom,
    Bin,
    Formula,
    Fragment,
    Un,
    formulas,
    sample_cases,
    to_agentguard,
    traces,
)
from .ltlf_oracle import Engine, empty_trace_holds, oracle_holds
from .marks import needs_mona

#: 9,000 non-empty pairs in all, 5,000 of them on Spot alone, so a machine without MONA
#: still meets the 5,000.
PLAN: Plan = (
    (FUTURE, "spot", 101, 500, 10),
    (PAST, "mona", 102, 150, 10),
    (MIXED, "mona", 103, 250, 10),
)
DEPTH = 4
MAX_LEN = 8


def agentguard_holds(formula: Formula, word: Sequence[str]) -> bool:
    return bool(holds(parse_formula(to_agentguard(formula)), Trace.of(*word)))


@pytest.mark.parametrize(
    ("fragment", "engine", "seed", "count", "per_formula"),
    plan_params(PLAN),
)
def test_holds_agrees_with_the_oracle(
    fragment: Fragment, engine: Engine, seed: int, count: int, per_formula: int
) -> None:
    """Every random pair of the fragment gets the oracle's truth value from ``holds``."""
    disagreements: list[Disagreement] = []
    checked = 0
    for formula, words in sample_cases(seed, count, fragment, DEPTH, per_formula, MAX_LEN):
        for word in words:
            ours, theirs = agentguard_holds(formula, word), oracle_holds(formula, word, engine)
            checked += 1
            if ours != theirs:
                disagreements.append((formula, word, ours, theirs))
    print(f"holds vs {engine} ({fragment.name}): {checked} pairs, {len(disagreements)} wrong")
    assert checked == count * per_formula
    assert not disagreements, report(disagreements, "agentguard")


@pytest.mark.parametrize("fragment", [FUTURE, PAST, MIXED], ids=lambda f: f.name)
def test_holds_on_the_empty_trace_follows_the_convention(fragment: Fragment) -> None:
    """On the empty trace ``holds`` gives the documented table (atoms false, N G W R Z H true)."""
    disagreements: list[Disagreement] = []
    for formula, _ in sample_cases(104, 300, fragment, DEPTH, 0, 0):
        ours, theirs = agentguard_holds(formula, ()), empty_trace_holds(formula)
        if ours != theirs:
            disagreements.append((formula, (), ours, theirs))
    print(f"holds on the empty trace ({fragment.name}): 300 formulas")
    assert not disagreements, report(disagreements, "agentguard")


@pytest.mark.parametrize(
    ("formula", "word", "expected"),
    [
        (Un("X", Atom("a")), ("a",), False),  # strong next: no next position
        (Un("N", Atom("a")), ("a",), True),  # weak next: true at the end
        (Un("G", Bin("->", Atom("a"), Un("X", Atom("b")))), ("b", "a"), False),
        (Un("Y", Atom("a")), ("a",), False),  # strong yesterday at 0
        (Un("Z", Atom("a")), ("b",), True),  # weak yesterday at 0
        (Un("F", Bin("S", Atom("a"), Atom("b"))), ("b", "a"), True),
        (Un("G", Bin("->", Atom("b"), Un("O", Atom("a")))), ("b", "a"), False),
    ],
    ids=["X-end", "N-end", "G-a-X-b", "Y-0", "Z-0", "F-S", "G-O"],
)
def test_named_finite_trace_cases(formula: Formula, word: tuple[str, ...], expected: bool) -> None:
    """The textbook finite-trace cases hold as the oracle says (and as written here)."""
    assert agentguard_holds(formula, word) is expected
    if (engine := engine_if_available(formula)) is not None:
        assert oracle_holds(formula, word, engine) is expected


@needs_mona
@settings(max_examples=300, derandomize=True, deadline=None)
@given(formula=formulas(depth=3, fragment=MIXED), word=traces(max_len=6))
def test_holds_agrees_with_mona_shrinking(formula: Formula, word: tuple[str, ...]) -> None:
    """Hypothesis-driven comparison, so a disagreement shrinks to a minimal counterexample."""
    assert agentguard_holds(formula, word) == oracle_holds(formula, word, "mona"), (
        to_agentguard(formula),
        word,
    )
