"""agentguard: a runtime firewall and trace verifier for tool-calling LLM agents.

Write a procedure once as an AgentLTL spec, then enforce it online (``Firewall``,
``guard``), score traces offline (``verify_trace``), and measure prefix executability
(``agentguard.pec``) or benchmark agents (``agentguard.bench``).
"""

# No `from __future__ import annotations` here: it would bind `annotations` as a public
# name; private aliases keep helper imports out of the public namespace too (a test
# compares `__all__` with the module's namespace).
#
# Only the standard library is imported here: every public name but the version is bound
# on first use (PEP 562), so `import agentguard` costs a few
# milliseconds, and a command that needs little (`agentguard mcp-proxy` starts its server
# before anything else) does not wait for numpy, the parser and the monitor first.
import importlib as _importlib
import sys as _sys
import types as _types
from pathlib import Path as _Path
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from agentguard import _checkout_finder
from agentguard._version import __version__

if _TYPE_CHECKING:
    from agentguard.enforcement.decision import Action, Decision, RunStopped, Violation
    from agentguard.enforcement.firewall import Firewall, FirewallReport
    from agentguard.enforcement.log_anchor import HeadFile
    from agentguard.enforcement.options import FirewallOptions
    from agentguard.errors import (
        AgentGuardError,
        CallArgumentsError,
        EvaluationError,
        MissingExtraError,
        PredicateError,
        SpecError,
        SpecImportError,
        SpecSemanticError,
        SpecSyntaxError,
        TraceError,
        TraceRecordError,
    )
    from agentguard.guard import GuardOptions, guard
    from agentguard.language import load_spec, parse_formula, parse_spec
    from agentguard.language.ast import Constraint, Formula, Spec, ToolDecl
    from agentguard.language.printer import format_formula, format_spec
    from agentguard.mining import MinedSpec, mine
    from agentguard.monitor import Monitor, Verdict, classify
    from agentguard.scoring import ComplianceReport, ConstraintResult, verify_trace, verify_traces
    from agentguard.scoring.inputs import SpecLike, TraceLike
    from agentguard.semantics.evaluator import holds
    from agentguard.semantics.registry import (
        Registry,
        default_registry,
        predicate,
        register_context_predicate,
        register_extractor,
        register_predicate,
    )
    from agentguard.severity import Severity, SeverityKind
    from agentguard.trace import UNKNOWN, Call, Trace, load_traces

# Imported from a source checkout (e.g. `python -m agentguard demo` run at the repo root,
# which puts ./agentguard first on sys.path), the adapters sit in ../integrations rather
# than in this folder; installs map them to agentguard.integrations. A finder for that one
# name lets the checkout resolve it the same way, and nothing else of the checkout
# (tests/, benchmarks/, examples/) becomes importable under `agentguard`.
_checkout_finder.install(_Path(__file__).resolve().parent)


# The module of each name bound on first use (the TYPE_CHECKING imports above, for the
# type checker); a test resolves every one.
_LAZY = {
    **dict.fromkeys(
        (
            "AgentGuardError",
            "CallArgumentsError",
            "EvaluationError",
            "MissingExtraError",
            "PredicateError",
            "SpecError",
            "SpecImportError",
            "SpecSemanticError",
            "SpecSyntaxError",
            "TraceError",
            "TraceRecordError",
        ),
        "errors",
    ),
    **dict.fromkeys(("Action", "Decision", "RunStopped", "Violation"), "enforcement.decision"),
    **dict.fromkeys(("Firewall", "FirewallReport"), "enforcement.firewall"),
    "HeadFile": "enforcement.log_anchor",
    "FirewallOptions": "enforcement.options",
    **dict.fromkeys(("GuardOptions", "guard"), "guard"),
    **dict.fromkeys(("load_spec", "parse_formula", "parse_spec"), "language"),
    **dict.fromkeys(("Constraint", "Formula", "Spec", "ToolDecl"), "language.ast"),
    **dict.fromkeys(("format_formula", "format_spec"), "language.printer"),
    **dict.fromkeys(("MinedSpec", "mine"), "mining"),
    **dict.fromkeys(("Monitor", "Verdict", "classify"), "monitor"),
    **dict.fromkeys(
        ("ComplianceReport", "ConstraintResult", "verify_trace", "verify_traces"), "scoring"
    ),
    **dict.fromkeys(("SpecLike", "TraceLike"), "scoring.inputs"),
    "holds": "semantics.evaluator",
    **dict.fromkeys(
        (
            "Registry",
            "default_registry",
            "predicate",
            "register_context_predicate",
            "register_extractor",
            "register_predicate",
        ),
        "semantics.registry",
    ),
    **dict.fromkeys(("Severity", "SeverityKind"), "severity"),
    **dict.fromkeys(("UNKNOWN", "Call", "Trace", "load_traces"), "trace"),
}


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentguard' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"agentguard.{module}"), name)
    globals()[name] = value
    return value


class _Package(_types.ModuleType):
    """The package's module type: `agentguard.guard` names the function, also once its
    module is imported (the import system binds a submodule on its package under the
    same name; here the function it defines is bound instead, as the eager
    `from agentguard.guard import guard` of earlier versions left it)."""

    def __setattr__(self, name: str, value: _Any) -> None:
        if name == "guard" and isinstance(value, _types.ModuleType):
            value = value.guard
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


__all__ = [
    "UNKNOWN",
    "Action",
    "AgentGuardError",
    "Call",
    "CallArgumentsError",
    "ComplianceReport",
    "Constraint",
    "ConstraintResult",
    "Decision",
    "EvaluationError",
    "Firewall",
    "FirewallOptions",
    "FirewallReport",
    "Formula",
    "GuardOptions",
    "HeadFile",
    "MinedSpec",
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
    "SpecLike",
    "SpecSemanticError",
    "SpecSyntaxError",
    "ToolDecl",
    "Trace",
    "TraceError",
    "TraceLike",
    "TraceRecordError",
    "Verdict",
    "Violation",
    "__version__",
    "classify",
    "default_registry",
    "format_formula",
    "format_spec",
    "guard",
    "holds",
    "load_spec",
    "load_traces",
    "mine",
    "parse_formula",
    "parse_spec",
    "predicate",
    "register_context_predicate",
    "register_extractor",
    "register_predicate",
    "verify_trace",
    "verify_traces",
]
