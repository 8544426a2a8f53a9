"""DECLARE counting: each template's verdict is its formula's, and pm4py finds the same
constraints with the same support and confidence at the same thresholds."""

from __future__ import annotations

import random

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.language import parse_spec
from agentguard.mining import declare, temporal
from agentguard.scoring import verify_trace
from agentguard.trace.model import Call, Trace

ACTS = ("a", "b", "c")
_names = st.lists(st.sampled_from([*ACTS, "user_message"]), max_size=7)


def _trace(names: list[str]) -> Trace:
    calls = [Call.message("user", "hi") if n == "user_message" else Call(n) for n in names]
    return Trace(tuple(c.at(i) for i, c in enumerate(calls)))


@settings(max_examples=150, deadline=None)
@given(_names)
def test_every_template_verdict_is_its_formulas(names: list[str]) -> None:
    """Per trace: activated and violated by the counter <=> the formula fails on it."""
    _, counts = declare.count([names], ACTS)
    lines = [f"constraint k{i} := {temporal.formula(t, k)}" for i, (t, k) in enumerate(counts)]
    spec = parse_spec("\n".join(lines) + "\nconstraint seen := true | user_message\n")
    report = verify_trace(_trace(names), spec)
    for i, ((template, key), (activated, satisfied)) in enumerate(counts.items()):
        passed = report.constraints[i].passed
        assert passed == (not activated or bool(satisfied)), (template, key, names)


def test_an_unknown_template_is_refused() -> None:
    """A misspelt template is an error naming it, not an empty result."""
    with pytest.raises(ValueError, match="respnse"):
        declare.count([["a"]], ["a"], ["respnse"])


PM4PY_TEMPLATES = (
    "existence",
    "absence",
    "init",
    "responded_existence",
    "response",
    "precedence",
    "chainresponse",
    "chainprecedence",
    "altresponse",
    "altprecedence",
)
"""The templates both define the same way (pm4py's ``nonsuccession`` negates its
``succession`` verdict; the LTL not-succession is ours alone)."""


def _log(seed: int, traces: int, length: int, acts: int) -> list[list[str]]:
    rng = random.Random(seed)
    names = [f"t{i}" for i in range(acts)]
    return [[rng.choice(names) for _ in range(rng.randint(0, length))] for _ in range(traces)]


def _frame(log: list[list[str]]) -> pd.DataFrame:
    rows = [
        {
            "case:concept:name": str(i),
            "concept:name": n,
            "time:timestamp": pd.Timestamp(j, unit="s"),
        }
        for i, trace in enumerate(log)
        for j, n in enumerate(trace)
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("seed", "support", "confidence"), [(1, 0.0, 0.0), (2, 0.2, 0.8), (3, 0.5, 1.0), (4, 0.1, 0.5)]
)
def test_the_same_constraints_as_pm4py_discover_declare(
    seed: int, support: float, confidence: float
) -> None:
    """Same templates, same thresholds: the same constraints, support and confidence."""
    import pm4py

    log = [t for t in _log(seed, 60, 12, 5) if t]  # pm4py's frame has no empty case
    ours = declare.discover(
        log,
        templates=PM4PY_TEMPLATES,
        min_support_ratio=support,
        min_confidence_ratio=confidence,
    )
    theirs = pm4py.discover_declare(
        _frame(log),
        allowed_templates=set(PM4PY_TEMPLATES),
        min_support_ratio=support,
        min_confidence_ratio=confidence,
    )
    plain = {
        t: {
            k: {"support": int(v["support"]), "confidence": int(v["confidence"])}
            for k, v in rules.items()
        }
        for t, rules in theirs.items()
        if rules
    }
    assert ours == plain
