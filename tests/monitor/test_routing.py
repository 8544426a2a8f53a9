"""Skipping the quantified constraints a call cannot move (monitor/routing.py) changes nothing."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.language import parse_spec
from agentguard.monitor import Monitor, Verdict
from agentguard.semantics.evaluator import holds
from agentguard.trace.model import UNKNOWN, Call, Trace
from tests.semantics.test_indexed import quantified as keyed_quantified
from tests.strategies import Binary, temporal

TOOLS = ("a", "b", "c")
SITE = {"a": "x", "b": "x", "c": "y"}  # the one field each tool gives the variable from
FIELDS = ("x", "y", "z")
# equalities an index must mirror: 1 = 1.0, true != 1, "1" != 1, [1] = (1,), NaN != NaN
VALUES: tuple[Any, ...] = (0, 1, 2, 1.0, True, "1", None, [1], {"k": 1}, float("nan"))
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


def _event() -> st.SearchStrategy[A.Formula]:
    """``tool(site = o, field = literal...)``: the shape routing skips (mostly), with an
    outcome or a ``!=`` now and then (the shape it leaves to the constraint)."""

    def build(tool: str, keyed: bool, literals: list[tuple[str, str, Any]], outcome: Any) -> Any:
        tests = [A.Test(A.FieldRef((SITE[tool],)), "=", A.Var("o"))] if keyed else []
        tests += [A.Test(A.FieldRef((f,)), op, A.Literal(v)) for f, op, v in literals]
        return A.Event(tool, tuple(tests), outcome)

    literal = st.tuples(
        st.sampled_from(FIELDS), st.sampled_from(["="] * 7 + ["!="]), st.sampled_from(VALUES[:7])
    )
    return st.builds(
        build,
        st.sampled_from(TOOLS),
        st.booleans(),
        st.lists(literal, max_size=2),
        st.sampled_from([None] * 8 + ["ok"]),
    )


def _body() -> st.SearchStrategy[A.Formula]:
    binary: list[Binary] = [A.And, A.Or, A.Implies, A.Until, A.Since]
    return st.recursive(_event(), lambda c: temporal(c, binary), max_leaves=4)


def _lanes() -> st.SearchStrategy[A.Formula]:
    """``forall o: G(a(x = o, z = k) -> O b(x = o))`` for some lane k: the benchmark's shape."""

    def build(kind: str, lane: Any, past: bool) -> A.Formula:
        keyed = A.Test(A.FieldRef(("x",)), "=", A.Var("o"))
        use = A.Event("a", (keyed, A.Test(A.FieldRef(("z",)), "=", A.Literal(lane))))
        opened = A.Event("b", (keyed,))
        body = A.Implies(use, A.Once(opened, None) if past else A.Eventually(opened, None))
        return A.Quantified(kind, "o", None, A.Always(body, None))

    return st.builds(
        build, st.sampled_from(["forall", "exists"]), st.sampled_from(VALUES[:3]), st.booleans()
    )


def constraints() -> st.SearchStrategy[list[A.Constraint]]:
    one = st.one_of(
        _lanes(),
        _lanes(),
        st.builds(
            A.Quantified, st.sampled_from(["forall", "exists"]), st.just("o"), st.none(), _body()
        ),
        keyed_quantified(),
    )
    return st.lists(one, min_size=1, max_size=5).map(
        lambda fs: [A.Constraint(f"c{i}", f) for i, f in enumerate(fs)]
    )


def traces() -> st.SearchStrategy[Trace]:
    args = st.dictionaries(st.sampled_from(FIELDS), st.sampled_from(VALUES), max_size=3)
    call = st.builds(
        lambda tool, a, error: Call(tool, a, "ok", error=error),
        st.sampled_from(TOOLS),
        args,
        st.sampled_from([False] * 5 + [True]),
    )
    return st.builds(
        lambda cs: Trace(tuple(c.at(i) for i, c in enumerate(cs))), st.lists(call, max_size=12)
    )


def _pair(cs: list[A.Constraint]) -> tuple[Monitor, Monitor]:
    """A monitor as built (routing), and one that steps every constraint a call reaches."""
    routed, plain = Monitor(cs), Monitor(cs)
    plain._router = None
    return routed, plain


def _agree(routed: Monitor, plain: Monitor, call: Call) -> None:
    for proposed in (call, call.with_result(UNKNOWN)):
        a, b = routed.peek(proposed, ending=True), plain.peek(proposed, ending=True)
        assert (a.verdicts, a.final, a.changed, a.errors) == (
            b.verdicts,
            b.final,
            b.changed,
            b.errors,
        )
    assert routed.advance(call) == plain.advance(call)
    assert dict(routed.verdicts) == dict(plain.verdicts)
    assert routed.save() == plain.save()  # the same instances, in the same order


