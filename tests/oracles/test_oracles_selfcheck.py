"""The oracles are themselves checked: against a brute-force reference and against each other.

The reference below is the textbook finite-trace semantics written as directly as
possible (quantifiers over the positions of the trace, recursion over the formula),
sharing nothing with the oracles but the formula tree.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Callable, Sequence

import pytest

from .formulas import (
    FRAGMENTS,
    FUTURE,
    LETTERS,
    MIXED,
    PAST,
    Atom,
    Bin,
    Bnd,
    Const,
    Formula,
    Fragment,
    Un,
    is_future,
    random_formula,
    random_guarded_past,
    random_trace,
    subformulas,
    to_agentguard,
)
from .ltlf_oracle import (
    Dfa,
    VerdictName,
    classify,
    empty_trace_holds,
    ltlf2dfa_dfa,
    mona_dfa,
    oracle_holds,
    spot_available,
    spot_dfa,
)
from .marks import needs_ltlf2dfa, needs_mona, needs_spot


def reference_holds(formula: Formula, word: Sequence[str]) -> bool:
    """Brute-force LTLf at position 0; quantifiers range over the positions of ``word``."""
    n = len(word)

    @functools.cache
    def at(f: Formula, i: int) -> bool:
        here = range(i, n)  # now and the future, within the trace
        past = range(min(i, n - 1), -1, -1)  # now back to 0 (empty for the empty trace)
        match f:
            case Const(value):
                return value
            case Atom(name):
                return i < n and word[i] == name
            case Un("!", g):
                return not at(g, i)
            case Un("X", g):
                return i + 1 < n and at(g, i + 1)
            case Un("N", g):
                return i + 1 >= n or at(g, i + 1)
            case Un("F", g):
                return any(at(g, j) for j in here)
            case Un("G", g):
                return all(at(g, j) for j in here)
            case Un("Y", g):
                return i > 0 and at(g, i - 1)
            case Un("Z", g):
                return i == 0 or at(g, i - 1)
            case Un("O", g):
                return any(at(g, j) for j in past)
            case Un("H", g):
                return all(at(g, j) for j in past)
            case Bin("&", g, h):
                return at(g, i) and at(h, i)
            case Bin("|", g, h):
                return at(g, i) or at(h, i)
            case Bin("->", g, h):
                return not at(g, i) or at(h, i)
            case Bin("<->", g, h):
                return at(g, i) == at(h, i)
            case Bin("U", g, h):
                return any(at(h, j) and all(at(g, k) for k in range(i, j)) for j in here)
            case Bin("W", g, h):  # dual reading: ψ R (φ | ψ)
                return at(Bin("R", h, Bin("|", g, h)), i)
            case Bin("R", g, h):  # ¬(¬φ U ¬ψ)
                return not at(Bin("U", Un("!", g), Un("!", h)), i)
            case Bin("S", g, h):
                return any(at(h, j) and all(at(g, k) for k in range(j + 1, i + 1)) for j in past)
            case Bnd("F<=", k, g):
                return any(at(g, j) for j in range(i, min(i + k + 1, n)))
            case Bnd("G<=", k, g):
                return all(at(g, j) for j in range(i, min(i + k + 1, n)))
            case Bnd("O<=", k, g):
                return any(at(g, j) for j in past if j >= i - k)
            case Bnd("H<=", k, g):
                return all(at(g, j) for j in past if j >= i - k)
        raise TypeError(f)

    return at(formula, 0)


def reference_verdict(formula: Formula, prefix: Sequence[str], horizon: int) -> VerdictName:
    """Verdict by enumerating every continuation up to ``horizon`` letters (the empty one too)."""
    seen = set()
    for length in range(horizon + 1):
        for tail in itertools.product(LETTERS, repeat=length):
            seen.add(reference_holds(formula, (*prefix, *tail)))
            if len(seen) == 2:
                return "PENDING"
    return "SATISFIED" if seen == {True} else "VIOLATED"


def cases(
    seed: int, count: int, draw: Callable[[random.Random], Formula], max_len: int = 7
) -> list[tuple[Formula, tuple[str, ...]]]:
    rng = random.Random(seed)
    return [(draw(rng), random_trace(rng, max_len)) for _ in range(count)]


def test_reference_knows_the_finite_trace_classics() -> None:
    """Strong X fails at the end, weak N holds there, G(a -> X b) is not safety."""
    a, b = Atom("a"), Atom("b")
    assert not reference_holds(Un("X", a), ("a",))
    assert reference_holds(Un("N", a), ("b",))
    assert not reference_holds(Un("G", Bin("->", a, Un("X", b))), ("b", "a"))
    assert not reference_holds(Bin("S", a, b), ("a", "b"))  # S is past: at 0 only c_0 counts
    assert reference_holds(Un("F", Bin("S", a, b)), ("b", "a"))
    assert not reference_holds(Un("F", Un("Y", Const(True))), ("a",))
    assert reference_holds(Bnd("F<=", 1, b), ("a", "b"))
    assert not reference_holds(Bnd("F<=", 1, b), ("a", "a", "b"))


@pytest.mark.parametrize("fragment", FRAGMENTS, ids=lambda f: f.name)
def test_empty_trace_convention_is_the_reference_on_no_positions(fragment: Fragment) -> None:
    """The stated empty-trace table equals quantifying over an empty set of positions."""
    rng = random.Random(7)
    for _ in range(300):
        f = random_formula(rng, 4, fragment)
        assert empty_trace_holds(f) == reference_holds(f, ()), to_agentguard(f)


@needs_mona
def test_mona_holds_matches_the_reference_on_every_operator() -> None:
    """MONA's DFA accepts a word exactly when the brute-force semantics says the formula holds."""
    checked = 0
    for f, word in cases(11, 800, lambda rng: random_formula(rng, 3, MIXED)):
        assert oracle_holds(f, word, "mona") == reference_holds(f, word), (to_agentguard(f), word)
        checked += 1
    assert checked == 800


