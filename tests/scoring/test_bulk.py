"""The bulk scorer on DECLARE shapes: tool-position answers equal the vector evaluator's,
and every report equals verify_trace's, with outcomes, argument tests and error flags."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import Trace, parse_spec, verify_trace, verify_traces
from agentguard._recursion import deep_recursion
from agentguard.language import ast as A
from agentguard.scoring.bulk import Bulk
from agentguard.scoring.tool_positions import first_position
from agentguard.semantics import segmented as S
from agentguard.trace.model import Call

with deep_recursion():  # raised before Hypothesis runs, which warns when a test raises it
    pass

TOOLS = ("a", "b", "c", "d")
_plain = st.sampled_from([A.Event(t) for t in TOOLS])
_atom = st.one_of(
    _plain,
    _plain,
    st.builds(A.Event, st.sampled_from(TOOLS), st.just(()), st.sampled_from(["ok", "error"])),
    st.builds(
        lambda t, v: A.Event(t, (A.Test(A.FieldRef(("k",)), ">", A.Literal(v)),)),
        st.sampled_from(TOOLS),
        st.integers(0, 3),
    ),
    st.just(A.Event(None)),
)


def _declare(x: st.SearchStrategy[A.Formula]) -> st.SearchStrategy[A.Formula]:
    """The DECLARE templates (and their X/N variants) over atoms drawn from ``x``."""
    return st.one_of(
        st.builds(A.Eventually, x),
        st.builds(lambda a: A.Not(A.Eventually(a)), x),
        st.builds(lambda a, b: A.Always(A.Implies(a, A.Eventually(b))), x, x),
        st.builds(lambda a, b: A.Always(A.Implies(b, A.Once(a))), x, x),
        st.builds(lambda a, b, s: A.Always(A.Implies(a, A.Next(b, s))), x, x, st.booleans()),
        st.builds(lambda a, b: A.Implies(A.Eventually(a), A.Eventually(b)), x, x),
    )


_shapes = st.one_of(_declare(_plain), _declare(_atom))
_tool = st.sampled_from(TOOLS)
_predicate = st.one_of(
    st.builds(lambda t: A.TracePredicate("Called", (t,)), _tool),
    st.builds(
        lambda t, n, op: A.TracePredicate("CalledN", (t, n, op)),
        _tool,
        st.integers(0, 3),
        st.sampled_from(["=", ">=", "<=", ">", "<"]),
    ),
    st.builds(lambda a, b: A.TracePredicate("Before", (a, b)), _tool, _tool),
    st.builds(lambda a, b: A.TracePredicate("After", (a, b)), _tool, _tool),
    st.builds(
        lambda ts: A.TracePredicate("InOrder", (tuple(ts),)),
        st.lists(_tool, min_size=1, max_size=3),
    ),
)
_top = st.one_of(_predicate, _declare(_plain), st.builds(A.Eventually, _plain))
_combined = st.recursive(
    _top,
    lambda x: st.one_of(
        st.builds(A.Not, x),
        st.builds(A.And, x, x),
        st.builds(A.Or, x, x),
        st.builds(A.Implies, x, x),
        st.builds(A.Iff, x, x),
    ),
    max_leaves=4,
)
"""Trace predicates and DECLARE shapes combined by connectives at the top: the spellings
of one DECLARE model (``Called(a) -> Called(b)`` for ``F a -> F b``)."""
_formulas = st.one_of(_shapes, st.builds(A.And, _shapes, _shapes))

_record = st.fixed_dictionaries(
    {"tool_name": st.sampled_from(TOOLS)},
    optional={
        "arguments": st.fixed_dictionaries({"k": st.integers(0, 4)}),
        "tool_result": st.integers(0, 3),
        "is_error": st.booleans(),
    },
)
_from_records = st.lists(_record, max_size=12).map(Trace.from_records)
_from_calls = st.lists(
    st.builds(
        lambda t, k, e: Call(t, {"k": k}, k, error=e),
        st.sampled_from(TOOLS),
        st.integers(0, 4),
        st.booleans(),
    ),
    max_size=12,
).map(Trace)
_corpus = st.lists(st.one_of(_from_records, _from_calls), max_size=8)


def _spec(formulas: list[A.Formula]) -> tuple[A.Constraint, ...]:
    return tuple(
        A.Constraint(name=f"c{k}", formula=f, weight=float(k + 1)) for k, f in enumerate(formulas)
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(_formulas, min_size=1, max_size=4), _corpus)
def test_declare_reports_equal_verify_trace(formulas: list[A.Formula], corpus: list[Trace]) -> None:
    """DECLARE constraints, plain or with outcomes and argument tests: the reports are
    verify_trace's, trace by trace."""
    spec = _spec(formulas)
    assert verify_traces(corpus, spec) == [verify_trace(t, spec) for t in corpus]


