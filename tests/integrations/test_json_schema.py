"""JSON Schema input schemas as AgentLTL tool declarations (MCP tools, FunctionTools)."""

from __future__ import annotations

from agentguard.integrations._json_schema import declaration, with_declarations

from agentguard.language import ast as A
from agentguard.language import parse_spec
from agentguard.tools.arguments import signature
from agentguard.tools.checker import ToolChecker

REFUND = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string"},
        "amount": {"type": "number", "minimum": 0, "maximum": 500},
        "count": {"type": "integer"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "tags": {"type": "array"},
        "urgent": {"type": "boolean"},
    },
    "required": ["order_id", "amount"],
}


def test_properties_become_typed_parameters() -> None:
    """Types map to AgentLTL types, `required` decides `?`, every numeric bound is kept."""
    decl = declaration("issue_refund", REFUND)
    assert signature(decl) == (
        "issue_refund(order_id: str, amount: number >= 0 <= 500, count?: int, note?: any, "
        "tags?: list, urgent?: bool)"
    )


def test_a_schema_without_properties_declares_no_arguments() -> None:
    """No properties (or no schema at all): a tool that takes no arguments."""
    assert declaration("ping", {"type": "object"}).params == ()
    assert declaration("ping", None).params == ()


def test_the_declaration_drives_the_schema_checks() -> None:
    """A mistyped, missing, out-of-bound or unexpected argument is a schema problem."""
    checker = ToolChecker([declaration("issue_refund", REFUND)])
    assert checker.check("issue_refund", {"order_id": "A1", "amount": 5}, []) == []
    details = [
        p.detail
        for args in (
            {"order_id": "A1", "amount": "5"},
            {"order_id": "A1"},
            {"order_id": "A1", "amount": -1},
            {"order_id": "A1", "amount": 1, "extra": True},
        )
        for p in checker.check("issue_refund", args, [])
    ]
    assert len(details) == 4 and "'amount'" in details[0] and "'extra'" in details[3]


def test_the_specs_own_declaration_wins() -> None:
    """with_declarations adds only tools the spec does not declare itself."""
    spec = parse_spec("tool issue_refund(order_id: str)\nconstraint c := G(issue_refund -> true)")
    merged = with_declarations(spec, [declaration("issue_refund", REFUND), A.ToolDecl("ping")])
    assert [t.name for t in merged.tools] == ["issue_refund", "ping"]
    assert merged.tools[0] == spec.tools[0]
    assert with_declarations(spec, []) is spec
