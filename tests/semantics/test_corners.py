"""Semantic corners found by a differential reference (issue 9), pinned offline."""

from __future__ import annotations

import pytest

from agentguard import Call, EvaluationError, Trace, holds, parse_formula, parse_spec, verify_trace
from agentguard.errors import SpecSemanticError
from agentguard.language import ast as A
from agentguard.semantics.evaluator import Evaluator


def calls(*items: tuple[str, dict[str, object]]) -> Trace:
    return Trace([Call(name, args, None, i) for i, (name, args) in enumerate(items)])


class TestLiteralIdentity:
    def test_true_and_one_are_different_literals(self) -> None:
        """`true` and `1`, `false` and `0` are different nodes and hash apart."""
        assert A.Literal(True) != A.Literal(1)
        assert A.Literal(False) != A.Literal(0)
        assert len({A.Literal(True), A.Literal(1), A.Literal(1.0)}) == 3
        assert A.Literal(True) == A.Literal(True)

    def test_identity_is_deep_through_lists_and_maps(self) -> None:
        """A list or map literal holding `true` differs from one holding `1`."""
        assert A.Literal((True, 0)) != A.Literal((1, False))
        assert A.Literal({"k": True}) != A.Literal({"k": 1})
        assert A.ListLiteral((A.Literal(True),)) != A.ListLiteral((A.Literal(1),))
        assert A.MapLiteral((("k", A.Literal(0)),)) != A.MapLiteral((("k", A.Literal(False)),))
        assert A.Domain("xs", None, (), (True,)) != A.Domain("xs", None, (), (1,))

    def test_parsed_atoms_differ(self) -> None:
        """`a(k = 1)` and `a(k = true)` parse to unequal events."""
        assert parse_formula("a(k = 1)") != parse_formula("a(k = true)")
        assert parse_formula("a(k = [1])") != parse_formula("a(k = [true])")
        assert parse_formula("a(k = {v: 0})") != parse_formula("a(k = {v: false})")

    @pytest.mark.parametrize(
        ("text", "args", "expected"),
        [
            ("a(k = 1) & !a(k = true)", {"k": 1}, True),
            ("a(k = true) & !a(k = 1)", {"k": True}, True),
            ("a(k = 0) & !a(k = false)", {"k": 0}, True),
            ("a(k = [1]) & !a(k = [true])", {"k": [1]}, True),
            ("a(k = {v: 1}) & !a(k = {v: true})", {"k": {"v": 1}}, True),
        ],
    )
    def test_evaluator_cache_keeps_types_apart(
        self, text: str, args: dict[str, object], expected: bool
    ) -> None:
        """The evaluator's node cache does not merge a bool test with an int test."""
        assert holds(text, calls(("a", args))) is expected

    def test_shared_cache_across_constraints(self) -> None:
        """Two constraints differing only in `true` vs `1` score independently."""
        spec = parse_spec("constraint c1 := G(!a(k = true))\nconstraint c2 := F a(k = 1)\n")
        assert verify_trace(calls(("a", {"k": 1})), spec).compliance_score == 1.0