@settings(max_examples=300, deadline=None)
@given(st.lists(_combined, min_size=1, max_size=4), _corpus)
def test_predicates_under_connectives_take_the_bulk_path_and_equal_verify_trace(
    formulas: list[A.Formula], corpus: list[Trace]
) -> None:
    """Covered predicates combined by connectives are scored in bulk, each report verify_trace's."""
    spec = _spec(formulas)
    bulk = Bulk(corpus, [t.names for t in corpus])
    if bulk.rows:
        assert all(bulk.score(c) is not None for c in spec)
    assert verify_traces(corpus, spec) == [verify_trace(t, spec) for t in corpus]


SPELLINGS = {
    "existence": ("F a", "Called(a)", "CalledN(a, 1, >=)", "!G !a"),
    "absence": ("!F a", "G !a", "!Called(a)", "CalledN(a, 0, =)"),
    "responded existence": ("F a -> F b", "Called(a) -> Called(b)", "!Called(a) | Called(b)"),
    "precedence": ("G(b -> O a)", "Called(b) -> Before(a, b)", "After(b, a) | !Called(b)"),
    "response": ("G(a -> F b)",),
    "co-existence": ("F a <-> F b", "Called(a) <-> Called(b)"),
    "not co-existence": ("!(F a & F b)", "!(Called(a) & Called(b))"),
    "succession": ("G(a -> F b) & G(b -> O a)", "G(a -> F b) & (Called(b) -> Before(a, b))"),
    "at most": ("CalledN(a, 2, <=)", "!CalledN(a, 2, >)"),
}


def test_every_spelling_of_a_covered_shape_takes_the_bulk_path() -> None:
    """No spelling of a DECLARE shape falls to the per-trace evaluator (the path is asserted)."""
    corpus = [Trace.of("a", "b"), Trace.of("b", "a", "c"), Trace.of("c"), Trace.of("a")]
    bulk = Bulk(corpus, [t.names for t in corpus])
    for shape, spellings in SPELLINGS.items():
        spec = parse_spec("\n".join(f"constraint c{k} := {t}" for k, t in enumerate(spellings)))
        for c, text in zip(spec.constraints, spellings, strict=True):
            assert bulk.score(c) is not None, (shape, text)
        assert verify_traces(corpus, spec) == [verify_trace(t, spec) for t in corpus]
        truths = {
            tuple(r.passed for r in results)
            for results in zip(*(bulk.score(c) or [] for c in spec.constraints), strict=True)
        }
        assert all(len(set(t)) == 1 for t in truths), shape  # the spellings agree


def test_predicates_under_a_temporal_operator_stay_per_trace() -> None:
    """A predicate is the whole trace's: under G or F the bulk path does not take it."""
    bulk = Bulk([Trace.of("a", "b")], [("a", "b")])
    spec = parse_spec("constraint c := G(a -> Called(b))\nconstraint d := F Called(a)")
    assert [bulk.score(c) for c in spec.constraints] == [None, None]


