"""verify_traces: the same reports as verify_trace on each trace, computed in bulk."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import Trace, parse_spec, verify_trace, verify_traces
from agentguard._recursion import deep_recursion
from agentguard.language import ast as A
from agentguard.semantics import segmented as S
from agentguard.semantics import vectors as V
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.registry import Registry
from tests.strategies import data_formulas, propositional, quantified, traces

with deep_recursion():  # raised before Hypothesis runs, which warns when a test raises it
    pass


def _spec(formulas: list[A.Formula]) -> tuple[A.Constraint, ...]:
    return tuple(
        A.Constraint(name=f"c{k}", formula=f, weight=float(k + 1)) for k, f in enumerate(formulas)
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(propositional(), min_size=1, max_size=4), st.lists(traces(), max_size=6))
def test_propositional_reports_equal_verify_trace(
    formulas: list[A.Formula], corpus: list[Trace]
) -> None:
    """On the temporal fragment, every bulk report equals verify_trace's, empty traces too."""
    spec = _spec(formulas)
    assert verify_traces(corpus, spec) == [verify_trace(t, spec) for t in corpus]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(data_formulas(), quantified()), min_size=1, max_size=3),
    st.lists(traces(), max_size=5),
)
def test_data_and_quantified_reports_equal_verify_trace(
    formulas: list[A.Formula], corpus: list[Trace]
) -> None:
    """With argument tests, trace predicates, metrics and quantifiers the reports still match."""
    spec = _spec(formulas)
    assert verify_traces(corpus, spec) == [verify_trace(t, spec) for t in corpus]


@settings(max_examples=100, deadline=None)
@given(propositional(), st.lists(traces(max_size=6), min_size=1, max_size=5))
def test_segmented_vector_equals_each_trace_alone(f: A.Formula, corpus: list[Trace]) -> None:
    """A formula's vector over traces laid end to end is each trace's own vector, joined."""
    from agentguard.scoring.bulk import Bulk

    names = [t.names for t in corpus]
    bulk = Bulk(corpus, names)
    if not bulk.rows:
        return
    joined = bulk._vec(bulk.value(f))
    parts = [Evaluator(corpus[t]).vector(f) for t in bulk.rows]
    assert np.array_equal(joined, np.concatenate(parts))


def test_single_segment_matches_vectors() -> None:
    """On one segment the segmented scans are the single-trace scans."""
    rng = np.random.default_rng(3)
    a, b = rng.random(40) < 0.4, rng.random(40) < 0.5
    seg = S.Segments([40])
    for op in (A.Eventually(A.Const(True), 3), A.Always(A.Const(True)), A.Once(A.Const(True), 2)):
        assert np.array_equal(S.unary(op, a, seg), V.unary(op, a))
    for op2 in (A.Until, A.WeakUntil, A.Release, A.Since):
        node = op2(A.Const(True), A.Const(True))
        assert np.array_equal(S.binary(node, a, b, seg), V.binary(node, a, b))


def test_accepts_records_text_and_files(tmp_path: Path) -> None:
    """Metrics records and spec text or a .ltl path are accepted, as by verify_trace."""
    text = "constraint order := G(refund -> O lookup)\nconstraint done := F final_answer"
    path = tmp_path / "p.ltl"
    path.write_text(text)
    records = [
        {"tool_calls": [{"tool_name": "lookup"}, {"tool_name": "refund"}]},
        {"tool_calls": [{"tool_name": "refund"}, {"tool_name": "final_answer"}]},
        {"tool_calls": []},
    ]
    by_text = verify_traces(records, text)
    assert by_text == [verify_trace(r, text) for r in records]
    assert verify_traces(records, str(path)) == [verify_trace(r, str(path)) for r in records]
    assert [r.score for r in by_text] == [0.5, 0.5, 0.5]
    assert by_text[1].constraints[0].detail == (
        'Violated at call #1 ("refund"): refund -> O lookup does not hold there.'
    )
    assert json.dumps([r.to_dict() for r in by_text])


