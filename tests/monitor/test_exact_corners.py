"""Issue 27's corners: each a crash or a wrong verdict online; the monitor now agrees with
``verify_trace`` there, and a Hypothesis law pins the agreement over the same corners."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard import Firewall, parse_spec, verify_trace
from agentguard.analysis import lint_spec
from agentguard.enforcement.decision import Action
from agentguard.language import ast as A
from agentguard.language.printer import format_formula
from agentguard.monitor import Monitor, Verdict
from agentguard.trace.model import Call, Trace

S, V = Verdict.SATISFIED, Verdict.VIOLATED


def online(text: str, calls: list[Call]) -> Verdict:
    """The monitor's final verdict on ``calls`` for one constraint ``c``."""
    m = Monitor(parse_spec(f"constraint c := {text}"))
    for i, call in enumerate(calls):
        m.step(call.at(i))
    return m.finish()["c"]


def offline(text: str, calls: list[Call]) -> bool:
    report = verify_trace(Trace(tuple(calls)), parse_spec(f"constraint c := {text}"))
    return report.constraints[0].passed


def agree(text: str, calls: list[Call]) -> Verdict:
    """Both verdicts, checked equal; the online one returned."""
    got = online(text, calls)
    assert (got is S) == offline(text, calls), text
    return got


class TestLoneSurrogatePatterns:
    """Item 1: a pattern taken from trace data that holds a lone surrogate."""

    TEXT = "forall x: G(a(k = x) -> a(k ~ x))"
    CALLS = (Call("a", {"k": "\udce9"}),)

    def test_offline_and_online_agree_without_raising(self) -> None:
        """The surrogate is read as U+FFFD in the pattern as in the text: x matches itself."""
        assert agree(self.TEXT, list(self.CALLS)) is S

    def test_verify_traces_and_firewall_finish(self) -> None:
        """``verify_traces`` and ``Firewall.finish`` run to a verdict too."""
        from agentguard import verify_traces

        spec = parse_spec(f"constraint c := {self.TEXT}")
        assert verify_traces([Trace(self.CALLS)], spec)[0].compliance_score == 1.0
        fw = Firewall(spec)
        decision = fw.propose("a", {"k": "\udce9"})
        assert decision.action is Action.ALLOW
        fw.complete(decision, "ok")
        assert fw.finish().compliance.compliance_score == 1.0

    def test_surrogate_pattern_matches_only_what_u_fffd_matches(self) -> None:
        """Read as U+FFFD, a surrogate pattern does not match an unrelated letter."""
        calls = [Call("a", {"k": "\udce9", "j": "e"})]
        assert agree("forall x: G(a(k = x) -> !a(j ~ x))", calls) is S


class TestSignedStateWithSurrogates:
    """Item 5: ``save(key=...)`` of a state holding a lone surrogate."""

    def test_monitor_state_signs_and_restores(self) -> None:
        """The MAC covers the surrogate as its own bytes; a JSON round trip keeps it."""
        spec = parse_spec("constraint c := forall x: G(a(k = x) -> O b(k = x))")
        m = Monitor(spec)
        m.step(Call("b", {"k": "\udce9"}).at(0))
        doc = json.loads(json.dumps(m.save(key=b"k" * 32)))
        back = Monitor.restore(spec, doc, key=b"k" * 32)
        back.step(Call("a", {"k": "\udce9"}).at(1))
        assert back.finish()["c"] is S

    def test_a_different_surrogate_is_a_different_state(self) -> None:
        """Two states differing only in which surrogate they hold have different MACs."""
        spec = parse_spec("constraint c := forall x: G(a(k = x) -> O b(k = x))")
        macs = set()
        for text in ("\udce9", "\udce8", "\ufffd"):
            m = Monitor(spec)
            m.step(Call("b", {"k": text}).at(0))
            macs.add(m.save(key=b"k" * 32)["mac"])
        assert len(macs) == 3

    def test_firewall_state_signs(self) -> None:
        """``Firewall.save_state(key=...)`` too."""
        spec = parse_spec("constraint c := forall x: G(a(k = x) -> O b(k = x))")
        fw = Firewall(spec, keep_trace=True)
        fw.complete(fw.propose("b", {"k": "\udce9"}), "ok")
        doc = json.loads(json.dumps(fw.save(key=b"k" * 32)))
        back = Firewall.restore(spec, doc, key=b"k" * 32)
        assert back.propose("a", {"k": "\udce9"}).action is Action.ALLOW


class TestLiteralListDomains:
    """Item 2: list and map elements of a literal-list domain."""

    def test_nested_list_element(self) -> None:
        """``exists x in [["e"]]: true`` holds online as offline (its list contributes "e")."""
        assert agree('exists x in [["e"]]: true', [Call("a")]) is S

    def test_map_element_is_kept(self) -> None:
        """``forall x in [1, {"k": 1}]: x = 1`` is false: the map is an element."""
        assert agree('forall x in [1, {"k": 1}]: x = 1', [Call("a")]) is V

    def test_firewall_scores_it(self) -> None:
        """The firewall's score at finish is the offline one (it was 0.0)."""
        fw = Firewall(parse_spec('constraint c := exists x in [["e"]]: true'))
        fw.complete(fw.propose("a", {}), "ok")
        assert fw.finish().compliance.compliance_score == 1.0


