"""agentguard: a runtime firewall and trace verifier for tool-calling LLM agents.

Write a procedure once as an AgentLTL spec, then enforce it online (``Firewall``,
``guard``), score traces offline (``verify_trace``), and measure prefix executability
(``agentguard.pec``) or benchmark agents (``agentguard.bench``).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard.enforcement.decision import Action, Decision, Severity, SeverityKind, Violation
from agentguard.errors import (
    AgentGuardError,
    EvaluationError,
    MissingExtraError,
    PredicateError,
    RunStopped,
    SpecError,
    SpecImportError,
    SpecSemanticError,
    SpecSyntaxError,
    TraceError,
    TraceRecordError,
)

# eager, because `agentguard.guard` is also a module: importing the module later would
# otherwise rebind the package attribute from the function to the module
from agentguard.guard import guard
from agentguard.language import load_spec, parse_formula, parse_spec
from agentguard.language.ast import Constraint, Formula, Spec, ToolDecl
from agentguard.language.printer import format_formula, format_spec
from agentguard.scoring import ComplianceReport, ConstraintResult, verify_trace, verify_traces
from agentguard.semantics.evaluator import holds
from agentguard.semantics.registry import (
    Registry,
    default_registry,
    predicate,
    register_context_predicate,
    register_extractor,
    register_predicate,
)
from agentguard.trace import UNKNOWN, Call, Trace, load_traces

if TYPE_CHECKING:
    from agentguard.enforcement.firewall import Firewall, FirewallReport
    from agentguard.monitor import Monitor, Verdict, classify

__version__ = "0.1.0"

# Imported from a source checkout (e.g. `python -m agentguard demo` run at the repo root,
# which puts ./agentguard first on sys.path), the adapters sit in ../integrations rather
# than in this folder; installs map them to agentguard.integrations. Let the checkout
# resolve them the same way.
_here = Path(__file__).resolve().parent
if (
    not (_here / "integrations").is_dir()
    and (_here.parent / "integrations" / "__init__.py").is_file()
):
    __path__.append(str(_here.parent))


# Heavier parts load on first use, so `import agentguard` stays cheap for offline scoring.
_LAZY = {
    "Firewall": "agentguard.enforcement.firewall",
    "FirewallReport": "agentguard.enforcement.firewall",
    "Monitor": "agentguard.monitor",
    "Verdict": "agentguard.monitor",
    "classify": "agentguard.monitor",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentguard' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
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
    "classify",
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
]
