"""JSON Schema ``pattern`` through the gateway: a real server's tool schemas (the ops
server, official SDK) carry patterns; the proxy checks them, in linear time, before a
call reaches the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from agentguard.integrations._mcp_patterns import pattern_problem

from tests.integrations.mcp_servers.harness import HERE, OPS, Run, text, through_proxy

SPEC = HERE / "ops.ltl"


def _run(tmp_path: Path) -> Run:
    return Run(tmp_path, SPEC, OPS)


def test_a_string_breaking_its_pattern_never_reaches_the_server(tmp_path: Path) -> None:
    """``tag(label)`` runs with a label its schema's pattern takes; one it does not take is
    refused by the proxy, naming the argument and the pattern, and the log has it unrun."""
    run = _run(tmp_path)

    async def scenario() -> list[Any]:
        async with through_proxy(run) as client:
            return [
                await client.call_tool("tag", {"label": "release-2"}),
                await client.call_tool("tag", {"label": "Release 2; rm -rf /"}),
            ]

    good, bad = anyio.run(scenario)
    assert text(good) == "tagged release-2"
    assert bad.is_error
    assert "argument 'label'" in text(bad) and "^[a-z][a-z0-9-]*$" in text(bad)
    assert run.reached_server() == [{"tool": "tag", "args": {"label": "release-2"}}]
    (report,) = run.reports()
    assert report["tool_sequence"] == ["tag"]  # the refused call is not in the trace


def test_a_backtracking_trap_is_matched_in_linear_time(tmp_path: Path) -> None:
    """``^(a+)+$`` against 50,000 a's and a b (hours for a backtracking engine) is
    refused at once; the a's alone pass and run."""
    run = _run(tmp_path)
    trap = "a" * 50_000 + "b"

    async def scenario() -> list[Any]:
        async with through_proxy(run) as client:
            with anyio.fail_after(60):  # a hang guard, not a timing
                return [
                    await client.call_tool("match_runs", {"runs": trap}),
                    await client.call_tool("match_runs", {"runs": "a" * 50_000}),
                ]

    refused, matched = anyio.run(scenario)
    assert refused.is_error and "does not match the pattern" in text(refused)
    assert text(matched) == "matched 50000"
    assert [c["tool"] for c in run.reached_server()] == ["match_runs"]


def test_a_pattern_that_cannot_be_checked_refuses_the_call_and_the_proxy_serves_on(
    tmp_path: Path,
) -> None:
    """A schema pattern RE2 cannot take (look-ahead) cannot vouch for an argument: the
    call is refused with the reason, never forwarded unchecked; other calls go on."""
    run = _run(tmp_path)

    async def scenario() -> list[Any]:
        async with through_proxy(run) as client:
            return [
                await client.call_tool("rename", {"name": "bob"}),
                await client.call_tool("status", {}),
            ]

    refused, status = anyio.run(scenario)
    assert refused.is_error
    assert "cannot be checked safely" in text(refused) and "look-around" in text(refused)
    assert "^(?!admin).*$" in text(refused)
    assert text(status) == "ok"
    assert [c["tool"] for c in run.reached_server()] == ["status"]


def test_no_schema_checks_leaves_patterns_to_the_server(tmp_path: Path) -> None:
    """With ``--no-schema-checks`` the proxy checks no pattern: the server's own
    validation answers, and a pattern only its schema carries is not enforced."""
    run = _run(tmp_path)

    async def scenario() -> list[Any]:
        async with through_proxy(run, "--no-schema-checks") as client:
            return [
                await client.call_tool("tag", {"label": "Not Valid"}),
                await client.call_tool("rename", {"name": "bob"}),
            ]

    bad_tag, renamed = anyio.run(scenario)
    assert bad_tag.is_error and "agentguard" not in text(bad_tag)  # the server's own error
    assert text(renamed) == "renamed to bob"


@pytest.mark.parametrize(
    ("args", "found"),
    [
        ({"label": 7}, None),  # not a string: pattern does not apply (type checks do)
        ({"other": "X"}, None),  # no pattern for it
        ({"label": "ok-x"}, None),
        ({"label": "NO\nx"}, None),  # matched anywhere in the text (JSON Schema)
        ({"label": "x\n"}, "does not match"),  # $ is the text's end (ECMA), not before a \n
        ({"label": "NO"}, "does not match"),
    ],
)
def test_pattern_problem_reads_json_schema(args: dict[str, Any], found: str | None) -> None:
    """Only string values of properties with a pattern are matched, unanchored."""
    schema = {"properties": {"label": {"type": "string", "pattern": "[a-z]$"}, "other": {}}}
    problem = pattern_problem(schema, args)
    assert (problem is None) if found is None else (found in str(problem))


def test_pattern_problem_on_schemas_without_patterns() -> None:
    """No schema, no properties, or a pattern that is not text: nothing to check."""
    assert pattern_problem(None, {"a": "x"}) is None
    assert pattern_problem({"properties": []}, {"a": "x"}) is None
    assert pattern_problem({"properties": {"a": {"pattern": 5}}}, {"a": "x"}) is None
