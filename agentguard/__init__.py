"""agentguard: a runtime firewall and trace verifier for tool-calling LLM agents.

Write a procedure once as an AgentLTL spec, then enforce it online (``Firewall``,
``guard``), score traces offline (``verify_trace``), and measure prefix executability
(``agentguard.pec``) or benchmark agents (``agentguard.bench``).
"""

# No `from __future__ import annotations` here: it would bind `annotations` as a public
# name; private aliases keep helper imports out of the public namespace too (a test
# compares `__all__` with the module's namespace).
import importlib as _importlib
from pathlib import Path as _Path
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from agentguard import _checkout_finder
from agentguard._version import __version__
from agentguard.enforcement.decision import Action, Decision, RunStopped, Violation
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

# eager, because `agentguard.guard` is also a module: importing the module later would
# otherwise rebind the package attribute from the function to the module
from agentguard.guard import GuardOptions, guard
from agentguard.language import load_spec, parse_formula, parse_spec
from agentguard.language.ast import Constraint, Formula, Spec, ToolDecl
from agentguard.language.printer import format_formula, format_spec
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

if _TYPE_CHECKING:
    from agentguard.enforcement.firewall import Firewall, FirewallReport
    from agentguard.enforcement.log_anchor import HeadFile
    from agentguard.mining import MinedSpec, mine
    from agentguard.monitor import Monitor, Verdict, classify

# Imported from a source checkout (e.g. `python -m agentguard demo` run at the repo root,
# which puts ./agentguard first on sys.path), the adapters sit in ../integrations rather
# than in this folder; installs map them to agentguard.integrations. A finder for that one
# name lets the checkout resolve it the same way, and nothing else of the checkout
# (tests/, benchmarks/, examples/) becomes importable under `agentguard`.
_checkout_finder.install(_Path(__file__).resolve().parent)


# Heavier parts load on first use, so `import agentguard` stays cheap for offline scoring.
_LAZY = {
    "Firewall": "agentguard.enforcement.firewall",
    "FirewallReport": "agentguard.enforcement.firewall",
    "HeadFile": "agentguard.enforcement.log_anchor",
    "Monitor": "agentguard.monitor",
    "Verdict": "agentguard.monitor",
    "classify": "agentguard.monitor",
    "mine": "agentguard.mining",
    "MinedSpec": "agentguard.mining",
}


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentguard' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


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
