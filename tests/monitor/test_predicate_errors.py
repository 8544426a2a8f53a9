"""A user predicate that raises: the monitor agrees with ``verify_trace`` in every shape.

Offline, a constraint whose evaluation raises is violated and carries the error, and
whether it raises depends on what the evaluator reaches (monitor/judge.py). Online the
final verdict, the presence of the error, each peek and a save/restore in between give
the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard import parse_spec, verify_trace
from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.monitor import Monitor, Verdict
from agentguard.semantics.registry import Registry
from agentguard.trace.model import Call, Trace

S, V, P = Verdict.SATISFIED, Verdict.VIOLATED, Verdict.PENDING


def _registry() -> Registry:
    reg = Registry()

    def boom(x: object) -> bool:
        raise ZeroDivisionError("boom")

    def bad(x: object) -> bool:  # raises for one value of a quantified variable only
        if x == 2:
            raise ValueError("bad value")
        return True

    def fine(x: object) -> bool:
        return x == 1

    reg.register_predicate("boom", boom)
    reg.register_predicate("bad", bad)
    reg.register_predicate("fine", fine)
    return reg


def spec_of(formula: str, reg: Registry) -> A.Spec:
    text = (
        "predicate boom(x)\npredicate bad(x)\npredicate fine(x)\n"
        f"tool add(a: int)\ntool other()\nconstraint b := {formula}"
    )
    return parse_spec(text, registry=reg)


def call_of(name: str, a: int = 1) -> Call:
    return Call(name, {"a": a} if name == "add" else {}, "ok")


def offline(
    formula: str, calls: Sequence[Call], reg: Registry, metrics: dict[str, int] | None = None
) -> tuple[bool, str | None]:
    trace = Trace(tuple(calls), metrics or {})
    (c,) = verify_trace(trace, spec_of(formula, reg), registry=reg).constraints
    return c.passed, c.error


# ---------------------------------------------------------------------- formulas
CLOSED = ["add", "other", "boom(1)", "fine(1)", "fine(2)", "true", "bad(metrics.n)"]
OF_X = ["boom(x)", "bad(x)", "fine(x)", "add(a = x)", "Called(other)"]
UNARY = ["G", "F", "X", "O", "H", "!"]
BINARY = ["&", "|", "->", "U", "S"]


def _formulas(atoms: list[str]) -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        unary = st.tuples(st.sampled_from(UNARY), inner).map(lambda t: f"{t[0]}({t[1]})")
        binary = st.tuples(inner, st.sampled_from(BINARY), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        )
        return unary | binary

    return st.recursive(st.sampled_from(atoms), extend, max_leaves=4)


@st.composite
def formulas(draw: st.DrawFn) -> str:
    """A formula over add/other, raising and non-raising predicates, quantifiers."""
    quant = draw(st.sampled_from(["none", "forall", "exists", "parametric"]))
    if quant == "none":
        return draw(_formulas(CLOSED))
    body = draw(_formulas(CLOSED + OF_X))
    if quant == "parametric":
        q = f"forall x: (add(a = x) -> {body})" if draw(st.booleans()) else f"forall x: {body}"
    else:
        domain = draw(st.sampled_from(["[1]", "[1, 2]", "[2, 1]"]))
        q = f"{quant} x in {domain}: {body}"
    around = draw(
        st.sampled_from(["{}", "({}) | F add", "G(other -> ({}))", "!({})", "({}) & G !other"])
    )
    return around.format(f"({q})")


traces = st.lists(
    st.tuples(st.sampled_from(["add", "other"]), st.sampled_from([1, 2])), max_size=4
).map(lambda xs: [call_of(n, a) for n, a in xs])


def _check(formula: str, calls: list[Call], save_at: int, n: int = 1) -> None:
    reg = _registry()
    try:
        spec = spec_of(formula, reg)
    except AgentGuardError:  # a shape the language refuses (a variable without a site)
        return
    m = Monitor(spec, registry=reg)
    for i, call in enumerate(calls):
        if i == save_at:
            m = Monitor.restore(spec, m.save(), registry=reg)
        peek = m.peek(call)
        ending = m.peek(call, ending=True)
        after = m.step(call)
        assert peek.verdicts["b"] is after["b"], (formula, calls[: i + 1])
        assert ("b" in peek.errors) == ("b" in m.errors()), (formula, calls[: i + 1])
        passed, error = offline(formula, calls[: i + 1], reg)
        assert ("b" in peek.errors) <= (error is not None)
        if ending.final["b"] is not None:
            assert ending.final["b"] == (passed and error is None), (formula, calls[: i + 1])
    if save_at == len(calls):
        m = Monitor.restore(spec, m.save(), registry=reg)
    passed, error = offline(formula, calls, reg, {"n": n})
    assert m.finish({"n": n}) == {"b": S if passed else V}, (formula, calls)
    assert ("b" in m.errors()) == (error is not None), (formula, calls)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formulas(), traces, st.integers(0, 4), st.sampled_from([1, 2]))
def test_monitor_equals_verify_trace_when_a_predicate_raises(
    formula: str, calls: list[Call], save_at: int, n: int
) -> None:
    """Random formulas with raising predicates (of constants, of a quantified variable,
    of a metric), random traces of length 0-4, a save and restore at a random point:
    verdict and error presence equal verify_trace's."""
    _check(formula, calls, save_at, n)


