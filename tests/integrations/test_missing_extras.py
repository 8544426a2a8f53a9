"""Without a framework installed, the adapters say which extra to install."""

from __future__ import annotations

import importlib
import sys

import pytest

from agentguard.errors import MissingExtraError

ADAPTERS = {
    "agentguard.integrations.langchain": ("langchain_core.messages", "langchain"),
    "agentguard.testing.langchain_models": ("langchain_core.messages", "langchain"),
    "agentguard.testing.smolagents_models": ("smolagents.models", "smolagents"),
    "agentguard.integrations.mcp": ("mcp", "mcp"),
    "agentguard.integrations.openai_agents": ("agents", "openai-agents"),
    "agentguard.testing.openai_agents_models": ("agents", "openai-agents"),
}


@pytest.mark.parametrize("module", list(ADAPTERS))
def test_importing_an_adapter_without_its_framework(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Importing the adapter raises MissingExtraError naming agentguard[extra]."""
    blocked, extra = ADAPTERS[module]
    monkeypatch.setitem(sys.modules, blocked, None)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(MissingExtraError, match=rf"pip install 'agentguard\[{extra}\]'"):
        importlib.import_module(module)


def test_guarding_a_smolagents_agent_without_smolagents(monkeypatch: pytest.MonkeyPatch) -> None:
    """The smolagents adapter imports the framework lazily and names the extra."""
    adapter = importlib.import_module("agentguard.integrations.smolagents")

    monkeypatch.setitem(sys.modules, "smolagents", None)
    with pytest.raises(MissingExtraError, match="agentguard\\[smolagents\\]"):
        adapter.guard_smolagents(object(), "x.ltl")


def test_missing_extra_is_an_import_error() -> None:
    """MissingExtraError is an ImportError, so `except ImportError` still works."""
    assert issubclass(MissingExtraError, ImportError)