@needs_spot
def test_spot_holds_matches_the_reference_on_future_formulas() -> None:
    """Spot's LTLf automaton accepts exactly the words the reference accepts."""
    for f, word in cases(12, 800, lambda rng: random_formula(rng, 3, FUTURE)):
        assert oracle_holds(f, word, "spot") == reference_holds(f, word), (to_agentguard(f), word)


@pytest.mark.parametrize(
    "engine", [pytest.param("spot", marks=needs_spot), pytest.param("mona", marks=needs_mona)]
)
def test_prefix_verdicts_match_bounded_enumeration(engine: str) -> None:
    """DFA verdicts equal enumerating all continuations up to the DFA's size (a complete bound)."""
    fragment = FUTURE if engine == "spot" else MIXED
    rng = random.Random(13)
    checked = 0
    while checked < 200:
        f = random_formula(rng, 4, fragment)
        dfa = spot_dfa(f) if engine == "spot" else mona_dfa(f)
        horizon = dfa.num_states - 1  # every reachable state is reachable within this many
        if not 2 <= horizon <= 5:  # skip the trivial and the too costly to enumerate
            continue
        word = random_trace(rng, 5) or ("a",)
        got = dfa.verdicts(word)
        for m in range(1, len(word) + 1):
            want = reference_verdict(f, word[:m], horizon)
            assert got[m - 1] == want, (to_agentguard(f), word[:m], got[m - 1], want)
        checked += 1


def assert_same_dfa(first: Dfa, second: Dfa, f: Formula, rng: random.Random) -> None:
    """Two engines' DFAs of ``f`` give the same verdicts (and acceptance) on ten random words."""
    for _ in range(10):
        word = random_trace(rng, 8)
        assert first.verdicts(word) == second.verdicts(word), (to_agentguard(f), word)
        if word:
            assert first.accepts(word) == second.accepts(word), (to_agentguard(f), word)


@needs_mona
@needs_spot
def test_spot_and_mona_agree_on_future_formulas() -> None:
    """Two unrelated engines give the same DFA verdicts on future formulas."""
    rng = random.Random(14)
    for _ in range(200):
        f = random_formula(rng, 4, FUTURE)
        assert_same_dfa(spot_dfa(f), mona_dfa(f), f, rng)


@needs_ltlf2dfa
def test_ltlf2dfa_encoding_agrees_with_ours() -> None:
    """ltlf2dfa's own MONA encodings (LTLf, and PPLTL for G/F over past) agree with ours."""
    rng = random.Random(15)
    for i in range(60):
        f = random_formula(rng, 3, FUTURE) if i % 2 else random_guarded_past(rng, 3)
        assert_same_dfa(ltlf2dfa_dfa(f), mona_dfa(f), f, rng)


def test_past_fragment_generator_uses_only_past() -> None:
    """The past fragment never yields a future operator (so fragments mean what they say)."""
    rng = random.Random(16)
    for _ in range(200):
        f = random_formula(rng, 4, PAST)
        for g in subformulas(f):
            assert not (isinstance(g, Bnd) and g.op in ("F<=", "G<="))
            assert not (isinstance(g, Un) and g.op in ("X", "N", "F", "G"))
            assert not (isinstance(g, Bin) and g.op in ("U", "W", "R"))


@needs_mona
@pytest.mark.parametrize(
    ("text", "formula", "expected"),
    [
        ("F a", Un("F", Atom("a")), "liveness"),
        ("G !a", Un("G", Un("!", Atom("a"))), "safety"),
        ("G(b -> O a)", Un("G", Bin("->", Atom("b"), Un("O", Atom("a")))), "safety"),
        ("G(a -> X b)", Un("G", Bin("->", Atom("a"), Un("X", Atom("b")))), "mixed"),
        ("G(a -> N b)", Un("G", Bin("->", Atom("a"), Un("N", Atom("b")))), "safety"),
        ("a U b", Bin("U", Atom("a"), Atom("b")), "mixed"),
        ("!b W a", Bin("W", Un("!", Atom("b")), Atom("a")), "safety"),
        ("G F a", Un("G", Un("F", Atom("a"))), "liveness"),
        ("true", Const(True), "safety"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_classification_of_textbook_formulas(text: str, formula: Formula, expected: str) -> None:
    """The DFA-read classification gives the finite-trace textbook answer."""
    assert classify(formula, "mona") == expected, text
    if is_future(formula) and spot_available():
        assert classify(formula, "spot") == expected, text
