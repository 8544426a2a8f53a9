"""The offline evaluator: exact finite-trace semantics of Appendix A."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from agentguard import Call, PredicateError, Trace, holds, parse_formula
from agentguard.language import ast as A
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.registry import Registry
from tests.semantics.empty_trace import EMPTY_TRACE_VALUES
from tests.semantics.reference import ref_holds
from tests.strategies import data_formulas, propositional, quantified, traces


def h(text: str, trace: Trace, **kw: object) -> bool:
    return holds(parse_formula(text, **kw), trace, **kw)  # type: ignore[arg-type]


ABC = Trace.of("a", "b", "c")


class TestTemporal:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("X X b", False),
            ("X X c", True),
            ("X X X c", False),
            ("N N N c", True),
            ("F c", True),
            ("G !d", True),
            ("a U c", False),
            ("(a | b) U c", True),
            ("a W d", False),
            ("(a | b | c) W d", True),
            ("c R (a | b | c)", True),
            ("F(c & Y b)", True),
            ("F(a & Z false)", True),
            ("F(a & Y true)", False),
            ("F(c & O a)", True),
            ("F(c & H !d)", True),
            ("F(c & (b S a))", False),
            ("F(c & ((b | c) S a))", True),
            ("F[<=1] c", False),
            ("F[<=2] c", True),
            ("G[<=1] !c", True),
            ("G[<=2] !c", False),
            ("F(c & O[<=1] a)", False),
            ("F(c & O[<=2] a)", True),
            ("F(c & H[<=1] !a)", True),
        ],
    )
    def test_operator_on_abc(self, text: str, expected: bool) -> None:
        """Each operator has its LTLf meaning on the trace a, b, c."""
        assert h(text, ABC) is expected

    def test_strong_next_is_false_at_last_position(self) -> None:
        """`G(a -> X b)` fails when the trace ends right after `a` (strong next)."""
        assert h("G(a -> X b)", Trace.of("a")) is False
        assert h("G(a -> N b)", Trace.of("a")) is True

    @pytest.mark.parametrize(("text", "expected"), EMPTY_TRACE_VALUES)
    def test_empty_trace_convention(self, text: str, expected: bool) -> None:
        """The documented empty-trace rule."""
        assert h(text, Trace()) is expected


class TestAtoms:
    TRACE = Trace.from_records(
        [
            {
                "tool_name": "tool_a",
                "arguments": {"seed": 42},
                "tool_result": '{"numbers": [8, 2, 46]}',
            },
            {"tool_name": "tool_b", "arguments": {"i": 8, "j": 0}, "tool_result": '{"result": 11}'},
            {
                "tool_name": "read_file",
                "arguments": {"path": "conf/.env", "opts": {"n": [1, 2]}},
                "tool_result": "x",
            },
        ],
        metrics={"num_tool_calls": 3, "tokens": {"in": 10}},
    )

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("tool_a(seed = 42)", True),
            ("tool_a(seed = 42.0)", True),
            ("tool_a(seed = true)", False),
            ("tool_a(seed != 41)", True),
            ("tool_a(missing != 1)", False),
            ("tool_a(seed > 40, seed < 43)", True),
            ('tool_a(seed >= "4")', False),
            ("tool_a(result.numbers contains 8)", True),
            ("tool_a(result.numbers[2] = 46)", True),
            ("F tool_b(i = 8, result = 11)", True),
            ("F tool_b(result.result = 11)", True),
            ("F tool_b(result = {result: 11})", True),
            ("F read_file(path ~ /\\.env$/)", True),
            ("F read_file(path !~ /\\.env$/)", False),
            ("F read_file(path ~ /CONF/i)", True),
            ("F read_file(opts.n contains 2)", True),
            ("F any(path ~ /env/)", True),
            ("F any", True),
            ('F read_file(path in ["conf/.env", "x"])', True),
            ("metrics.num_tool_calls <= 3", True),
            ("metrics.tokens.in > 10", False),
            ("metrics.nope = 1", False),
        ],
    )
    def test_event_tests(self, text: str, expected: bool) -> None:
        """Argument/result tests: equality, order, regex, containment, paths, ⊥ is false."""
        assert h(text, self.TRACE) is expected

    def test_unknown_result_is_undefined(self) -> None:
        """A proposed call's unknown result makes every result test false offline."""
        t = Trace((Call("t", {"x": 1}),))
        assert h("t(result = 1)", t) is False
        assert h("t(result != 1)", t) is False


