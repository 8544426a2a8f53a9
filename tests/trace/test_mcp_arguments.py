"""The arguments an MCP server acts on: its inputSchema's defaults filled in, text it
would convert refused, hostile schemas read within a budget."""

from __future__ import annotations

from typing import Any

import pytest

from agentguard.trace.loaders import iter_trace_file
from agentguard.trace.mcp_arguments import server_arguments

DELETE = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "force": {"type": "boolean", "default": True},
    },
    "required": ["path"],
}
DEPLOY = {  # pydantic's schema of `deploy(opts: DeployOptions)`, force defaulting to true
    "type": "object",
    "properties": {"opts": {"$ref": "#/$defs/Opts"}},
    "required": ["opts"],
    "$defs": {
        "Opts": {
            "type": "object",
            "properties": {
                "env": {"type": "string"},
                "force": {"type": "boolean", "default": True},
            },
            "required": ["env"],
        }
    },
}
MAYBE = {  # `amount: float | None = None`
    "type": "object",
    "properties": {"amount": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None}},
}
DECIMAL = {  # `amount: Decimal`
    "type": "object",
    "properties": {"amount": {"anyOf": [{"type": "number"}, {"type": "string"}]}},
}


def test_a_left_out_argument_gets_the_schemas_default() -> None:
    """force is filled in as the server fills it in; a given value is kept."""
    assert server_arguments(DELETE, {"path": "/x"}).args == {"path": "/x", "force": True}
    given = server_arguments(DELETE, {"path": "/x", "force": False})
    assert given.args == {"path": "/x", "force": False} and given.problem is None


def test_nested_defaults_follow_refs_arrays_and_unions() -> None:
    """A $ref'd model's default, each item of a list of them, and the one object branch
    of an optional model are filled in."""
    assert server_arguments(DEPLOY, {"opts": {"env": "prod"}}).args == {
        "opts": {"env": "prod", "force": True}
    }
    many = {**DEPLOY, "properties": {"opts": {"type": "array", "items": {"$ref": "#/$defs/Opts"}}}}
    assert server_arguments(many, {"opts": [{"env": "a"}, {"env": "b", "force": False}]}).args == {
        "opts": [{"env": "a", "force": True}, {"env": "b", "force": False}]
    }
    optional = {
        **DEPLOY,
        "properties": {
            "opts": {"anyOf": [{"$ref": "#/$defs/Opts"}, {"type": "null"}], "default": None}
        },
    }
    assert server_arguments(optional, {"opts": {"env": "x"}}).args["opts"]["force"] is True
    assert server_arguments(optional, {}).args == {"opts": None}


def test_the_arguments_given_are_not_changed() -> None:
    """The client's arguments (forwarded as sent) are copied, never filled in place."""
    sent: dict[str, Any] = {"opts": {"env": "prod"}}
    server_arguments(DEPLOY, sent)
    assert sent == {"opts": {"env": "prod"}}


@pytest.mark.parametrize(
    ("schema", "args", "argument"),
    [
        (MAYBE, {"amount": "9000"}, "'amount' is the text '9000'"),
        (DECIMAL, {"amount": "9000"}, "also takes as a number"),
        (DELETE, {"path": "/x", "force": "on"}, "'force' is the text 'on'"),
        (DELETE, {"path": "/x", "force": 1}, "'force' is a number (1)"),
        (DEPLOY, {"opts": {"env": 5}}, "'opts.env' is a number (5)"),
    ],
)
def test_a_value_the_server_would_convert_is_a_problem(
    schema: dict[str, Any], args: dict[str, Any], argument: str
) -> None:
    """Text for a number or a boolean (or a number for a boolean, text) is refused with
    the argument named and the type to send."""
    problem = server_arguments(schema, args).problem
    assert problem is not None and argument in problem and "send it as" in problem


def test_typed_values_and_unambiguous_text_are_fine() -> None:
    """A number where a number or text is taken, text that reads as no number, an
    integral float for an integer: nothing to refuse."""
    assert server_arguments(DECIMAL, {"amount": 12.5}).problem is None
    assert server_arguments(DECIMAL, {"amount": "twelve"}).problem is None
    integer = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert server_arguments(integer, {"n": 3.0}).problem is None
    assert server_arguments(integer, {"n": 3.5}).problem is not None


def test_branches_filling_different_defaults_are_ambiguous() -> None:
    """Two object branches the value fits, with different defaults: which one the
    server takes is not known, so the call is refused; passing the field settles it."""
    either = {
        "type": "object",
        "properties": {
            "opts": {
                "anyOf": [
                    {"type": "object", "properties": {"force": {"default": True}}},
                    {"type": "object", "properties": {"force": {"default": False}}},
                ]
            }
        },
    }
    problem = server_arguments(either, {"opts": {}}).problem
    assert problem is not None and "fill in different defaults" in problem
    assert server_arguments(either, {"opts": {"force": False}}).problem is None


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"allOf": [{"$ref": "#"}, {"$ref": "#"}]},
        {"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"$ref": "#"}]},
    ],
)
def test_a_hostile_schema_is_a_problem_not_a_hang(schema: dict[str, Any]) -> None:
    """$ref loops and branching self-references are read within the budget and refused."""
    assert server_arguments(schema, {"a": 1}).problem is not None


def test_no_schema_leaves_the_arguments_as_given() -> None:
    assert server_arguments(None, {"a": 1}).args == {"a": 1}


def test_the_message_log_reader_fills_in_the_listed_defaults(tmp_path: Any) -> None:
    """A tools/call in an MCP message log is read with the defaults of the tools/list
    result before it, as the proxy judged it live."""
    import json

    listed = {"tools": [{"name": "delete_path", "inputSchema": DELETE}]}
    params = {"name": "delete_path", "arguments": {"path": "/x"}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "result": listed},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params},
        {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "ok"}]}},
    ]
    path = tmp_path / "wire.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    (loaded,) = list(iter_trace_file(path))
    assert loaded.trace is not None
    assert [dict(c.args) for c in loaded.trace.calls] == [{"path": "/x", "force": True}]


