"""One reading of a JSON Schema into a tool declaration, for the oracle and the adapters."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard.pec.declarations import declarations_from_json_schema
from agentguard.tools.arguments import signature
from agentguard.tools.checker import ToolChecker
from agentguard.tools.json_schema import declaration_from_json_schema, json_type

SCHEMA = {
    "type": "object",
    "properties": {
        "mode": {"type": "string", "enum": ["fast", "safe"]},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "limit": {"type": "integer", "exclusiveMaximum": 10},
        "either": {"type": ["string", "null"]},
        "one": {"type": ["boolean"]},
    },
    "required": ["mode"],
}


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("string", "str"),
        ("integer", "int"),
        ("tuple", "list"),
        (["boolean"], "bool"),
        (["string", "null"], "any"),
        (["string", "integer"], "any"),
        (None, "any"),
        ("made-up", "any"),
    ],
)
def test_json_types(raw: object, kind: str) -> None:
    """A single type maps to its AgentLTL type; a union, none or an unknown name is any."""
    assert json_type(raw) == kind


def test_the_oracle_and_the_adapters_read_a_schema_alike() -> None:
    """The PEC loader gives the very declaration the adapters use."""
    direct = declaration_from_json_schema("find", SCHEMA)
    via_pec = declarations_from_json_schema([{"name": "find", "parameters": SCHEMA}])["find"]
    assert via_pec == direct
    assert signature(direct).startswith("find(mode: str")


def test_enum_items_bound_and_closed_arguments_are_checked() -> None:
    """enum, items, the kept bound and a closed declaration each refuse a bad call."""
    checker = ToolChecker([declaration_from_json_schema("find", SCHEMA)])
    assert checker.check("find", {"mode": "fast", "ids": [1], "limit": 9, "either": None}, []) == []
    for bad in (
        {"mode": "slow"},
        {"mode": "fast", "ids": ["x"]},
        {"mode": "fast", "limit": 10},
        {"mode": "fast", "other": 1},
    ):
        assert checker.check("find", bad, []), bad


def test_additional_properties_true_allows_extra_arguments() -> None:
    """A schema that says extra properties are allowed is an open declaration."""
    decl = declaration_from_json_schema("f", {"properties": {}, "additionalProperties": True})
    assert decl.allow_extra
    assert ToolChecker([decl]).check("f", {"anything": 1}, []) == []
    assert not declaration_from_json_schema("f", {"properties": {}}).allow_extra


@given(
    low=st.integers(-50, 50),
    span=st.integers(0, 50),
    value=st.one_of(st.integers(-120, 120), st.floats(-120, 120, allow_nan=False)),
    exclusive=st.booleans(),
)
def test_every_numeric_bound_of_a_schema_is_enforced(
    low: int, span: int, value: float, exclusive: bool
) -> None:
    """With both a lower and an upper bound (inclusive or exclusive), a value is refused
    exactly when JSON Schema says it is out of range: both bounds hold, not the first."""
    high = low + span
    keys = ("exclusiveMinimum", "exclusiveMaximum") if exclusive else ("minimum", "maximum")
    prop = {"type": "number", keys[0]: low, keys[1]: high}
    checker = ToolChecker([declaration_from_json_schema("f", {"properties": {"x": prop}})])
    inside = low < value < high if exclusive else low <= value <= high
    assert (checker.check("f", {"x": value}, []) == []) is inside


@pytest.mark.parametrize(
    ("prop", "good", "bad"),
    [
        ({"type": "string", "minLength": 2, "maxLength": 3}, "abc", "abcd"),
        ({"type": "string", "minLength": 2, "maxLength": 3}, "ab", "a"),
        ({"type": "array", "minItems": 1, "maxItems": 2}, [1, 2], []),
        ({"type": "array", "minItems": 1, "maxItems": 2}, [1], [1, 2, 3]),
    ],
)
def test_lengths_and_sizes_are_enforced(prop: dict[str, object], good: object, bad: object) -> None:
    """minLength/maxLength of a string and minItems/maxItems of an array refuse a value
    outside them, naming the keyword."""
    checker = ToolChecker([declaration_from_json_schema("f", {"properties": {"x": prop}})])
    assert checker.check("f", {"x": good}, []) == []
    (problem,) = checker.check("f", {"x": bad}, [])
    assert any(k in str(problem) for k in ("minLength", "maxLength", "minItems", "maxItems"))


def test_json_text_a_tool_reads_decoded_is_declared_any() -> None:
    """pydantic's ``Json`` field: text on the wire, the decoded value to the function (and
    to the check), so its declaration takes any value."""
    schema = {
        "type": "object",
        "properties": {
            "settings": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": {"type": "object"},
                "maxLength": 3,
            }
        },
    }
    (param,) = declaration_from_json_schema("configure", schema).params
    assert param.type == "any"


def test_items_read_as_json_text_are_declared_any() -> None:
    """``list[Json[...]]``: each item is text on the wire and a value to the function."""
    items = {"type": "string", "contentMediaType": "application/json"}
    schema = {"type": "object", "properties": {"cfgs": {"type": "array", "items": items}}}
    (param,) = declaration_from_json_schema("aim", schema).params
    assert param.type == "list" and param.items is None
