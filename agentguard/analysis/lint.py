"""``lint_spec``: every static finding about a spec, sorted by position."""

from __future__ import annotations

from agentguard.analysis.declarations import declaration_findings
from agentguard.analysis.findings import LintWarning
from agentguard.analysis.temporal import spec_findings
from agentguard.language import ast as A
from agentguard.semantics.predicates import values_match
from agentguard.semantics.registry import Matcher, Registry, default_registry


def lint_spec(
    spec: A.Spec, *, registry: Registry | None = None, match: Matcher | None = None
) -> tuple[LintWarning, ...]:
    """Declaration findings (arguments, types) and temporal ones (satisfiability, blocking).

    ``match`` is the result matcher of ``CalledWithResult`` (the registry's, by default),
    the same the monitor would use, so the automata explored are the monitor's own.
    """
    reg = registry or default_registry
    m = match or reg.matcher or values_match
    found = [*declaration_findings(spec), *spec_findings(spec, m)]
    return tuple(sorted(found, key=lambda w: (w.source, w.line, w.column, w.kind)))
