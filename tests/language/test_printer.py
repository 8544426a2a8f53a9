"""The printer writes canonical text that parses back to the same tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import format_formula, format_spec, load_spec, parse_formula, parse_spec
from agentguard.errors import SpecSemanticError
from agentguard.language import ast as A
from tests.strategies import data_formulas, propositional, quantified


@settings(max_examples=400, deadline=None)
@given(propositional())
def test_propositional_round_trip(f: A.Formula) -> None:
    """Generated propositional formulas print and re-parse to an equal tree."""
    assert parse_formula(format_formula(f)) == f


@settings(max_examples=300, deadline=None)
@given(data_formulas())
def test_data_formula_round_trip(f: A.Formula) -> None:
    """Formulas with tests, predicates and comparisons round-trip."""
    assert parse_formula(format_formula(f)) == f


@settings(max_examples=200, deadline=None)
@given(quantified())
def test_quantified_round_trip(f: A.Formula) -> None:
    """Quantified formulas with variables in tests round-trip."""
    assert parse_formula(format_formula(f)) == f


@pytest.mark.parametrize("name", ["refund", "filesystem_safety", "appendix_b_fanout", "code_qa"])
def test_shipped_specs_round_trip(specs_dir: Path, name: str) -> None:
    """Every shipped spec prints to canonical text that parses to the same spec."""
    spec = load_spec(specs_dir / f"{name}.ltl")
    again = parse_spec(format_spec(spec))
    assert again.constraints == spec.constraints
    assert again.tools == spec.tools
    assert again.name == spec.name


def test_keyword_and_odd_names_are_quoted() -> None:
    """Tool names that are keywords or not identifiers are backtick-quoted."""
    f = A.And(A.Event("F"), A.Event("web.search"))
    text = format_formula(f)
    assert text == "`F` & `web.search`"
    assert parse_formula(text) == f


_PREDICATES = ("G", "not", "forall", "web.q", "plain_p")
_ODD_NAMES = st.sampled_from(_PREDICATES)
_ODD_VALUES = st.one_of(
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([float("inf"), float("-inf"), 1e300, -0.5, 2.0]),
    st.text("ab\"'\\/", max_size=3),
)


def _odd_leaves(var: str | None) -> st.SearchStrategy[A.Formula]:
    tools = st.sampled_from(["F", "in", "web.search", "plain", "x"])
    value: st.SearchStrategy[A.Term] = st.builds(A.Literal, _ODD_VALUES)
    listed = st.builds(
        lambda xs: A.ListLiteral(tuple(A.Literal(v) for v in xs)), st.lists(_ODD_VALUES, max_size=2)
    )
    value = st.one_of(value, listed)
    tool_arg: st.SearchStrategy[object] = tools
    if var is not None:
        tool_arg = st.one_of(tools, st.just(A.Var(var)))
    return st.one_of(
        st.builds(
            lambda t, v: A.Event(t, (A.Test(A.FieldRef(("k",)), "=", v),)),
            tools.filter(lambda t: t != var),
            value,
        ),
        st.builds(lambda n, v: A.UserPredicate(n, (v,)), _ODD_NAMES, value),
        st.builds(lambda t: A.TracePredicate("Called", (t,)), tool_arg),
        st.builds(lambda a, b: A.TracePredicate("AllBefore", ((a,), b)), tool_arg, tools),
    )


def _odd_formulas() -> st.SearchStrategy[A.Formula]:
    body = st.recursive(
        _odd_leaves("x"),
        lambda c: st.one_of(st.builds(A.Not, c), st.builds(A.And, c, c), st.builds(A.Always, c)),
        max_leaves=5,
    )
    return st.builds(
        lambda kind, vals, b: A.Quantified(
            kind, "x", A.ListLiteral(tuple(A.Literal(v) for v in vals)), b
        ),
        st.sampled_from(["forall", "exists"]),
        st.lists(st.sampled_from(["F", "plain", "x"]), max_size=2),
        body,
    )


@settings(max_examples=200, deadline=None)
@given(_odd_formulas())
def test_odd_names_values_and_tool_variables_round_trip(f: A.Formula) -> None:
    """Keyword-named predicates, infinities, `true` vs `1`, and tool-position variables
    (and tools named like the variable) all print to text that re-parses to the same tree."""
    preds = tuple((n, 1) for n in sorted(_PREDICATES))
    spec = A.Spec(None, (A.Constraint("c", f),), predicates=preds)
    again = parse_spec(format_spec(spec))
    assert again.constraints == spec.constraints


def test_deep_negation_prints() -> None:
    """5,000 nested `!` (which the parser accepts) print without RecursionError."""
    text = "!" * 5000 + "a"
    f = parse_formula(text)
    assert format_formula(f) == text
    assert format_spec(parse_spec(f"constraint c := {text}\n")).endswith(f":= {text}\n")


def test_deep_binary_prints() -> None:
    """A long right-nested chain prints in bounded stack depth and re-parses."""
    printed = format_formula(parse_formula(" U ".join(f"t{i}" for i in range(2000))))
    assert printed.count("(") == 1998
    assert format_formula(parse_formula(printed)) == printed


@pytest.mark.parametrize("text", ["a(k = 1e309)", "a(k = -1e309)", "x < 1e400"])
def test_infinity_round_trips(text: str) -> None:
    """An overflowing number prints as a number that parses to the same infinity."""
    if text.startswith("x"):
        text = f"forall x in [1]: {text}"
    f = parse_formula(text)
    printed = format_formula(f)
    assert "inf" not in printed
    assert parse_formula(printed) == f


def test_nan_has_no_literal() -> None:
    """NaN, which no spec can write, is refused rather than printed as `nan`."""
    with pytest.raises(ValueError, match="NaN"):
        format_formula(A.Event("a", (A.Test(A.FieldRef(("k",)), "=", A.Literal(float("nan"))),)))


def test_keyword_named_declarations_round_trip() -> None:
    """Declared predicates, extractors and parameters named like keywords re-parse."""
    src = (
        "predicate `F`(x)\nextractor `in`\ntool t(`from`: str, k: int = 1)\ntool a()\n"
        'constraint c := forall y in `in`: `F`(y) & t(`from` = "a")\n'
        'constraint d := forall t in ["a"]: Called("t") & Called(t)\n'
    )
    spec = parse_spec(src)
    again = parse_spec(format_spec(spec))
    assert again.constraints == spec.constraints
    assert again.tools == spec.tools
    assert again.predicates == spec.predicates and again.extractors == spec.extractors


@pytest.mark.parametrize("weight", ["0.123456789", "12345678", "1e-7", "2.5", "3"])
def test_weights_round_trip_exactly(weight: str) -> None:
    """A weight prints as text that reads back as the same float (no `:g` rounding)."""
    spec = parse_spec(f"constraint c weight {weight} := a\n")
    again = parse_spec(format_spec(spec))
    assert again.constraints[0].weight == spec.constraints[0].weight == float(weight)


def test_infinite_weight_is_refused() -> None:
    """`weight 1e309` (infinity) is a located problem, not a score of NaN."""
    with pytest.raises(SpecSemanticError, match="weight must be a finite number > 0, got 1e309"):
        parse_spec("constraint c weight 1e309 := a\n")


def test_demo_spec_round_trips(root: Path) -> None:
    """The demo's spec (with `.ok` outcome tests) prints and re-parses to the same spec."""
    spec = load_spec(root / "agentguard" / "demo" / "refund.ltl")
    text = format_spec(spec)
    assert "O verify_identity.ok" in text
    again = parse_spec(text)
    assert again.constraints == spec.constraints and again.tools == spec.tools


