"""Semantic corners of issue 9, pinned online: the monitor agrees with the evaluator."""

from __future__ import annotations

import dataclasses

import pytest

from agentguard import Firewall, parse_spec, verify_trace
from agentguard.enforcement.decision import Action
from agentguard.language import ast as A
from agentguard.language import parse_formula
from agentguard.monitor import Monitor, Verdict
from agentguard.monitor.compile import compile_plan
from agentguard.monitor.plans import AutomatonPlan, BoolPlan, FallbackPlan
from agentguard.semantics.evaluator import holds
from agentguard.semantics.predicates import values_match
from agentguard.semantics.registry import Registry
from agentguard.trace.model import Call, Trace

S, V, P = Verdict.SATISFIED, Verdict.VIOLATED, Verdict.PENDING


def run(text: str, calls: list[Call]) -> tuple[list[Verdict], Verdict]:
    m = Monitor.for_formula(parse_formula(text))
    steps = [m.step(c.at(i)) for i, c in enumerate(calls)]
    return steps, m.finish()


class TestLiteralIdentity:
    def test_atom_table_keeps_true_and_one_apart(self) -> None:
        """One machine with `k = true` and `k = 1` atoms keeps both."""
        steps, final = run("G(!a(k = true)) | G(!a(k = 1))", [Call("a", {"k": True})])
        assert steps == [P] and final is S

    def test_firewall_does_not_block_a_compliant_call(self) -> None:
        """The firewall allows `a(k=true)` under `G(!a(k = true)) | G(!a(k = 1))`."""
        fw = Firewall(
            parse_spec("constraint c severity HARD_STOP := G(!a(k = true)) | G(!a(k = 1))"),
            keep_trace=True,
        )
        decision = fw.propose("a", {"k": True})
        assert decision.action is Action.ALLOW

    @pytest.mark.parametrize(
        ("text", "args"),
        [
            ("a(k = 1) & !a(k = true)", {"k": 1}),
            ("a(k = [0]) & !a(k = [false])", {"k": [0]}),
            ("a(k = {v: 1}) & !a(k = {v: true})", {"k": {"v": 1}}),
        ],
    )
    def test_monitor_equals_evaluator(self, text: str, args: dict[str, object]) -> None:
        """The monitor's verdict equals the evaluator's on scalars, lists and maps."""
        call = Call("a", args)
        _, final = run(text, [call])
        assert final is S and holds(text, Trace((call,)))


class TestRegexFromData:
    def test_firewall_finish_reports_not_raises(self) -> None:
        """A pattern from data makes its constraint violated with a located error."""
        spec = parse_spec(
            "constraint c := forall x in args(b.p): G(!a(k ~ x))\n"
            "constraint d := forall x in args(b.p): G(!a(k !~ x))\n"
            "constraint e := F a\n"
        )
        fw = Firewall(spec, keep_trace=True)
        fw.propose("b", {"p": "("})
        fw.record("b", {"p": "("}, None)
        fw.propose("a", {"k": "zz"})
        fw.record("a", {"k": "zz"}, None)
        report = fw.finish()
        assert report.verdicts["c"] is V and report.verdicts["d"] is V
        assert report.verdicts["e"] is S
        errors = {r.name: r.error for r in report.compliance.constraints}
        assert errors["c"] is not None and "<string>:1:" in errors["c"]
        assert errors["d"] is not None and "invalid regular expression '('" in errors["d"]
        offline = verify_trace(fw.trace, spec)
        assert offline.constraints == report.compliance.constraints

    def test_monitor_peek_reports_the_error(self) -> None:
        """Peeking a call whose test compiles a bad pattern (a hand-built spec: the
        parser refuses a constant one) reports it, never re.error."""
        spec = parse_spec('constraint c := G(!a(k ~ "x"))\n')
        (c,) = spec.constraints
        always = c.formula
        assert isinstance(always, A.Always) and isinstance(always.operand, A.Not)
        event = always.operand.operand
        assert isinstance(event, A.Event)
        bad = dataclasses.replace(event.tests[0], value=A.Literal("("))
        formula = dataclasses.replace(
            always, operand=A.Not(dataclasses.replace(event, tests=(bad,)))
        )
        m = Monitor(
            dataclasses.replace(spec, constraints=(dataclasses.replace(c, formula=formula),))
        )
        peek = m.peek(Call("a", {"k": "zz"}))
        assert peek.verdicts["c"] is V
        assert any("invalid regular expression" in e for e in peek.errors.get("c", ()))


