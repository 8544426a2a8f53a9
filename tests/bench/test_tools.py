"""The eight deterministic tools of Table 6."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard.bench.errors import BadParameterError
from agentguard.bench.tools import (
    TOOL_INFOS,
    TOOL_NAMES,
    ToolAList,
    Toolbox,
    ToolExpand,
    ToolIterations,
    make_tools,
    python_tools,
    tool_a,
    tool_b,
    tool_c,
    tool_d,
    tool_value,
)

ints = st.integers(min_value=-10_000, max_value=10_000)


@given(ints)
def test_tool_a_formula_and_range(i: int) -> None:
    """tool_a(i) = (3i + 5) mod 7 + 1, always in 1..7."""
    out = tool_a(i)["result"]
    assert out == (3 * i + 5) % 7 + 1
    assert 1 <= out <= 7


@given(ints, ints)
def test_tool_b_formula_and_range(i: int, j: int) -> None:
    """tool_b(i, j) = (ij + 11) mod 100, always in 0..99."""
    out = tool_b(i, j)["result"]
    assert out == (i * j + 11) % 100
    assert 0 <= out <= 99


@given(ints)
def test_tool_c_formula(x: int) -> None:
    """tool_c(x) = 3x + 1."""
    assert tool_c(x) == {"result": 3 * x + 1}


@given(st.lists(ints, max_size=12))
def test_tool_d_sums(numbers: list[int]) -> None:
    """tool_d(nums) is the sum of nums."""
    assert tool_d(numbers) == {"result": sum(numbers)}


@given(ints)
def test_tool_value_formula_and_range(n: int) -> None:
    """tool_value(n) = (13n + 3) mod 50, in 0..49."""
    out = tool_value(n)["result"]
    assert out == (13 * n + 3) % 50
    assert 0 <= out <= 49


@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=1, max_value=5))
def test_tool_a_list_formula(seed: int, d: int) -> None:
    """tool_a_list gives d + 2 items ((s(k+1)·7 + 13) mod 50) + 1, each in 1..50."""
    numbers = ToolAList(seed, d)(seed)["numbers"]
    assert numbers == [((seed * (k + 1) * 7 + 13) % 50) + 1 for k in range(d + 2)]
    assert all(1 <= n <= 50 for n in numbers)


def test_tool_a_list_paper_record() -> None:
    """Appendix B: seed 42 at D1 gives numbers [8, 2, 46]."""
    assert ToolAList(42, 1)(42) == {"numbers": [8, 2, 46]}


@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=1, max_value=5))
def test_tool_iterations_formula(seed: int, d: int) -> None:
    """tool_iterations(s) = (s mod 5) + d + 2, at least 3."""
    out = ToolIterations(seed, d)(seed)["result"]
    assert out == seed % 5 + d + 2
    assert out >= 3


@given(ints, st.integers(min_value=0, max_value=1000), st.integers(min_value=1, max_value=5))
def test_tool_expand_formula(node: int, seed: int, d: int) -> None:
    """tool_expand gives min(d, 3) children (ns + 7(k+1) + 3) mod 20d + 1."""
    children = ToolExpand(seed, d)(node)["children"]
    assert children == [(node * seed + 7 * (k + 1) + 3) % (20 * d) + 1 for k in range(min(d, 3))]


def test_results_are_json_serialisable() -> None:
    """Every tool result survives a JSON round trip unchanged."""
    box = Toolbox(42, 3)
    calls: dict[str, dict[str, Any]] = {
        "tool_a": {"i": 4},
        "tool_b": {"i": 3, "j": 7},
        "tool_c": {"x": 5},
        "tool_d": {"numbers": [1, 2]},
        "tool_a_list": {"seed": 42},
        "tool_iterations": {"seed": 42},
        "tool_expand": {"node": 9},
        "tool_value": {"node": 9},
    }
    for name, args in calls.items():
        result = box.call(name, args)
        assert json.loads(json.dumps(result)) == result


def test_same_input_same_output_across_instances() -> None:
    """Fresh tool objects with the same seed and difficulty agree (no hidden state)."""
    a, b = make_tools(7, 4), make_tools(7, 4)
    for _ in range(3):
        assert a["tool_expand"](node=5) == b["tool_expand"](node=5)


@pytest.mark.parametrize("bad", [True, "3", 2.5, None])
def test_non_integer_inputs_are_rejected(bad: object) -> None:
    """Non-integer arguments raise BadParameterError (integral floats are accepted)."""
    with pytest.raises(BadParameterError):
        tool_a(bad)  # type: ignore[arg-type]
    assert tool_a(3.0) == tool_a(3)  # type: ignore[arg-type]


def test_toolbox_rejects_wrong_argument_names() -> None:
    """Calling by name checks the argument names against the schema."""
    box = Toolbox(1, 1)
    with pytest.raises(BadParameterError, match="takes arguments"):
        box.call("tool_b", {"i": 1})
    with pytest.raises(BadParameterError, match="unknown tool"):
        box.call("tool_z", {})


def test_bad_difficulty_rejected() -> None:
    """Stateful tools only accept difficulties 1..5."""
    with pytest.raises(BadParameterError):
        ToolExpand(1, 6)


def test_tool_metadata_matches_signatures() -> None:
    """Each tool has a description and a JSON schema listing its arguments, in Table 6 order."""
    assert TOOL_NAMES == (
        "tool_a",
        "tool_b",
        "tool_c",
        "tool_d",
        "tool_a_list",
        "tool_iterations",
        "tool_expand",
        "tool_value",
    )
    schema = TOOL_INFOS["tool_d"].json_schema()
    assert schema["required"] == ["numbers"]
    assert schema["properties"]["numbers"]["items"] == {"type": "integer"}
    assert TOOL_INFOS["tool_b"].smolagents_inputs()["j"]["type"] == "integer"
    assert all(info.description for info in TOOL_INFOS.values())


def test_python_tools_wrap_in_smolagents() -> None:
    """python_tools() functions become smolagents tools with the typed schema."""
    smolagents = pytest.importorskip("smolagents")
    fns = {f.__name__: f for f in python_tools(42, 1)}
    wrapped = smolagents.tool(fns["tool_b"])
    assert wrapped.name == "tool_b"
    assert wrapped.inputs["j"]["type"] == "integer"
    assert wrapped(i=3, j=4) == {"result": 23}
    assert fns["tool_a_list"](seed=42) == {"numbers": [8, 2, 46]}


def test_python_tools_wrap_in_langchain() -> None:
    """python_tools() functions become LangChain StructuredTools."""
    tools = pytest.importorskip("langchain_core.tools")
    fns = {f.__name__: f for f in python_tools(42, 1)}
    wrapped = tools.StructuredTool.from_function(fns["tool_d"])
    assert wrapped.args["numbers"]["type"] == "array"
    assert wrapped.invoke({"numbers": [1, 2]}) == {"result": 3}


def test_python_tools_with_aliases() -> None:
    """Aliased tools keep the arithmetic under renamed tool and argument names."""
    aliases = {"verify_checksum": {"tool": "tool_a", "args": {"index": "i"}}}
    (fn,) = python_tools(1, 1, ["verify_checksum"], aliases=aliases)
    assert fn.__name__ == "verify_checksum"
    assert "index:" in (fn.__doc__ or "")
    assert fn(index=1) == tool_a(1)
