"""The miner's laws: a mined spec holds on the runs it was mined from, and pruning
loses nothing (what it drops, the kept constraints imply)."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agentguard.language import parse_spec
from agentguard.mining import mine
from agentguard.mining.render import render
from agentguard.scoring import verify_trace, verify_traces
from agentguard.trace.model import Trace
from tests.mining.strategies import logs, traces

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(logs())
def test_every_training_trace_satisfies_every_mined_constraint(runs: list[Trace]) -> None:
    """verify_trace of each training trace passes every mined constraint (score 1.0)."""
    mined = mine(runs)
    assert mined.unconfirmed == ()
    for report in verify_traces(runs, mined.spec):
        assert [c.name for c in report.constraints if not c.passed] == []
        assert report.tool_problems == () or not report.tool_problems


@SETTINGS
@given(logs(min_size=2, max_size=8), st.sampled_from([0.5, 0.75, 0.9]))
def test_each_constraint_holds_on_the_min_support_share(runs: list[Trace], share: float) -> None:
    """With --min-support s, every constraint holds on at least s of the training traces."""
    mined = mine(runs, min_support=share)
    assert mined.unconfirmed == ()
    held = {c.name: 0 for c in mined.spec.constraints}
    for report in verify_traces(runs, mined.spec):
        for c in report.constraints:
            held[c.name] += c.passed
    assert all(n >= share * len(runs) - 1e-9 for n in held.values())


@SETTINGS
@given(logs(min_size=1, max_size=5), st.lists(traces(), min_size=1, max_size=5))
def test_pruned_constraints_are_implied_by_the_kept_ones(
    runs: list[Trace], others: list[Trace]
) -> None:
    """On any trace (not only the mined ones) that satisfies every kept constraint, every
    pruned constraint holds too."""
    mined = mine(runs)
    if not mined.pruned:
        return
    text, _ = render("pruned", mined.tools, mined.pruned, traces=0, min_support=1.0)
    dropped = parse_spec(text)
    for trace in [*runs, *others]:
        if verify_trace(trace, mined.spec).score == 1.0:
            report = verify_trace(trace, dropped)
            assert [c.name for c in report.constraints if not c.passed] == []


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # lint makes shrinking slow
)
@given(logs(min_size=1, max_size=4), st.sampled_from([1.0, 0.6]))
def test_mined_specs_lint_clean(runs: list[Trace], share: float) -> None:
    """lint finds nothing in a mined spec: no valid, unsatisfiable, conflicting, late or
    never-blocking constraint, no argument it does not know."""
    from agentguard.analysis import lint_spec

    assert lint_spec(mine(runs, min_support=share).spec) == ()
