"""The firewall's ``on_predicate_error`` where a user predicate raises in any shape of
formula: refused under fail-closed, allowed and logged once under fail-open, and the
final report equal to ``verify_trace`` of the trace that ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall
from agentguard.language import parse_spec
from agentguard.monitor import Verdict
from agentguard.scoring.verify import verify_trace
from agentguard.semantics.registry import Registry

SHAPES = [
    "forall x in [1, 2]: G(add -> boom(x))",
    "exists x in [1, 2]: G(boom(x))",
    'forall x in ["add", "other"]: G(Called(x) -> boom(1))',
    "(forall x in [1,2]: G(boom(x))) | F add",
    "G(add -> (exists x in [1,2]: boom(x)))",
    "forall x: G(add(a=x) -> bad(x))",
    "F other | (forall x: G(add(a=x) -> bad(x)))",
    "G(add -> boom(1)) & (forall x in [1]: F other)",
    "!Called(add) -> boom(1)",
]
RUN = [("other", {}), ("add", {"a": 1}), ("add", {"a": 2}), ("other", {})]


def _registry() -> Registry:
    reg = Registry()

    def boom(x: object) -> bool:
        raise ZeroDivisionError("division by zero")

    def bad(x: object) -> bool:
        if x == 2:
            raise ZeroDivisionError("division by zero")
        return True

    reg.register_predicate("boom", boom)
    reg.register_predicate("bad", bad)
    return reg


@pytest.mark.parametrize("formula", SHAPES)
@pytest.mark.parametrize(
    ("policy", "severity"),
    [("fail_closed", "HARD_STOP"), ("fail_closed", "SOFT_BLOCK(9)"), ("fail_open", "HARD_STOP")],
)
def test_a_failing_predicate_follows_the_policy_in_every_shape(
    formula: str, policy: str, severity: str, tmp_path: Path
) -> None:
    """Each call whose trace would make the evaluator raise gets the policy: fail-closed
    refuses it with the constraint's severity, fail-open
    runs it and logs the error once; the report equals verify_trace of the trace."""
    reg = _registry()
    text = (
        "predicate boom(x)\npredicate bad(x)\ntool add(a: int)\ntool other()\n"
        f"constraint b severity {severity} := {formula}"
    )
    s = parse_spec(text, registry=reg)
    log = tmp_path / "log.jsonl"
    fw = Firewall(s, registry=reg, on_predicate_error=policy, log_path=log, keep_trace=True)
    refused = 0  # calls refused for a failing predicate
    for name, args in RUN:
        d = fw.propose(name, args)
        if d.action is Action.ALLOW:
            fw.record(name, args, "ok")
        elif "a user predicate failed (fail-closed)" in d.message:
            refused += 1
            assert [v.constraint for v in d.violations] == ["b"]
            assert d.action is (Action.STOP if severity == "HARD_STOP" else Action.BLOCK)
    # (under fail-open a HARD_STOP constraint violated by an error that ran stops the run)
    report = fw.finish()
    offline = verify_trace(report.trace, s, registry=reg)
    assert report.compliance == offline
    assert dict(report.verdicts) == {
        c.name: Verdict.SATISFIED if c.passed else Verdict.VIOLATED for c in offline.constraints
    }
    events = [json.loads(line) for line in log.read_text().splitlines()]
    logged = [e for e in events if e["event"] == "agentguard.predicate_error"]
    (result,) = offline.constraints
    if policy == "fail_closed":
        assert not logged
        # a call whose trace raises was refused (the trace left may raise by itself:
        # `!Called(add) -> boom(1)` asks boom on the empty trace)
        assert result.error is None or refused > 0
    else:
        assert refused == 0
        assert len(logged) == (1 if result.error is not None else 0)