def _bodies(f: A.Formula) -> list[tuple[A.Formula, bool]]:
    """The (body, negated) pairs the scorer asks first positions for."""
    if isinstance(f, A.Always):
        return [(f.operand, True)]
    if isinstance(f, A.Eventually):
        return [(f.operand, False)]
    if isinstance(f, A.Not):
        return _bodies(f.operand)
    if isinstance(f, (A.And, A.Implies)):
        return _bodies(f.left) + _bodies(f.right)
    return []


@settings(max_examples=300, deadline=None)
@given(_declare(_plain), st.lists(_from_records, min_size=1, max_size=8))
def test_tool_positions_equal_the_vector_scan(f: A.Formula, corpus: list[Trace]) -> None:
    """Each shape's first position from tool positions equals the segmented vector's."""
    bulk = Bulk(corpus, [t.names for t in corpus])
    if not bulk.rows:
        return
    for body, negated in _bodies(f):
        fast = first_position(body, negated, bulk.tools, bulk.code_of)
        assert fast is not None, body
        vec = bulk._vec(bulk.value(body))
        assert np.array_equal(fast, S.first_true(~vec if negated else vec, bulk.seg))


def test_shapes_outside_the_table_take_the_vector_path() -> None:
    """Bounded operators, tests and outcomes are not answered from tool positions."""
    bulk = Bulk([Trace.of("a", "b")], [("a", "b")])
    for text in ("a -> F[<=2] b", "a -> O[<=1] b", "a(k > 1) -> F b", "a.error", "a | b"):
        body = parse_spec(f"constraint c := G({text})").constraints[0].formula
        assert isinstance(body, A.Always)
        assert first_position(body.operand, True, bulk.tools, bulk.code_of) is None


def test_outcome_atoms_read_the_error_flag() -> None:
    """``G !refund.error`` holds on a refund that did not fail (the bulk path once missed it)."""
    spec = parse_spec("constraint c := G !refund.error\nconstraint d := F refund.ok")
    ok, failed = (
        Trace.from_records([{"tool_name": "refund", "is_error": e}]) for e in (False, True)
    )
    got = verify_traces([ok, failed], spec)
    assert got == [verify_trace(ok, spec), verify_trace(failed, spec)]
    assert [[c.passed for c in r.constraints] for r in got] == [[True, True], [False, False]]


def test_scoring_event_constraints_builds_no_calls() -> None:
    """Traces read from records are scored on their tool names: no Call is built."""
    records: list[dict[str, Any]] = [{"tool_name": t} for t in ("a", "b", "a")]
    corpus = [Trace.from_records(records) for _ in range(3)]
    verify_traces(corpus, "constraint r := G(a -> F b)\nconstraint e := F c -> F d")
    assert all(t._calls is None for t in corpus)
    assert corpus[0].calls[2] == Call("a", {}, position=2)


def test_traces_past_the_code_table_are_coded_by_the_scorer(monkeypatch: Any) -> None:
    """When the tool-code table is full, new names stay uncoded and scores are unchanged."""
    from agentguard.trace import tool_codes

    monkeypatch.setattr(tool_codes, "MAX_TOOLS", len(tool_codes._CODES))
    fresh = Trace.from_records([{"tool_name": "never_seen_before_x"}, {"tool_name": "a"}])
    assert fresh.tool_codes is None
    spec = "constraint r := G(never_seen_before_x -> F a)\nconstraint e := F a"
    corpus = [fresh, Trace.of("a", "b")]
    assert verify_traces(corpus, spec) == [verify_trace(t, spec) for t in corpus]


def test_pickled_traces_are_coded_again() -> None:
    """Codes are per process: a pickled trace carries names and is coded where loaded."""
    import pickle

    trace = Trace.from_records([{"tool_name": "a"}, {"tool_name": "b"}])
    back = pickle.loads(pickle.dumps(trace))
    assert back == trace and back.tool_codes is not None
    assert back.tool_codes.names == ("a", "b")
