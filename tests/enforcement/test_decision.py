"""Decision: a frozen value with the same fields, built through the slots' own setters."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.enforcement.firewall import decision_from_dict
from agentguard.severity import Severity, SeverityKind


def sample() -> Decision:
    v = Violation("c", Severity(SeverityKind.SOFT_BLOCK, 2), "L3", 4.0, "m", "d", "h")
    return Decision(Action.BLOCK, "t", {"a": 1}, 3, (v,), "msg", ("p",), True)


def test_fields_defaults_and_equality() -> None:
    """Defaults are as declared (args a fresh empty dict); equal fields, equal decisions."""
    d = Decision(Action.ALLOW, "t")
    assert (d.args, d.step, d.violations, d.message, d.pending, d.escalated) == (
        {},
        0,
        (),
        "",
        (),
        False,
    )
    assert d.args is not Decision(Action.ALLOW, "t").args
    assert [f.name for f in dataclasses.fields(Decision)] == [
        "action",
        "tool",
        "args",
        "step",
        "violations",
        "message",
        "pending",
        "escalated",
        "call_id",
        "tool_call_id",
        "shadow",
        "approval",
    ]
    assert (d.call_id, d.tool_call_id, d.shadow, d.approval) == ("", None, None, None)
    assert sample() == sample() and sample() != Decision(Action.BLOCK, "t")


def test_frozen_and_copyable() -> None:
    """Assignment raises; replace, pickle, deepcopy and to_dict round trips keep every field."""
    d = sample()
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.step = 4  # type: ignore[misc]
    assert dataclasses.replace(d, step=9).step == 9
    assert pickle.loads(pickle.dumps(d)) == d
    assert copy.deepcopy(d) == d
    assert decision_from_dict(d.to_dict()) == d
    assert Decision(action=Action.ALLOW, tool="x", args={"k": 1}).args == {"k": 1}