SHAPES = [
    "forall x in [1, 2]: G(add -> boom(x))",
    "exists x in [1, 2]: G(boom(x))",
    "forall x in [1]: boom(x) | F add",
    'forall x in ["add", "other"]: G(Called(x) -> boom(1))',
    "(forall x in [1,2]: G(boom(x))) | F add",
    "G(add -> (exists x in [1,2]: boom(x)))",
    "forall x: G(add(a=x) -> boom(1))",
    "forall x: G(add(a=x) -> bad(x))",
    "F add | G boom(1)",
    "G(add -> boom(1)) & (forall x in [1]: F other)",
    "!Called(add) -> boom(1)",
    "Called(add) -> boom(1)",
]
NAMES = [[], ["other"], ["add"], ["other", "add"], ["add", "other"]]


@pytest.mark.parametrize("formula", SHAPES)
@pytest.mark.parametrize("names", NAMES)
@pytest.mark.parametrize("save_at", [0, 1, 9])
def test_each_shape_equals_verify_trace(formula: str, names: list[str], save_at: int) -> None:
    """The shapes that disagreed before: quantified over a fixed domain, parametric,
    under `|`, `&`, `->`, on the empty trace and after calls, saved and restored."""
    _check(formula, [call_of(n) for n in names], save_at)


def test_a_parametric_value_that_raises_is_seen_by_its_peek() -> None:
    """`forall x: G(add(a=x) -> bad(x))`: the call bringing the raising value 2 gets the
    error in its peek; the step leaves the constraint violated; a value 1 does not."""
    reg = _registry()
    m = Monitor(spec_of("forall x: G(add(a=x) -> bad(x))", reg), registry=reg)
    assert "b" not in m.peek(call_of("add", 1)).errors
    m.step(call_of("add", 1))
    peek = m.peek(call_of("add", 2))
    assert peek.verdicts["b"] is V and "bad value" in peek.errors["b"][0]
    m.step(call_of("add", 2))
    assert m.verdicts["b"] is V and "bad value" in m.errors()["b"]


def test_a_decided_constraint_still_sees_a_later_error() -> None:
    """`F add | (forall x: G(add(a=x) -> bad(x)))` is satisfied by the first add, yet
    offline a later add(a=2) makes it raise: the peek of that call reports the error."""
    reg = _registry()
    formula = "F other | (forall x: G(add(a=x) -> bad(x)))"
    m = Monitor(spec_of(formula, reg), registry=reg)
    m.step(call_of("other"))
    assert m.verdicts["b"] is S
    peek = m.peek(call_of("add", 2))
    assert "bad value" in peek.errors["b"][0]
    m.step(call_of("add", 2))
    assert m.finish() == {"b": V}
    assert offline(formula, [call_of("other"), call_of("add", 2)], reg)[1] is not None


@pytest.mark.parametrize("formula", SHAPES)
@pytest.mark.parametrize("names", NAMES)
def test_a_fork_goes_on_as_the_monitor_does(formula: str, names: list[str]) -> None:
    """A fork of a snapshot taken after the first call (the firewall's shadow monitors)
    keeps the calls the judge needs: its finish equals the original's and verify_trace."""
    reg = _registry()
    spec = spec_of(formula, reg)
    calls = [call_of(n) for n in names]
    m = Monitor(spec, registry=reg)
    for call in calls[:1]:
        m.step(call)
    fork = m.fork(m.snapshot("b"))
    for call in calls[1:]:
        m.step(call)
        fork.step(call)
    passed, error = offline(formula, calls, reg)
    assert fork.finish() == m.finish() == {"b": S if passed else V}
    assert ("b" in fork.errors()) == ("b" in m.errors()) == (error is not None)
