"""`compare_tools`: the spec's tools against the agent's names and JSON schemas."""

from __future__ import annotations

import warnings

import pytest

from agentguard.analysis import compare_tools
from agentguard.errors import AgentGuardWarning, ToolMismatchWarning
from agentguard.language import parse_spec

SPEC = parse_spec(
    """tool get_user_detail(user_id: str)
tool refund(amount: number, order: str)
constraint c := G(refund -> O get_user_detail) & F final_answer
"""
)
SCHEMAS = {
    "get_user_details": {"type": "object", "properties": {"user_id": {"type": "string"}}},
    "refund": {
        "type": "object",
        "properties": {
            "amount": {"type": "string"},
            "order_id": {"type": "string"},
            "reason": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["amount", "order_id"],
    },
}


def test_missing_tool_names_the_closest_agent_tool() -> None:
    """`get_user_detail` vs the agent's `get_user_details`."""
    (m,) = [m for m in compare_tools(SPEC, SCHEMAS) if m.kind == "missing-tool"]
    assert m.tool == "get_user_detail" and m.suggestion == "get_user_details"
    assert "the agent has 'get_user_details'" in m.message


def test_parameters_and_types_are_compared_with_the_schema() -> None:
    """A renamed parameter, a type clash and a required parameter the declaration lacks."""
    found = {(m.kind, m.parameter) for m in compare_tools(SPEC, SCHEMAS) if m.tool == "refund"}
    assert found == {
        ("type-mismatch", "amount"),
        ("unknown-parameter", "order"),
        ("undeclared-parameter", "order_id"),
    }


def test_matching_tools_give_nothing() -> None:
    """Same names, same parameters, compatible types: no mismatch; final_answer is implicit."""
    spec = parse_spec("tool refund(amount: number)\nconstraint c := F refund & F final_answer")
    schema = {"refund": {"properties": {"amount": {"type": "integer"}}, "required": ["amount"]}}
    assert compare_tools(spec, schema) == []


def test_tools_without_schemas_compare_names_only() -> None:
    """A framework that exposes no schema (None) gets names compared, parameters not."""
    assert compare_tools(SPEC, {"get_user_detail": None, "refund": None}) == []


def test_warning_class_is_a_user_warning() -> None:
    """The class integrations warn with is a UserWarning, so `-W error` makes it fatal."""
    assert issubclass(ToolMismatchWarning, AgentGuardWarning)
    assert issubclass(AgentGuardWarning, UserWarning)
    message = str(compare_tools(SPEC, SCHEMAS)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ToolMismatchWarning):
            warnings.warn(message, ToolMismatchWarning, stacklevel=1)