class TestEmptyToolName:
    """Item 3: the tool name ``""`` is a name like any other."""

    def test_called_empty_is_not_any_call(self) -> None:
        """``Called("")`` does not hold after a call of ``a``; it holds after one of ``""``."""
        assert agree('Called("")', [Call("a")]) is V
        assert agree('Called("")', [Call("")]) is S

    def test_hard_stop_does_not_stop_other_calls(self) -> None:
        """``!Called("")`` at HARD_STOP lets ``a`` through."""
        fw = Firewall(parse_spec('constraint c severity HARD_STOP := !Called("")'))
        assert fw.propose("a", {}).action is Action.ALLOW


class TestNonTextToolPosition:
    """Item 4: a quantified value that is not text in a trace predicate's tool position."""

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("forall x in [1]: Before(x, c)", V),
            ("forall x in [1]: CalledN(x, 0, =)", S),
            ("forall x in [1, true]: !Called(x)", S),
            ("exists x in [1]: WithinSteps(a, x, 3)", V),
        ],
    )
    def test_monitor_agrees(self, text: str, expected: Verdict) -> None:
        """The value names no tool, online as offline."""
        assert agree(text, [Call("a"), Call("c")]) is expected

    def test_firewall_and_lint_do_not_raise(self) -> None:
        """``Firewall`` builds and ``lint`` explores (it raised TypeError)."""
        spec = parse_spec("constraint c := forall x in [1]: CalledN(x, 0, =)")
        assert Firewall(spec).propose("a", {}).action is Action.ALLOW
        assert [w.kind for w in lint_spec(spec)] == ["valid"]


class TestNonTextPatterns:
    """Item 6: a pattern bound to a value that is not text is a type mismatch (false)."""

    @pytest.mark.parametrize(
        ("domain", "value"),
        [("true", "True"), ("1", "1"), ("null", "None"), ('{"a": 1}', "{'a': 1}")],
    )
    def test_str_of_the_value_is_not_matched(self, domain: str, value: str) -> None:
        """``x ~`` and ``x !~`` are both false for a non-text ``x``."""
        calls = [Call("a", {"k": value})]
        assert agree(f"forall x in [{domain}]: G(a -> !a(k ~ x))", calls) is S
        assert agree(f"forall x in [{domain}]: G(a -> !a(k !~ x))", calls) is S

    def test_empty_list_is_no_invalid_pattern(self) -> None:
        """A list bound from the trace is no pattern: false, never an error."""
        calls = [Call("a", {"j": [], "k": "z"})]
        assert agree("forall x: G(a(j = x) -> !a(k ~ x))", calls) is S
        report = verify_trace(
            Trace(tuple(calls)),
            parse_spec("constraint c := forall x: G(a(j = x) -> !a(k ~ x))"),
        )
        assert report.constraints[0].error is None


# --------------------------------------------------------------------- the law
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from(["e", "", "(", "a.b", "\udce9", "é", "True", "1", "[]"]),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.sampled_from("kv"), inner, max_size=2)
    ),
    max_leaves=4,
)


def _literal(value: Any) -> A.Term:
    if isinstance(value, list):
        return A.ListLiteral(tuple(_literal(v) for v in value))
    if isinstance(value, dict):
        return A.MapLiteral(tuple((k, _literal(v)) for k, v in value.items()))
    return A.Literal(value)


X = A.Var("x")
BODIES = st.sampled_from(
    [
        A.Compare(X, "=", A.Literal(1)),
        A.Compare(X, "!=", A.Literal("e")),
        A.Event("a", (A.Test(A.FieldRef(("args", "k")), "=", X),)),
        A.Event("a", (A.Test(A.FieldRef(("args", "k")), "~", X),)),
        A.Event("a", (A.Test(A.FieldRef(("args", "k")), "!~", X),)),
        A.Event("a", (A.Test(A.FieldRef(("args", "k")), "contains", X),)),
        A.TracePredicate("Called", (X,)),
        A.TracePredicate("CalledN", (X, 0, "=")),
        A.TracePredicate("Before", (X, "a")),
    ]
)
TOOLS = st.sampled_from(["a", "b", "", "e", "True"])


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(["forall", "exists"]),
    st.lists(JSON_VALUES, min_size=0, max_size=3),
    BODIES,
    st.sampled_from(["", "F", "G"]),
    st.lists(st.tuples(TOOLS, JSON_VALUES), max_size=4),
)
def test_literal_domain_verdicts_equal_offline(
    kind: str, domain: list[Any], body: A.Formula, temporal: str, calls: list[tuple[str, Any]]
) -> None:
    """Over literal domains of any JSON values, text and non-text patterns, odd tool names
    and lone surrogates: the monitor's final verdict is verify_trace's, and neither raises."""
    inner: A.Formula = body
    if temporal == "F":
        inner = A.Eventually(body)
    elif temporal == "G":
        inner = A.Always(body)
    f = A.Quantified(kind, "x", A.ListLiteral(tuple(_literal(v) for v in domain)), inner)
    text = format_formula(f)
    trace = [Call(tool, {"k": value}) for tool, value in calls]
    spec = parse_spec(f"constraint c := {text}")
    m = Monitor(spec)
    for i, call in enumerate(trace):
        m.step(call.at(i))
    report = verify_trace(Trace(tuple(trace)), spec)
    assert (m.finish()["c"] is S) == report.constraints[0].passed, text