class TestToolPositionVariables:
    def test_literal_domain_is_instantiated(self) -> None:
        """`forall x in ["a","b"]: Called(x)` compiles to one machine per value."""
        plan = compile_plan(parse_formula('forall x in ["a", "b"]: Called(x)'), values_match)
        assert isinstance(plan, BoolPlan) and plan.op == "and"
        steps, final = run('forall x in ["a", "b"]: Called(x)', [Call("a"), Call("b")])
        assert steps == [P, S] and final is S

    def test_exists_over_a_literal_domain(self) -> None:
        """`exists` over a literal list is the disjunction of the instances."""
        steps, final = run('exists x in ["a", "b"]: Before(c, x)', [Call("c"), Call("b")])
        assert steps == [P, S] and final is S

    def test_empty_literal_domain(self) -> None:
        """An empty list makes forall true and exists false from the start."""
        plan = compile_plan(parse_formula("forall x in []: Called(x)"), values_match)
        assert isinstance(plan, AutomatonPlan)
        assert run("exists x in []: Called(x)", [])[1] is V

    @pytest.mark.parametrize("names", [["a", "b"], ["b", "a"], ["a"]])
    def test_trace_domain_is_decided_at_the_end(self, names: list[str]) -> None:
        """Over a domain read from the trace the monitor waits, then agrees offline."""
        text = "exists x in tools: Before(a, x)"
        plan = compile_plan(parse_formula(text), values_match)
        assert isinstance(plan, FallbackPlan)
        steps, final = run(text, [Call(n) for n in names])
        assert set(steps) == {P}
        assert (final is S) is holds(text, Trace.of(*names))


class TestAllBeforeEmpty:
    def test_vacuously_true_online(self) -> None:
        """`AllBefore([], g)` is satisfied before any call, as offline."""
        m = Monitor.for_formula(parse_formula("AllBefore([], g)"))
        assert m.verdict is S
        assert m.finish() is S


class TestErrorsAtTheStart:
    """A user predicate of constants raises when the monitor starts: it decides the
    verdict as the offline evaluator does, on the empty trace and after any call."""

    @staticmethod
    def _spec(formula: str) -> tuple[A.Spec, Registry]:
        reg = Registry()

        def boom(x: object) -> bool:
            raise ZeroDivisionError("boom")

        reg.register_predicate("boom", boom)
        text = f"predicate boom(x)\ntool add()\ntool other()\nconstraint b := {formula}"
        return parse_spec(text, registry=reg), reg

    @pytest.mark.parametrize(
        "formula", ["G(add -> boom(1))", "G(boom(1))", "boom(2) | F add", "F add | G boom(1)"]
    )
    @pytest.mark.parametrize("names", [[], ["other"], ["add"], ["other", "add"]])
    def test_verdicts_equal_the_evaluator(self, formula: str, names: list[str]) -> None:
        """Empty or not, whichever tool comes first: finish equals verify_trace, the error
        too; a peek of any call already sees it; save and restore keep it."""
        spec, reg = self._spec(formula)
        m = Monitor(spec, registry=reg)
        assert m.verdicts["b"] is P
        if names:
            peek = m.peek(Call(names[0], {}))
            assert peek.verdicts["b"] is V and "boom" in peek.errors["b"][0]
            m = Monitor.restore(spec, m.save(), registry=reg)
        for name in names:
            m.step(Call(name, {}, "ok"))
        trace = Trace(tuple(Call(n, {}, "ok") for n in names))
        (offline,) = verify_trace(trace, spec, registry=reg).constraints
        assert m.finish() == {"b": S if offline.passed else V}
        assert (m.errors().get("b") is not None) == (offline.error is not None)