class TestTracePredicates:
    T = Trace.of("a", "b", "a", "c")

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("Called(a)", True),
            ("Called(d)", False),
            ("CalledN(a, 2, =)", True),
            ("CalledN(a, 2, >)", False),
            ("CalledN(d, 0, =)", True),
            ("Before(a, b)", True),
            ("Before(b, a)", False),
            ("Before(a, d)", False),
            ("Before(d, a)", False),
            ("After(b, a)", True),
            ("After(a, d)", False),
            ("AllBefore([a, b], c)", True),
            ("AllBefore([a, d], c)", False),
            ("AllBefore([a], d)", False),
            ("InstanceBefore(a, 1, c, 0)", True),
            ("InstanceBefore(a, 1, b, 0)", False),
            ("InstanceBefore(a, 2, c, 0)", False),
            ("InOrder([a, b, a, c])", True),
            ("InOrder([b, a, c])", True),
            ("InOrder([c, a])", False),
            ("InOrder([a, a, a])", False),
            ("WithinSteps(a, c, 3)", True),
            ("WithinSteps(a, c, 2)", False),
            ("WithinSteps(c, a, 9)", False),
            ("WithinSteps(a, a, 0)", True),
            ("BranchCalled(a, d)", True),
            ("BranchCalled(a, b)", False),
            ("BranchCalled(d, a)", False),
            ("G Called(c)", True),
            ("X Before(a, b)", True),
        ],
    )
    def test_appendix_a_meaning(self, text: str, expected: bool) -> None:
        """Each trace predicate has its exact Appendix A.2.2 meaning, ⊥ operands false."""
        assert h(text, self.T) is expected

    def test_called_with_and_result_with_pluggable_match(self) -> None:
        """CalledWith is a sub-mapping test; CalledWithResult uses the pluggable match."""
        t = Trace.from_records(
            [
                {"tool_name": "s", "arguments": {"q": "x", "n": 1}, "tool_result": {"hits": 3}},
            ]
        )
        assert h('CalledWith(s, {q: "x"})', t) and not h('CalledWith(s, {q: "y"})', t)
        assert h('CalledWithResult(s, {hits: 3}, {q: "x"})', t)
        assert not h('CalledWithResult(s, 3, {q: "x"})', t)
        f = parse_formula('CalledWithResult(s, 3, {q: "x"})')
        assert holds(f, t, match=lambda result, r: result.get("hits") == r)

    def test_context_predicate_gets_trace_position_metrics(self) -> None:
        """Predicate(f) calls f(trace, i, metrics) at the position it is evaluated."""
        reg = Registry()
        seen: list[int] = []
        reg.register_context_predicate("late", lambda tr, i, mu: seen.append(i) or i >= mu["k"])
        t = Trace(Trace.of("a", "b", "c").calls, {"k": 2})
        f = parse_formula("F(c & Predicate(late))", registry=reg)
        assert holds(f, t, registry=reg)
        assert seen == [0, 1, 2]


