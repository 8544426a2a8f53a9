"""The online monitor's prefix verdicts agree with a DFA oracle, call by call.

Verdicts on a prefix: SATISFIED when every continuation satisfies (ending now included),
VIOLATED when every continuation violates, PENDING otherwise. The oracle computes them
from a DFA over the one-hot tool alphabet ``a b c`` plus ``d`` (a tool no formula
mentions), so continuations are exactly sequences of calls with one name each.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from agentguard import parse_formula
from agentguard.monitor import Monitor
from agentguard.trace.model import Call

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
from .ltlf_oracle import Engine, classify, empty_trace_holds, oracle_holds, oracle_verdicts
from .marks import needs, needs_mona

#: about 90,000 prefix verdicts, over 50,000 of them on Spot alone, so a machine without
#: MONA still meets the 50,000.
PLAN: Plan = (
    (FUTURE, "spot", 201, 1200, 6),
    (PAST, "mona", 202, 300, 6),
    (MIXED, "mona", 203, 600, 6),
)
DEPTH = 4
MAX_LEN = 20


def monitor_verdicts(formula: Formula, word: tuple[str, ...]) -> list[str]:
    """The monitor's verdict (its enum member's name) after each call of ``word``."""
    return run_monitor(formula, word)[0]


def run_monitor(formula: Formula, word: tuple[str, ...]) -> tuple[list[str], str]:
    """The verdict after each call of ``word``, and the final verdict when the run ends."""
    monitor = Monitor.for_formula(parse_formula(to_agentguard(formula)))
    verdicts = [monitor.step(Call(name)).name for name in word]
    return verdicts, monitor.finish().name


def final_name(holds: bool) -> str:
    return "SATISFIED" if holds else "VIOLATED"


@pytest.mark.parametrize(
    ("fragment", "engine", "seed", "count", "per_formula"),
    plan_params(PLAN),
)
def test_monitor_verdicts_agree_with_the_dfa_oracle(
    fragment: Fragment, engine: Engine, seed: int, count: int, per_formula: int
) -> None:
    """After every call of every random trace the monitor gives the oracle's verdict,
    and when the run ends its final verdict is the oracle's truth value."""
    disagreements: list[Disagreement] = []
    checked = 0
    for formula, words in sample_cases(seed, count, fragment, DEPTH, per_formula, MAX_LEN):
        for word in words:
            ours, final = run_monitor(formula, word)
            theirs = oracle_verdicts(formula, word, engine)
            checked += len(word)
            wrong = [i for i, (o, t) in enumerate(zip(ours, theirs, strict=True)) if o != t]
            if wrong:
                first = wrong[0]
                disagreements.append((formula, word[: first + 1], ours[first], theirs[first]))
            elif final != (want := final_name(oracle_holds(formula, word, engine))):
                disagreements.append((formula, word, f"finish={final}", f"finish={want}"))
    print(
        f"monitor vs {engine} ({fragment.name}): {checked} prefix verdicts, "
        f"{len(disagreements)} traces with a disagreement"
    )
    assert not disagreements, report(disagreements, "monitor")


@pytest.mark.parametrize(
    ("fragment", "engine", "seed"),
    [
        pytest.param(FUTURE, "spot", 204, marks=needs("spot"), id="future"),
        pytest.param(PAST, "mona", 205, marks=needs_mona, id="past"),
        pytest.param(MIXED, "mona", 206, marks=needs_mona, id="mixed"),
    ],
)
def test_classification_agrees_with_the_dfa_oracle(
    fragment: Fragment, engine: Engine, seed: int
) -> None:
    """Safety / mixed / liveness is exact on propositional formulas and equals the DFA's.

    The empty trace counts as a trace (so ``a``, violated by ending before any call with
    no bad prefix, is mixed), as agentguard's classifier decides.
    """
    disagreements: list[Disagreement] = []
    for formula, _ in sample_cases(seed, 250, fragment, DEPTH, 0, 0):
        got = Monitor.for_formula(parse_formula(to_agentguard(formula))).classification()
        want = classify(formula, engine, include_empty=True)
        if not got.exact or got.kind.value != want:
            disagreements.append((formula, (), f"{got.kind.value} exact={got.exact}", want))
    assert not disagreements, report(disagreements, "monitor")


@pytest.mark.parametrize("fragment", [FUTURE, PAST, MIXED], ids=lambda f: f.name)
def test_final_verdict_of_an_empty_run_follows_the_convention(fragment: Fragment) -> None:
    """A run that ends before any call gets the documented empty-trace truth value."""
    for formula, _ in sample_cases(207, 200, fragment, DEPTH, 0, 0):
        want = final_name(empty_trace_holds(formula))
        assert run_monitor(formula, ())[1] == want, to_agentguard(formula)


def test_plan_checks_at_least_50000_prefix_verdicts() -> None:
    """The seeded plan amounts to at least 50,000 prefix verdicts, even on Spot alone."""
    per_engine = {"spot": 0, "mona": 0}
    for fragment, engine, seed, count, per in PLAN:
        for _, words in sample_cases(seed, count, fragment, DEPTH, per, MAX_LEN):
            per_engine[engine] += sum(len(word) for word in words)
    print(f"planned prefix verdicts: {per_engine}")
    assert per_engine["spot"] >= 50_000


@pytest.mark.parametrize(
    ("formula", "word", "expected"),
    [
        (Un("F", Atom("a")), ("b", "a", "b"), ["PENDING", "SATISFIED", "SATISFIED"]),
        (Un("G", Un("!", Atom("a"))), ("b", "a"), ["PENDING", "VIOLATED"]),
        # strong next: after `a` the run may not end, but `b` can still come
        (Un("G", Bin("->", Atom("a"), Un("X", Atom("b")))), ("a", "c"), ["PENDING", "VIOLATED"]),
        (Un("G", Bin("->", Atom("b"), Un("O", Atom("a")))), ("d", "b"), ["PENDING", "VIOLATED"]),
        (
            Bin("W", Un("!", Atom("b")), Atom("a")),
            ("d", "a", "b"),
            ["PENDING", "SATISFIED", "SATISFIED"],
        ),
        (Un("X", Atom("a")), ("b",), ["PENDING"]),  # ending now violates, continuing may not
        (Un("N", Atom("a")), ("b",), ["PENDING"]),
        (Un("N", Atom("a")), ("b", "a"), ["PENDING", "SATISFIED"]),
    ],
    ids=["F", "G-not", "G-a-X-b", "G-O", "W", "X-open", "N-open", "N-done"],
)
def test_named_prefix_cases(formula: Formula, word: tuple[str, ...], expected: list[str]) -> None:
    """Textbook prefix verdicts: the oracle and the monitor both give them."""
    assert monitor_verdicts(formula, word) == expected
    if (engine := engine_if_available(formula)) is not None:
        assert oracle_verdicts(formula, word, engine) == expected


@needs_mona
@settings(max_examples=300, derandomize=True, deadline=None)
@given(formula=formulas(depth=3, fragment=MIXED), word=traces(max_len=8).filter(bool))
def test_monitor_agrees_with_mona_shrinking(formula: Formula, word: tuple[str, ...]) -> None:
    """Hypothesis-driven comparison, so a disagreement shrinks to a minimal counterexample."""
    assert monitor_verdicts(formula, word) == oracle_verdicts(formula, word, "mona"), (
        to_agentguard(formula),
        word,
    )