class TestRegexFromData:
    def test_a_constant_pattern_is_checked_when_the_spec_is_read(self) -> None:
        """An invalid pattern written as a string constant is a spec error at its position
        (as `/.../` is), whether it tests an argument or a term."""
        with pytest.raises(SpecSemanticError, match=r"1:23: invalid regular expression '\('"):
            parse_spec('constraint c := a(k ~ "(")')
        with pytest.raises(SpecSemanticError, match=r"invalid regular expression '\['"):
            parse_spec('constraint c := forall x in ["a"]: x ~ "["')

    def test_variable_bound_to_data(self) -> None:
        """A pattern read from the trace through a variable is a located EvaluationError."""
        trace = calls(("a", {"k": "x", "p": "("}))
        with pytest.raises(EvaluationError, match=r"invalid regular expression '\('"):
            holds("exists x in args(a.p): a(k ~ x)", trace)

    def test_comparison_operand(self) -> None:
        """A `~` comparison between terms, its pattern from data, reports the comparison."""
        with pytest.raises(EvaluationError, match=r"in `x ~ y`"):
            holds(
                "forall x in args(a.k): forall y in args(a.p): x ~ y",
                calls(("a", {"k": "a", "p": "["})),
            )

    def test_verify_trace_scores_the_others(self) -> None:
        """verify_trace counts the constraint violated, carries the error, scores the rest."""
        spec = parse_spec(
            "constraint bad := forall x in args(b.p): G(!a(k ~ x))\nconstraint good := F a\n"
        )
        report = verify_trace(calls(("b", {"p": "("}), ("a", {"k": "z"})), spec)
        bad, good = report.constraints
        assert (
            not bad.passed and bad.error is not None and "invalid regular expression" in bad.error
        )
        assert "<string>:1:" in bad.error
        assert good.passed and report.compliance_score == 0.5


class TestToolPositionVariables:
    @pytest.mark.parametrize(
        ("text", "names", "expected"),
        [
            ('forall x in ["a", "b"]: Called(x)', ["a", "b"], True),
            ('forall x in ["a", "b"]: Called(x)', ["a"], False),
            ("exists x in tools: Before(a, x)", ["a", "b"], True),
            ("exists x in tools: Before(a, x)", ["b", "a"], False),
            ('forall x in ["a", "b"]: AllBefore([x], c)', ["a", "b", "c"], True),
            ('forall x in ["a", "b"]: AllBefore([x], c)', ["a", "c", "b"], False),
            ('exists x in ["b"]: InOrder([a, x])', ["a", "b"], True),
            ("forall x in [1]: Called(x)", ["a"], False),
            ("forall x in [1]: CalledN(x, 0, =)", ["a"], True),
        ],
    )
    def test_substituted(self, text: str, names: list[str], expected: bool) -> None:
        """A quantified variable in a tool position is substituted per value (A.2.4)."""
        assert holds(text, Trace.of(*names)) is expected

    def test_resolver_keeps_the_variable(self) -> None:
        """The resolver records a bound name in a tool position as a variable."""
        f = parse_formula('forall x in ["a"]: Called(x)')
        assert isinstance(f, A.Quantified) and isinstance(f.body, A.TracePredicate)
        assert f.body.args == (A.Var("x"),)

    def test_quoted_tool_names_are_checked(self) -> None:
        """`Called("s")` is checked against the declared tools like `Called(s)`."""
        with pytest.raises(SpecSemanticError, match="unknown tool 'zz'"):
            parse_spec('tool s()\nconstraint c := Called("zz")\n')
        with pytest.raises(SpecSemanticError, match="unknown tool 'zz'"):
            parse_spec('tool s()\nconstraint c := AllBefore(["zz"], s)\n')
        assert parse_spec('tool s()\nconstraint c := Called("s")\n').constraints

    def test_explain_names_the_value(self) -> None:
        """The report's detail names the substituted tool."""
        spec = parse_spec('constraint c := forall x in ["a", "b"]: Called(x)\n')
        (result,) = verify_trace(Trace.of("a"), spec).constraints
        assert '"b" was never called' in result.detail


class TestAllBeforeEmpty:
    @pytest.mark.parametrize("names", [[], ["g"], ["a"]])
    def test_vacuously_true(self, names: list[str]) -> None:
        """AllBefore([], g) is ∀t∈∅. first(t) < first(g): true, even if g never ran."""
        trace = Trace.of(*names)
        assert holds("AllBefore([], g)", trace)
        assert Evaluator(trace).holds(parse_formula("AllBefore([], g)"))

    def test_nonempty_still_needs_g(self) -> None:
        """With tools listed, g must run after each of them."""
        assert not holds("AllBefore([a], g)", Trace.of("a"))