@SETTINGS
@given(constraints(), traces(), st.integers(0, 12))
def test_routed_monitor_equals_stepping_every_constraint(
    cs: list[A.Constraint], trace: Trace, cut: int
) -> None:
    """Peeks, verdicts, saved states and final verdicts equal the unrouted monitor's, also
    across a save and restore; the final verdicts equal the offline evaluator's."""
    routed, plain = _pair(cs)
    for i, call in enumerate(trace):
        if i == cut:  # continue from the saved states: the rebuilt router must agree too
            routed, plain = Monitor.restore(cs, routed.save()), Monitor.restore(cs, plain.save())
            plain._router = None
        _agree(routed, plain, call)
    assert routed.finish(trace.metrics) == plain.finish(trace.metrics)
    for c in cs:
        with contextlib.suppress(AgentGuardError):
            ok = routed.finish(trace.metrics)[c.name] is Verdict.SATISFIED
            assert ok == holds(c.formula, trace)


def _lanes_spec(n: int) -> str:
    return "\n".join(
        f"constraint c{k} := forall o: G(use(id = o, lane = {k}) -> O open(id = o))"
        for k in range(n)
    )


def test_shared_tools_skip_every_constraint_a_call_cannot_move() -> None:
    """After warm-up, a use of an opened id and an open of a new one step no constraint."""
    m = Monitor(parse_spec(_lanes_spec(50)))
    router = m._router
    assert router is not None
    for v in range(5):
        m.step(Call("open", {"id": v}, "ok"))
    names = {f"c{k}" for k in range(50)}
    use = router.plan(Call("use", {"id": 3, "lane": 7}))
    assert use is not None and use.skip == names  # c7's own letter loops on every group
    new = router.plan(Call("open", {"id": 99}))
    assert new is not None and new.skip == names
    assert len(new.parts[0][0].joins) == 50
    # never opened: its first state (the fresh one) is no group's yet, so every one moves
    assert router.plan(Call("use", {"id": 42, "lane": 7})) is None
    m.step(Call("use", {"id": 42, "lane": 7}, "ok"))
    assert [n for n, v in m.verdicts.items() if v is Verdict.VIOLATED] == ["c7"]
    again = router.plan(Call("use", {"id": 43, "lane": 8}))  # now only c8 moves
    assert again is not None and again.skip == names - {"c7", "c8"}


def test_a_violation_on_a_shared_tool_is_found_and_retired() -> None:
    """The constraint a call breaks is stepped and leaves the routes; the others stay skipped."""
    routed, plain = _pair(list(parse_spec(_lanes_spec(10)).constraints))
    calls = [Call("open", {"id": v}, "ok") for v in range(3)]
    calls += [Call("use", {"id": 1, "lane": 4}, "ok"), Call("open", {"id": 1}, "ok")]
    calls += [Call("use", {"id": 8, "lane": 2}, "ok"), Call("open", {"id": 8}, "ok")]
    calls += [Call("use", {"id": 8, "lane": 2}, "ok"), Call("use", {"id": 1.0, "lane": 5}, "ok")]
    for call in calls:
        _agree(routed, plain, call)
    assert [n for n, v in routed.verdicts.items() if v is Verdict.VIOLATED] == ["c2"]
    assert routed._router is not None
    assert all("c2" not in r.members for rs in routed._router._routes.values() for r in rs)


def test_constraints_with_other_tests_are_not_routed() -> None:
    """A comparison, an outcome or a ``!=`` on the variable keeps a constraint stepped."""
    text = "\n".join(
        [
            "constraint gt := forall o: G(use(id = o, lane > 3) -> O open(id = o))",
            "constraint ok := forall o: G(use(id = o).ok -> O open(id = o))",
            "constraint ne := forall o: G(use(id != o) -> O open(id = o))",
            "constraint two := forall o: G(use(id = o, ref = o) -> O open(id = o))",
        ]
    )
    m = Monitor(parse_spec(text))
    routes = m._router._routes if m._router is not None else {}
    assert all(tool != "use" or not rs for tool, rs in routes.items())


def test_caches_stay_as_small_as_the_spec() -> None:
    """Calls with keys no atom tests for share one signature: the caches do not grow."""
    m = Monitor(parse_spec(_lanes_spec(3)))
    m.step(Call("open", {"id": 1}, "ok"))
    for lane in range(3, 300):
        m.peek(Call("use", {"id": 1, "lane": lane}))
        m.step(Call("use", {"id": 1, "lane": lane}, "ok"))
    assert m._router is not None
    (route,) = m._router._routes["use"]
    assert len(route.settled) == 1 and len(route.letters) <= 3
    assert all(v is Verdict.PENDING for v in m.verdicts.values())


def test_a_restored_state_whose_constraints_disagree_is_not_routed() -> None:
    """Constraints restored with different values seen are stepped, not routed."""
    spec = parse_spec(_lanes_spec(3))
    m = Monitor(spec)
    for v in range(3):
        m.step(Call("open", {"id": v}, "ok"))
    doc = m.save()
    doc["constraints"]["c1"]["groups"][0]["values"] = [0, 1]  # c1 forgets id 2
    edited = Monitor.restore(spec, doc)
    assert edited._router is None
    edited.step(Call("use", {"id": 2, "lane": 1}, "ok"))  # c1 never saw id 2 opened
    assert [n for n, v in edited.verdicts.items() if v is Verdict.VIOLATED] == ["c1"]
    assert Monitor.restore(spec, m.save())._router is not None
