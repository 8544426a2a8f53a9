"""The curated public API is pinned: changing it is a deliberate act."""

from __future__ import annotations

import agentguard

EXPECTED = frozenset(
    [
        "UNKNOWN",
        "Action",
        "AgentGuardError",
        "Call",
        "ComplianceReport",
        "Constraint",
        "ConstraintResult",
        "Decision",
        "EvaluationError",
        "Firewall",
        "FirewallReport",
        "Formula",
        "MissingExtraError",
        "Monitor",
        "PredicateError",
        "Registry",
        "RunStopped",
        "Severity",
        "SeverityKind",
        "Spec",
        "SpecError",
        "SpecImportError",
        "SpecSemanticError",
        "SpecSyntaxError",
        "ToolDecl",
        "Trace",
        "TraceError",
        "TraceRecordError",
        "Verdict",
        "Violation",
        "__version__",
        "default_registry",
        "format_formula",
        "format_spec",
        "guard",
        "holds",
        "load_spec",
        "load_traces",
        "parse_formula",
        "parse_spec",
        "predicate",
        "register_context_predicate",
        "register_extractor",
        "register_predicate",
        "verify_trace",
        "verify_traces",
        "classify",
    ]
)


def test_all_is_pinned() -> None:
    """__all__ is exactly the curated set of names, each listed once (ruff keeps it sorted)."""
    assert set(agentguard.__all__) == EXPECTED
    assert len(agentguard.__all__) == len(EXPECTED)


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
    ):
        assert issubclass(getattr(agentguard, name), agentguard.AgentGuardError)
    assert issubclass(agentguard.SpecSyntaxError, ValueError)
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
