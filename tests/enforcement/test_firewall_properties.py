"""Laws of the firewall: it refuses only definitive violations, and scores like offline."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.enforcement.firewall import Firewall
from agentguard.language import ast as A
from agentguard.monitor import Verdict
from agentguard.semantics.evaluator import holds
from agentguard.severity import Severity, SeverityKind
from tests.monitor.strategies import LETTERS, completions, formulas, trace_of

COMPLETIONS = completions(2)
NEVER_ESCALATES = Severity(SeverityKind.SOFT_BLOCK, 10_000)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(formulas(), min_size=1, max_size=3), st.lists(st.sampled_from(LETTERS), max_size=6))
def test_blocks_only_definitive_violations_and_scores_like_offline(
    fs: list[A.Formula], proposals: list[str]
) -> None:
    """Every refused call violates its constraints on every completion; finish == offline."""
    spec = A.Spec(
        "s", tuple(A.Constraint(f"c{i}", f, severity=NEVER_ESCALATES) for i, f in enumerate(fs))
    )
    fw = Firewall(spec)
    executed: list[str] = []
    for name in proposals:
        d = fw.propose(name, {})
        if d.executes:
            fw.record(name, {}, None)
            executed.append(name)
            continue
        for v in d.violations:
            f = spec.constraint(v.constraint).formula
            for extra in COMPLETIONS:
                assert not holds(f, trace_of([*executed, name, *extra]))
    report = fw.finish()
    for c in spec.constraints:
        expected = holds(c.formula, trace_of(executed))
        assert (report.verdicts[c.name] is Verdict.SATISFIED) == expected
        assert next(r.passed for r in report.compliance.constraints if r.name == c.name) == expected
