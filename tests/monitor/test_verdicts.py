"""Verdicts on prefixes: earliest, exact for tool-name atoms, sound for data."""

from __future__ import annotations

import pytest

from agentguard.language import parse_formula
from agentguard.monitor import FormulaMonitor, Monitor, Verdict
from agentguard.semantics.evaluator import holds
from agentguard.semantics.registry import Registry
from agentguard.trace.model import UNKNOWN, Call, Trace
from tests.semantics.empty_trace import EMPTY_TRACE_VALUES

S, V, P = Verdict.SATISFIED, Verdict.VIOLATED, Verdict.PENDING


def run(text: str, calls: list[Call | str]) -> list[Verdict]:
    m = Monitor.for_formula(parse_formula(text))
    return [m.step(c if isinstance(c, Call) else Call(c)) for c in calls]


@pytest.mark.parametrize(
    ("text", "names", "expected"),
    [
        ("G(issue_refund -> O verify_identity)", ["issue_refund"], [V]),
        ("G(issue_refund -> O verify_identity)", ["verify_identity", "issue_refund"], [S, S]),
        ("F cite", ["a", "cite"], [P, S]),
        ("G(a -> X b)", ["a", "b", "a", "a"], [P, P, P, V]),
        ("Before(a, b)", ["b"], [V]),
        ("Before(a, b)", ["a", "c", "b"], [P, P, S]),
        ("CalledN(a, 2, =)", ["a", "a", "a"], [P, P, V]),
        ("CalledN(a, 1, <=)", ["b", "a"], [P, P]),
        ("InstanceBefore(a, 1, b, 0)", ["a", "b"], [P, V]),
        ("InOrder([a, b, c])", ["a", "c", "b", "c"], [P, P, P, S]),
        ("WithinSteps(a, b, 1)", ["a", "c", "b"], [P, V, V]),
        ("BranchCalled(a, b)", ["a", "b"], [P, V]),
        ("G(a -> Called(b))", ["a", "c"], [P, P]),
        ("X false", ["a"], [V]),
        ("N false", ["a"], [P]),
        ("F[<=1] a", ["b", "b"], [P, V]),
        ("G[<=1] !a", ["b", "b", "a"], [P, S, S]),
    ],
)
def test_prefix_verdicts(text: str, names: list[str], expected: list[Verdict]) -> None:
    """Each prefix gets the earliest exact verdict for tool-name formulas."""
    assert run(text, names) == expected  # type: ignore[arg-type]


def test_g_implies_strong_next_is_violated_when_the_run_ends_after_a() -> None:
    """G(a -> X b) with strong X: ending right after a violates it (LTLf, not LTL)."""
    m = Monitor.for_formula(parse_formula("G(a -> X b)"))
    m.step(Call("a"))
    assert m.verdict is P
    assert m.finish() is V
    assert m.peek(Call("b"), ending=True).final["formula"] is True


def test_weak_next_is_satisfied_at_the_end() -> None:
    """G(a -> N b) holds when the run ends right after a."""
    m = Monitor.for_formula(parse_formula("G(a -> N b)"))
    m.step(Call("a"))
    assert m.finish() is S


def test_bad_prefix_is_reported_at_the_first_event_after_which_nothing_can_satisfy() -> None:
    """F a & G !a is unsatisfiable: violated before any call."""
    m = Monitor.for_formula(parse_formula("F a & G !a"))
    assert m.verdict is V


def test_one_tool_per_position_is_respected() -> None:
    """G(a -> b) forbids a (a call is never both a and b): violated at the first a."""
    assert run("G(a -> b)", ["c", "a"]) == [P, V]


@pytest.mark.parametrize(("text", "value"), EMPTY_TRACE_VALUES)
def test_empty_trace_values(text: str, value: bool) -> None:
    """The empty trace follows the documented conventions (and the offline evaluator)."""
    m = Monitor.for_formula(parse_formula(text))
    assert (m.finish() is S) == value == holds(parse_formula(text), Trace())


def test_data_atoms_are_sound_and_decide_safety() -> None:
    """G !issue_refund(amount > 500) is violated exactly by the large refund."""
    calls = [Call("issue_refund", {"amount": 10}), Call("issue_refund", {"amount": 600})]
    assert run("G !issue_refund(amount > 500)", calls) == [P, V]  # type: ignore[arg-type]


def test_result_tests_are_unknown_while_the_call_is_proposed() -> None:
    """A proposed call's result tests are undecided: no VIOLATED until the result is known."""
    m = Monitor.for_formula(parse_formula("G !search(result.count = 0)"))
    assert m.peek(Call("search", {"q": "x"})).verdicts["formula"] is P
    assert m.step(Call("search", {"q": "x"}, {"count": 0})) is V


def test_peek_does_not_commit() -> None:
    """peek leaves the monitor as it was."""
    m = Monitor.for_formula(parse_formula("G !a"))
    assert m.peek(Call("a")).verdicts["formula"] is V
    assert m.verdict is P
    assert m.monitor.position == 0


def test_peek_of_a_batch_sees_the_earlier_calls() -> None:
    """The second call of a batch is checked against the first."""
    m = Monitor.for_formula(parse_formula("G(b -> Y a)"))
    assert m.peek([Call("a"), Call("b")]).verdicts["formula"] is P
    assert m.peek([Call("c"), Call("b")]).verdicts["formula"] is V


