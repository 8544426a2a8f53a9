"""Laws of ``Firewall.permissions``: what it allows, ``propose`` allows; what it refuses,
``propose`` refuses whatever the arguments (checked on a restored copy of the run)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall
from agentguard.language import ast as A
from agentguard.severity import Severity, SeverityKind
from tests.monitor.strategies import formulas
from tests.strategies import TOOLS, data_formulas, quantified

CANDIDATES = (*TOOLS, "web-search", "unnamed")
SEVERITIES = st.sampled_from(
    [
        Severity(SeverityKind.HARD_STOP),
        Severity(SeverityKind.SOFT_BLOCK, 1),
        Severity(SeverityKind.SOFT_BLOCK),
        Severity(SeverityKind.BLOCK_AND_WARN),
        Severity(SeverityKind.TOLERATE),
        Severity(SeverityKind.ASK),
    ]
)
VALUES = st.one_of(
    st.integers(-5, 5),
    st.booleans(),
    st.none(),
    st.text("abc /.-", max_size=4),
    st.lists(st.integers(0, 3), max_size=2),
)
ARGS = st.dictionaries(st.sampled_from(["k", "odd-key", "args"]), VALUES, max_size=2)
CALLS = st.tuples(st.sampled_from(CANDIDATES), ARGS, VALUES)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


def _spec(fs: list[A.Formula], severities: list[Severity]) -> A.Spec:
    return A.Spec(
        "s",
        tuple(
            A.Constraint(f"c{i}", f, severity=sev)
            for i, (f, sev) in enumerate(zip(fs, severities, strict=False))
        ),
    )


def _run(spec: A.Spec, prefix: list[tuple[str, dict[str, Any], Any]], **options: Any) -> Firewall:
    fw = Firewall(spec, keep_trace=True, **options)
    for name, args, result in prefix:
        d = fw.propose(name, args)
        if d.executes:
            d = fw.start(d)
            if d.executes:
                fw.complete(d, result)
    return fw


def _check(
    spec: A.Spec, fw: Firewall, probes: list[tuple[str, dict[str, Any]]], **options: Any
) -> None:
    answer = fw.permissions(CANDIDATES)
    state = fw.save()
    for name, args in probes:
        allowed = answer.allows(name, args)
        refused = answer[name].status == "refused"
        assert not (allowed and refused)
        if not (allowed or refused):
            continue
        copy = Firewall.restore(spec, state, **options)  # the run itself does not move
        d = copy.propose(name, args)
        runs = d.executes and d.shadow is None
        if allowed:
            assert runs, (name, args, answer[name], d.message)
        else:
            assert not runs, (name, args, answer[name], d.message)
            expected = answer[name].action
            assert expected is not None
            # a tool refused by a blocking constraint may also be conditional under a
            # stopping one: arguments failing that condition stop the run (the answer
            # lists the condition beside the refusal)
            conditional = {c.constraint for c in answer[name].conditions}
            stopped_by_condition = d.action is Action.STOP and any(
                v.constraint in conditional for v in d.violations
            )
            assert d.action is expected or d.shadow is expected or stopped_by_condition


@SETTINGS
@given(
    st.lists(st.one_of(formulas(), data_formulas(), quantified()), min_size=1, max_size=3),
    st.lists(SEVERITIES, min_size=3, max_size=3),
    st.lists(CALLS, max_size=5),
    st.lists(st.tuples(st.sampled_from(CANDIDATES), ARGS), min_size=1, max_size=6),
    st.sampled_from([(), ("c",)]),
)
def test_permissions_agree_with_propose(
    fs: list[A.Formula],
    severities: list[Severity],
    prefix: list[tuple[str, dict[str, Any], Any]],
    probes: list[tuple[str, dict[str, Any]]],
    final_tools: tuple[str, ...],
) -> None:
    """Every call the answer allows runs; every call to a tool it refuses is refused."""
    spec = _spec(fs, severities)
    fw = _run(spec, prefix, final_tools=final_tools)
    _check(spec, fw, probes, final_tools=final_tools)


@SETTINGS
@given(
    st.lists(data_formulas(), min_size=1, max_size=2),
    st.lists(SEVERITIES, min_size=2, max_size=2),
    st.lists(CALLS, max_size=5),
    st.lists(st.tuples(st.sampled_from(CANDIDATES), ARGS), min_size=1, max_size=6),
)
def test_permissions_agree_with_propose_in_shadow_mode(
    fs: list[A.Formula],
    severities: list[Severity],
    prefix: list[tuple[str, dict[str, Any], Any]],
    probes: list[tuple[str, dict[str, Any]]],
) -> None:
    """In shadow mode the answer is what enforce mode would do: a refused tool's call
    runs with ``shadow`` set, an allowed call runs clean."""
    spec = _spec(fs, severities)
    fw = _run(spec, prefix, mode="shadow")
    assert fw.permissions().mode == "shadow"
    _check(spec, fw, probes, mode="shadow")


ARG_TESTS = st.lists(
    st.builds(
        lambda field, op, v: A.Test(A.FieldRef((field,)), op, A.Literal(v)),
        st.sampled_from(["k", "odd-key"]),
        st.sampled_from(["=", "!=", "<", "<=", ">", ">="]),
        st.integers(-3, 3),
    ),
    min_size=1,
    max_size=2,
)
EVENTS = st.builds(lambda t, tests: A.Event(t, tuple(tests)), st.sampled_from(TOOLS), ARG_TESTS)
NAMES = st.builds(A.Event, st.sampled_from(TOOLS))
GUARDED = st.one_of(
    st.builds(lambda e, u: A.Always(A.Implies(e, A.Once(u))), EVENTS, NAMES),  # needs u first
    st.builds(lambda e: A.Always(A.Not(e)), EVENTS),  # never such a call
    st.builds(lambda e, u: A.Always(A.Implies(u, e)), EVENTS, NAMES),  # u only so
    st.builds(A.Eventually, EVENTS),  # an obligation
    st.builds(
        lambda k: A.Compare(A.MetricRef(("num_tool_calls",)), "<=", A.Literal(k)),
        st.integers(0, 4),
    ),
)


@SETTINGS
@given(
    st.lists(GUARDED, min_size=1, max_size=3),
    st.lists(SEVERITIES, min_size=3, max_size=3),
    st.lists(CALLS, max_size=6),
    st.lists(st.tuples(st.sampled_from(CANDIDATES), ARGS), min_size=1, max_size=8),
)
def test_argument_conditions_agree_with_propose(
    fs: list[A.Formula],
    severities: list[Severity],
    prefix: list[tuple[str, dict[str, Any], Any]],
    probes: list[tuple[str, dict[str, Any]]],
) -> None:
    """Constraints guarding calls by their arguments (``G(a(k <= 2) -> O b)``, budgets,
    obligations at a final tool): the answer is exact, and agrees with propose."""
    spec = _spec(fs, severities)
    fw = _run(spec, prefix, final_tools=("c",))
    answer = fw.permissions(CANDIDATES)
    for t in (*answer.tools, answer.other):  # labelled only where a warned call may repeat
        assert t.exact or "BLOCK_AND_WARN" in t.reason
    _check(spec, fw, probes, final_tools=("c",))