def test_evaluation_errors_stay_per_constraint() -> None:
    """A predicate that raises violates its constraint on every trace; the others are scored."""
    reg = Registry()
    reg.register_predicate("boom", lambda x: 1 / 0, arity=1)
    spec = parse_spec(
        "predicate boom(x)\nconstraint bad := boom(1)\nconstraint ok := F a", registry=reg
    )
    corpus = [Trace.of("a"), Trace.of("b")]
    got = verify_traces(corpus, spec, registry=reg)
    assert got == [verify_trace(t, spec, registry=reg) for t in corpus]
    assert all(r.constraints[0].error for r in got)
    assert [r.constraints[1].passed for r in got] == [True, False]


def test_tool_declarations_are_checked_per_trace() -> None:
    """Tool-use problems are reported for each trace exactly as verify_trace reports them."""
    spec = parse_spec("tool a(x: int)\ntool b()\nconstraint c := G(b -> O a)")
    corpus = [
        Trace.from_records([{"tool_name": "a", "arguments": {"x": "no"}}]),
        Trace.of("b"),
    ]
    got = verify_traces(corpus, spec)
    assert got == [verify_trace(t, spec) for t in corpus]
    assert got[0].tool_problems and not got[1].constraints[0].passed


def test_empty_batch() -> None:
    """No traces, no reports."""
    assert verify_traces([], "constraint c := F a") == []


def test_fragment_constraints_take_the_bulk_path() -> None:
    """Event/temporal constraints are scored in bulk, not silently per trace."""
    from agentguard.scoring.bulk import Bulk

    spec = parse_spec(
        "constraint a := G(t1 -> F t2)\nconstraint b := F t0 -> F t3\n"
        "constraint c := G(t8 -> X t9) & !F t10\nconstraint d := (t1 U t2) | H(t1(x > 2))"
    )
    corpus = [Trace.of("t1", "t2", "t8", "t9"), Trace.of("t0", "t8"), Trace.of("t2")]
    bulk = Bulk(corpus, [t.names for t in corpus])
    assert all(bulk.score(c) is not None for c in spec.constraints)
    assert bulk.score(parse_spec("constraint q := WithinSteps(t1, t2, 3)").constraints[0]) is None


def test_declare_predicates_take_the_bulk_path() -> None:
    """Called, CalledN, Before, After and InOrder over constant tools are scored in bulk."""
    from agentguard.scoring.bulk import Bulk

    spec = parse_spec(
        "constraint a := Called(t1)\nconstraint b := CalledN(t2, 2, >=)\n"
        "constraint c := Before(t1, t2)\nconstraint d := After(t1, t2)\n"
        "constraint e := InOrder([t1, t2, t1])"
    )
    corpus = [Trace.of("t1", "t2", "t1"), Trace.of("t2", "t2"), Trace.of("t9")]
    bulk = Bulk(corpus, [t.names for t in corpus])
    assert all(bulk.score(c) is not None for c in spec.constraints)
    assert verify_traces(corpus, spec) == [verify_trace(t, spec) for t in corpus]


_declare_tools = st.sampled_from(["a", "b", "c", "z"])
_declare_predicates = st.one_of(
    st.builds(lambda t: A.TracePredicate("Called", (t,)), _declare_tools),
    st.builds(
        lambda t, n, op: A.TracePredicate("CalledN", (t, n, op)),
        _declare_tools,
        st.integers(0, 4),
        st.sampled_from(["=", ">=", "<=", ">", "<"]),
    ),
    st.builds(
        lambda name, a, b: A.TracePredicate(name, (a, b)),
        st.sampled_from(["Before", "After"]),
        _declare_tools,
        _declare_tools,
    ),
    st.builds(
        lambda ts: A.TracePredicate("InOrder", (tuple(ts),)),
        st.lists(_declare_tools, max_size=4),
    ),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(_declare_predicates, propositional()), min_size=1, max_size=5),
    st.lists(traces(max_size=12), max_size=8),
)
def test_declare_predicates_in_bulk_equal_verify_trace(
    formulas: list[A.Formula], corpus: list[Trace]
) -> None:
    """Called/CalledN/Before/After/InOrder scored in bulk give verify_trace's reports, field
    for field (details naming missing tools included), empty traces too."""
    spec = _spec(formulas)
    assert verify_traces(corpus, spec) == [verify_trace(t, spec) for t in corpus]
