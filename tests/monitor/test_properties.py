"""Laws: the monitor's final verdict is the offline one; decided verdicts never change."""

from __future__ import annotations

import contextlib
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.monitor import FormulaMonitor, Monitor, Verdict
from agentguard.semantics.evaluator import holds
from agentguard.trace.model import UNKNOWN, Call, Trace
from tests.monitor.strategies import completions, formulas, trace_of, traces
from tests.strategies import data_formulas, quantified
from tests.strategies import traces as data_traces

COMPLETIONS = completions(3)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(formulas(), traces())
def test_final_verdict_equals_offline(f: A.Formula, names: list[str]) -> None:
    """monitor.finish() on the full trace == holds(formula, trace)."""
    m = Monitor.for_formula(f)
    for n in names:
        m.step(Call(n))
    assert (m.finish() is Verdict.SATISFIED) == holds(f, trace_of(names))


@SETTINGS
@given(formulas(), traces(max_size=4))
def test_decided_prefix_verdicts_hold_for_every_completion(f: A.Formula, names: list[str]) -> None:
    """SATISFIED / VIOLATED on a prefix agrees with every completion of up to 3 calls."""
    m = Monitor.for_formula(f)
    for i in range(len(names) + 1):
        v = m.step(Call(names[i - 1])) if i else m.verdict
        if v is Verdict.PENDING:
            continue
        for extra in COMPLETIONS:
            assert holds(f, trace_of([*names[:i], *extra])) == (v is Verdict.SATISFIED)


@SETTINGS
@given(st.one_of(data_formulas(), quantified()), data_traces(), st.data())
def test_data_and_quantified_verdicts_are_sound(
    f: A.Formula, trace: Trace, data: st.DataObject
) -> None:
    """With data and quantifiers: a decided verdict holds for sampled completions; a verdict
    certain before the result is known stays; finals equal the offline ones."""
    try:
        expected = holds(f, trace)
    except AgentGuardError:
        return
    m = Monitor.for_formula(f)
    calls = list(trace)
    for i, call in enumerate(calls):
        proposed = m.peek(call.with_result(UNKNOWN), ending=True)
        v = m.step(call)
        if proposed.verdicts["formula"] is not Verdict.PENDING:
            assert v is proposed.verdicts["formula"]
        ended = proposed.final["formula"]
        if ended is not None:
            assert ended == holds(f, Trace(tuple(calls[: i + 1]), trace.metrics))
        if v is Verdict.PENDING:
            continue
        assert (v is Verdict.SATISFIED) == expected
        for _ in range(2):
            extra = data.draw(data_traces(max_size=3))
            completed = Trace((*calls[: i + 1], *extra), trace.metrics)
            with contextlib.suppress(AgentGuardError):
                assert holds(f, completed) == (v is Verdict.SATISFIED)
    assert (m.finish(trace.metrics) is Verdict.SATISFIED) == expected


@SETTINGS
@given(st.one_of(formulas(), quantified()), data_traces(max_size=6), st.integers(0, 6))
def test_save_and_restore_give_identical_verdicts(f: A.Formula, trace: Trace, cut: int) -> None:
    """A monitor restored from its JSON state continues with the same verdicts."""
    m = Monitor.for_formula(f)
    calls = list(trace)
    for call in calls[:cut]:
        m.step(call)
    doc = json.loads(json.dumps(m.save(), default=str))
    other = FormulaMonitor.restore(f, doc)
    assert other.verdict is m.verdict
    for call in calls[cut:]:
        assert other.step(call) is m.step(call)
    assert other.finish(trace.metrics) is m.finish(trace.metrics)