def test_metrics_other_than_the_call_count_are_known_at_the_end() -> None:
    """metrics.cost <= 1 stays pending until finish gets the metrics."""
    m = Monitor.for_formula(parse_formula("metrics.cost <= 1"))
    m.step(Call("a"))
    m.step(Call("b"))
    assert m.verdict is P
    assert m.finish({"cost": 2}) is V
    assert m.finish({"cost": 1}) is S


class TestQuantifiers:
    def test_parametric_forall_tracks_each_value(self) -> None:
        """forall o: refunds of o need an earlier lookup of o; another order's lookup does not count."""
        text = "forall o: G(issue_refund(order_id = o) -> O lookup_order(order_id = o))"
        calls = [
            Call("lookup_order", {"order_id": 1}),
            Call("issue_refund", {"order_id": 1}),
            Call("issue_refund", {"order_id": 2}),
        ]
        assert run(text, calls) == [P, P, V]  # type: ignore[arg-type]

    def test_forall_over_a_growing_domain_is_never_satisfied_early(self) -> None:
        """A new value could still fail the body, so forall stays pending."""
        text = "forall x in args(t.i): F u(i = x)"
        calls = [Call("t", {"i": 1}), Call("u", {"i": 1})]
        assert run(text, calls) == [P, P]  # type: ignore[arg-type]

    def test_exists_is_satisfied_by_a_witness(self) -> None:
        """exists f in results(ls.files): F read(path = f) is satisfied by reading a listed file."""
        text = "exists f in results(ls.files): F read(path = f)"
        calls = [
            Call("ls", {}, {"files": ["a", "b"]}),
            Call("read", {"path": "c"}),
            Call("read", {"path": "b"}),
        ]
        assert run(text, calls) == [P, P, S]  # type: ignore[arg-type]

    def test_fixed_list_domain_can_be_satisfied_early(self) -> None:
        """forall x in [1, 2]: the domain cannot grow, so the last witness satisfies it."""
        calls = [Call("t", {"i": 1}), Call("t", {"i": 2})]
        assert run("forall x in [1, 2]: F t(i = x)", calls) == [P, S]  # type: ignore[arg-type]

    def test_many_values_share_groups(self) -> None:
        """10,000 distinct values live in a handful of groups."""
        m = Monitor.for_formula(
            parse_formula("forall o: G(refund(order_id = o) -> O lookup(order_id = o))")
        )
        for i in range(10_000):
            m.step(Call("lookup", {"order_id": i}))
        node = m.monitor.node("formula")
        assert len(node.groups) <= 3  # type: ignore[attr-defined]
        assert m.step(Call("refund", {"order_id": 5})) is P
        assert m.step(Call("refund", {"order_id": 10_001})) is V


def test_user_predicate_errors_make_the_constraint_violated_like_offline() -> None:
    """A user predicate that raises is a defined outcome: violated, with the error kept."""
    reg = Registry()

    def boom(x: object) -> bool:
        raise RuntimeError("no")

    reg.register_predicate("boom", boom)
    f = parse_formula("forall x in args(t.i): boom(x)", registry=reg)
    m = Monitor.for_formula(f, registry=reg)
    peek = m.peek(Call("t", {"i": 1}))
    assert peek.errors and peek.verdicts["formula"] is V
    m.step(Call("t", {"i": 1}))
    assert m.verdict is V
    assert "boom" in m.monitor.errors()["formula"]


def test_context_predicates_fall_back_to_the_end() -> None:
    """Predicate(f) is evaluated on the whole trace at the end (pending before)."""
    reg = Registry()
    reg.register_context_predicate("long_run", lambda trace, i, metrics: len(trace) > 1)
    f = parse_formula("Predicate(long_run)", registry=reg)
    m = Monitor.for_formula(f, registry=reg)
    assert m.step(Call("a")) is P
    m.step(Call("b"))
    assert m.finish() is S
    assert str(m.classification()) == "at least mixed"


def test_unknown_result_is_not_known_offline() -> None:
    """A committed call without a result fails result tests, as offline."""
    m = Monitor.for_formula(parse_formula("F t(result = 1)"))
    m.step(Call("t", {}, UNKNOWN))
    assert m.finish() is V


@pytest.mark.usefixtures("small_budget")
def test_a_machine_too_large_to_explore_stays_sound() -> None:
    """Past the exploration budget verdicts are only PENDING or truly decided, finals exact."""
    f = parse_formula("G(a -> F[<=3] b) & G(c -> O[<=2] a)")
    m = Monitor.for_formula(f)
    names = ["a", "b", "c", "a", "d", "d", "d", "d", "b"]
    for n in names:
        assert m.step(Call(n)) in (P, V)
    assert m.monitor.node("formula").machine.too_large  # type: ignore[attr-defined]
    assert (m.finish() is S) == holds(f, Trace.of(*names))
    assert not m.classification().exact


def test_contains_on_text_degrades_to_the_offline_evaluator() -> None:
    """`s contains x` on a text field: substrings of unseen values are checked at the end, exactly."""
    f = parse_formula("forall x in args(t.i): F u(s contains x)")
    calls = [Call("u", {"s": "abc"}), Call("t", {"i": "b"})]
    m = Monitor.for_formula(f)
    assert [m.step(c) for c in calls] == [P, P]
    assert m.monitor.node("formula").degraded  # type: ignore[attr-defined]
    assert (m.finish() is S) == holds(f, Trace(tuple(calls))) is True
    doc = m.save()
    other = FormulaMonitor.restore(f, doc)
    assert other.finish() is S