def test_a_number_json_cannot_carry_is_a_problem() -> None:
    """1e999 is read as infinity, which the SDK sends as null: never judged as either."""
    problem = server_arguments(None, {"amounts": [1.0, float("-inf")]}).problem
    assert problem is not None and "'amounts[1]'" in problem and "finite number" in problem


DECODED = {  # MCPServer's schemas: str | list[str], Any, unannotated, str | None, str
    "type": "object",
    "properties": {
        "target": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "query": {"title": "Query"},
        "paths": {"title": "paths", "type": "string"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "path": {"title": "Path", "type": "string"},
    },
}


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        ({"target": '["/prod"]'}, "a list"),
        ({"query": '{"env": "prod"}'}, "an object"),
        ({"query": " null "}, "null"),
        ({"paths": '["/prod"]'}, "a list"),
        ({"paths": '{"a": 1}'}, "an object"),
        ({"note": "null"}, "null"),
    ],
)
def test_json_text_the_server_would_decode_is_a_problem(args: dict[str, Any], kind: str) -> None:
    problem = server_arguments(DECODED, args).problem
    assert problem is not None and f"is JSON for {kind}" in problem


@pytest.mark.parametrize(
    "args",
    [
        {"path": '["/prod"]'},  # annotated str: the server keeps the text
        {"target": '{"a": 1}'},  # an object fits neither branch: the server refuses it
        {"note": '["x"]'},
        {"target": "[not json"},
        {"query": "nothing"},
        {"paths": "/prod"},
        {"target": ["/prod"]},  # typed: judged as the list it is
    ],
)
def test_text_the_server_keeps_as_text_is_fine(args: dict[str, Any]) -> None:
    assert server_arguments(DECODED, args).problem is None


def test_json_text_a_field_reads_is_judged_decoded() -> None:
    """``contentMediaType: application/json`` (pydantic's ``Json``): the server acts on the
    decoded value, judged by the ``contentSchema``; text that is no JSON stays text."""
    schema = {
        "type": "object",
        "properties": {
            "settings": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": {"type": "object"},
            }
        },
    }
    assert server_arguments(schema, {"settings": '{"mode": "danger"}'}).args == {
        "settings": {"mode": "danger"}
    }
    assert server_arguments(schema, {"settings": "no json"}).args == {"settings": "no json"}
    assert server_arguments(schema, {"settings": "[1]"}).problem is not None


def test_an_unannotated_parameter_with_a_default_takes_no_json_text() -> None:
    """``def purge(paths="/tmp")``: MCPServer lists it with its default beside the
    marker, and still decodes JSON text in it."""
    schema = {
        "type": "object",
        "properties": {"paths": {"title": "paths", "type": "string", "default": "/tmp"}},
    }
    problem = server_arguments(schema, {"paths": '["/prod"]'}).problem
    assert problem is not None and "is JSON for a list" in problem
    assert server_arguments(schema, {"paths": "/prod"}).problem is None


JSON_TEXT = {
    "type": "string",
    "contentMediaType": "application/json",
    "contentSchema": {"type": "object"},
}


@pytest.mark.parametrize(
    ("prop", "args", "judged"),
    [
        ({"type": "array", "items": JSON_TEXT}, ['{"m": "x"}'], [{"m": "x"}]),
        (
            {"type": "object", "additionalProperties": JSON_TEXT},
            {"a": '{"m": "x"}'},
            {"a": {"m": "x"}},
        ),
        ({"anyOf": [JSON_TEXT, {"type": "null"}]}, '{"m": "x"}', {"m": "x"}),
        (
            {"type": "object", "properties": {"cfg": {"anyOf": [JSON_TEXT, {"type": "null"}]}}},
            {"cfg": '{"m": "x"}'},
            {"cfg": {"m": "x"}},
        ),
    ],
)
def test_json_text_is_judged_decoded_wherever_it_is(
    prop: dict[str, Any], args: Any, judged: Any
) -> None:
    """In a list's items, a map's values, a union's branch, a nested model: decoded."""
    schema = {"type": "object", "properties": {"v": prop}}
    found = server_arguments(schema, {"v": args})
    assert found.problem is None and found.args == {"v": judged}


def test_a_key_the_schema_does_not_declare_is_a_problem() -> None:
    """``skip_checks`` beside a declared ``skipChecks`` (an alias): pydantic reads the
    field's own name too, so the default filled in for ``skipChecks`` would be judged
    while the server acts on ``skip_checks: true``. Where the object says what other
    keys are (``additionalProperties``), they are judged as given."""
    opts = {
        "type": "object",
        "properties": {
            "targetEnv": {"type": "string"},
            "skipChecks": {"type": "boolean", "default": False},
        },
    }
    schema = {"type": "object", "properties": {"opts": opts}}
    problem = server_arguments(schema, {"opts": {"targetEnv": "prod", "skip_checks": True}}).problem
    assert problem is not None and "'opts.skip_checks' is not in the tool's input schema" in problem
    assert server_arguments(schema, {"extra": 1}).problem is not None
    open_opts = {**opts, "additionalProperties": True}
    found = server_arguments(
        {"type": "object", "properties": {"opts": open_opts}}, {"opts": {"x": 1}}
    )
    assert found.problem is None and found.args == {"opts": {"x": 1, "skipChecks": False}}
    free = {"type": "object", "properties": {"data": {"type": "object"}}}
    assert server_arguments(free, {"data": {"any": "key"}}).problem is None