def _sources(depth: int) -> st.SearchStrategy[A.Source]:
    """Provenance sources: words, literal lists, results/args of patterns (nested)."""
    path = st.sampled_from([(), ("k",), (A.STAR,), (A.STAR, "to"), ("k", 0, A.STAR)])
    words = st.sampled_from(["user", "trusted", "untrusted"]).map(A.SourcePart)
    values = st.lists(st.one_of(st.integers(-3, 3), st.text("ab .-", max_size=3)), max_size=2)
    lists = values.map(
        lambda vs: A.SourcePart("values", values=A.ListLiteral(tuple(A.Literal(v) for v in vs)))
    )
    tests = (
        st.lists(
            st.builds(
                lambda p, neg, s: A.Test(A.FieldRef(p), "not from" if neg else "from", s),
                st.sampled_from([("k",), ("k", A.STAR), ("url",)]),
                st.booleans(),
                _sources(depth - 1),
            ),
            max_size=1,
        )
        if depth > 0
        else st.just([])
    )
    results = st.builds(
        lambda tool, ts, p: A.SourcePart("results", A.Event(tool, tuple(ts)), p),
        st.sampled_from(["a", "b", None]),
        tests,
        path,
    )
    args = st.builds(
        lambda tool, p: A.SourcePart("args", A.Event(tool), ("x", *p)),
        st.sampled_from(["a", None]),
        path,
    )
    part = st.one_of(words, lists, results, args)
    return st.lists(part, min_size=1, max_size=3).map(lambda ps: A.Source(tuple(ps)))


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([("to",), ("to", A.STAR), ("to", A.STAR, "email"), ("opts", 0)]),
    st.booleans(),
    _sources(2),
)
def test_provenance_round_trip(
    path: tuple[str | int, ...], negated: bool, source: A.Source
) -> None:
    """`from` tests with every kind of source (nested patterns, [*] paths) round-trip."""
    test = A.Test(A.FieldRef(path), "not from" if negated else "from", source)
    f = A.Always(A.Not(A.Event("send", (test, A.Test(A.FieldRef(("n",)), "=", A.Literal(1))))))
    assert parse_formula(format_formula(f)) == f
