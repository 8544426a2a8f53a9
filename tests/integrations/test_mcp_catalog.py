"""The MCP gateway's view of the server's tools: whole listings replace it, a client's
page updates the tools it names, a name listed twice with different schemas is refused."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("mcp")
import mcp_types as types
from agentguard.integrations._mcp_upstream import ToolCatalog


def _tool(name: str, **props: Any) -> types.Tool:
    return types.Tool(name=name, input_schema={"type": "object", "properties": props})


def test_a_whole_listing_replaces_and_reports_what_changed() -> None:
    """New and changed tools are returned (to be declared); a tool gone is unlisted."""
    catalog = ToolCatalog()
    assert [t.name for t in catalog.replace([_tool("a"), _tool("b")])] == ["a", "b"]
    changed = catalog.replace([_tool("a"), _tool("c", x={"type": "string"})])
    assert [t.name for t in changed] == ["c"]
    assert catalog.problem("a") is None
    assert "does not list a tool 'b'" in (catalog.problem("b") or "")


def test_a_page_updates_only_the_tools_it_names() -> None:
    catalog = ToolCatalog()
    catalog.replace([_tool("a"), _tool("b")])
    changed = catalog.merge([_tool("b", force={"type": "boolean", "default": True})])
    assert [t.name for t in changed] == ["b"]
    assert catalog.get("a") is not None
    assert "force" in (catalog.get("b") or _tool("x")).input_schema["properties"]


def test_a_name_listed_twice_with_different_schemas_is_ambiguous() -> None:
    """Which of the two the server runs is not known: calls to it are refused; the same
    schema listed twice is no ambiguity."""
    catalog = ToolCatalog()
    catalog.replace([_tool("a"), _tool("a", force={"default": True}), _tool("b"), _tool("b")])
    assert "more than once" in (catalog.problem("a") or "")
    assert catalog.problem("b") is None
    catalog.replace([_tool("a")])
    assert catalog.problem("a") is None