class TestQuantifiers:
    T = Trace.from_records(
        [
            {"tool_name": "tool_a", "arguments": {}, "tool_result": {"numbers": [8, 2]}},
            {"tool_name": "tool_b", "arguments": {"i": 8}, "tool_result": 1},
            {"tool_name": "tool_c", "arguments": {"x": 8}, "tool_result": 2},
        ]
    )

    def test_domains_and_empty_domain_rule(self) -> None:
        """forall/exists range over extracted values; an empty domain: forall true, exists false."""
        assert not h("forall x in results(tool_a.numbers): F tool_b(i = x)", self.T)
        assert h("exists x in results(tool_a.numbers): F tool_b(i = x)", self.T)
        assert h("forall x in args(tool_b.i): CalledWith(tool_c, {x: x})", self.T)
        assert h("forall x in args(tool_z.i): false", self.T)
        assert not h("exists x in args(tool_z.i): true", self.T)
        assert h('forall t in tools: t in ["tool_a", "tool_b", "tool_c"]', self.T)
        assert h("forall x in [1, 2]: x < 3", self.T)

    def test_parametric_binding_uses_active_domain(self) -> None:
        """`forall o:` ranges over the values at the fields o is tested against."""
        t = Trace.from_records(
            [
                {"tool_name": "lookup", "arguments": {"order": "A"}},
                {"tool_name": "refund", "arguments": {"order": "A"}},
                {"tool_name": "refund", "arguments": {"order": "B"}},
            ]
        )
        f = "forall o: G(refund(order = o) -> O lookup(order = o))"
        assert not h(f, t)
        assert h(f, Trace(t.calls[:2]))

    def test_inner_binding_shadows_outer(self) -> None:
        """Inner quantifiers shadow outer bindings of the same name (A.3.1)."""
        f = "forall x in [1]: (exists x in [2]: x = 2) & x = 1"
        assert h(f, self.T)

    def test_user_predicate_and_errors(self) -> None:
        """User predicates get term values; one that raises is a PredicateError."""
        reg = Registry()
        reg.register_predicate("is_even", lambda v: v % 2 == 0, arity=1)
        reg.register_predicate("boom", lambda v: 1 / 0, arity=1)
        assert h("forall x in results(tool_a.numbers): is_even(x)", self.T, registry=reg)
        with pytest.raises(PredicateError, match="boom"):
            h("forall x in results(tool_a.numbers): boom(x)", self.T, registry=reg)

    def test_user_extractor(self) -> None:
        """A registered extractor provides a domain."""
        reg = Registry()
        reg.register_extractor("evens", lambda tr, tool, path: [v for v in range(6) if v % 2 == 0])
        assert h("forall x in evens: x < 5", self.T, registry=reg)


@settings(max_examples=600, deadline=None)
@given(propositional(), traces())
def test_matches_reference_semantics_propositional(f: A.Formula, t: Trace) -> None:
    """The vectorised evaluator equals the naive recursive semantics at every position."""
    ev = Evaluator(t)
    for i in range(max(len(t), 1)):
        expected = ref_holds(f, t, i)
        got = ev.holds(f, i) if len(t) else ev.empty_value(f, {})
        assert got == expected, (i, f)


@settings(max_examples=300, deadline=None)
@given(data_formulas(), traces())
def test_matches_reference_semantics_data(f: A.Formula, t: Trace) -> None:
    """Also with argument/result tests, predicates and comparisons."""
    ev = Evaluator(t)
    for i in range(max(len(t), 1)):
        got = ev.holds(f, i) if len(t) else ev.empty_value(f, {})
        assert got == ref_holds(f, t, i)


@settings(max_examples=200, deadline=None)
@given(quantified(), traces())
def test_matches_reference_semantics_quantified(f: A.Formula, t: Trace) -> None:
    """And with quantifiers instantiated eagerly."""
    ev = Evaluator(t)
    got = ev.holds(f, 0) if len(t) else ev.empty_value(f, {})
    assert got == ref_holds(f, t, 0)


def test_private_registries_include_the_builtin_grounding_domains() -> None:
    """A fresh Registry() knows entities/outputs/grounded; builtins=False gives an empty one."""
    reg = Registry()
    assert {"entities", "outputs", "ungrounded"} <= set(reg.extractors)
    assert "grounded" in reg.context_predicates
    assert not Registry(builtins=False).extractors
    t = Trace.from_records(
        [
            {
                "tool_name": "read_file",
                "arguments": {"path": "src/app.py"},
                "tool_result": "def main():\n    pass\n",
            },
            {"tool_name": "final_answer", "arguments": {"answer": "main() is in src/app.py"}},
        ]
    )
    f = parse_formula("forall e in entities(final_answer.answer): e in outputs", registry=reg)
    assert holds(f, t, registry=reg)


def test_one_evaluator_many_temporary_formulas() -> None:
    """Formulas parsed and dropped one after another never see each other's cached values."""
    ev = Evaluator(Trace.of("a", "b"))
    for _ in range(200):
        assert ev.holds(parse_formula("F b")) is True
        assert ev.holds(parse_formula("F c")) is False
