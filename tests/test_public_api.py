"""The curated public API is pinned: changing it is a deliberate act."""

from __future__ import annotations

from types import ModuleType

import agentguard


def _public_namespace() -> set[str]:
    """Names a user sees on the package: not private, not a submodule."""
    for name in agentguard.__all__:  # resolve the lazy ones first
        getattr(agentguard, name)
    return {
        name
        for name, value in vars(agentguard).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    } | {"__version__"}


def test_all_is_the_public_namespace() -> None:
    """__all__ lists every public name of the package and nothing else, sorted, each once."""
    exported = list(agentguard.__all__)
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), n))  # ruff's RUF022 order
    assert len(set(exported)) == len(exported)
    assert set(exported) == _public_namespace()


def test_every_name_resolves() -> None:
    """Every exported name is importable (lazy ones included)."""
    for name in agentguard.__all__:
        assert getattr(agentguard, name) is not None


def test_errors_share_one_root() -> None:
    """Every error type derives from AgentGuardError, with builtin bases where they fit."""
    for name in (
        "SpecSyntaxError",
        "SpecSemanticError",
        "TraceRecordError",
        "PredicateError",
        "MissingExtraError",
        "CallArgumentsError",
    ):
        assert issubclass(getattr(agentguard, name), agentguard.AgentGuardError)
    assert issubclass(agentguard.SpecSyntaxError, ValueError)
    assert issubclass(agentguard.CallArgumentsError, TypeError)
    assert issubclass(agentguard.RunStopped, BaseException) and not issubclass(
        agentguard.RunStopped, Exception
    )


def test_guard_stays_the_function_after_its_module_is_imported() -> None:
    """Importing agentguard.guard's module (as the adapters do) does not shadow the function."""
    import importlib

    importlib.import_module("agentguard.guard")
    importlib.import_module("agentguard.integrations.smolagents")
    assert callable(agentguard.guard)
    assert agentguard.guard.__module__ == "agentguard.guard"
