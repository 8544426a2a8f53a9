"""``lint_spec``: every static finding about a spec, sorted by position."""

from __future__ import annotations

from agentguard.analysis.declarations import declaration_findings
from agentguard.analysis.findings import LintWarning
from agentguard.analysis.temporal import spec_findings
from agentguard.analysis.tool_names import tool_name_findings
from agentguard.enforcement.agent_tools import AgentTools
from agentguard.language import ast as A
from agentguard.semantics.predicates import values_match
from agentguard.semantics.registry import Matcher, Registry, default_registry


def lint_spec(
    spec: A.Spec,
    *,
    registry: Registry | None = None,
    match: Matcher | None = None,
    tools: AgentTools | None = None,
) -> tuple[LintWarning, ...]:
    """Tool names (misspelt ones), declaration findings (arguments, types) and temporal
    ones (satisfiability, blocking).

    ``match`` is the result matcher of ``CalledWithResult`` (the registry's, by default),
    the same the monitor would use, so the automata explored are the monitor's own.
    ``tools`` are the agent's tools when known (name -> JSON Schema of the arguments, or
    None), as ``Firewall(agent_tools=...)`` takes them: every name outside them is
    ``unknown-tool``, and the declarations are compared with their schemas.
    """
    reg = registry or default_registry
    m = match or reg.matcher or values_match
    found = [
        *tool_name_findings(spec, tools),
        *declaration_findings(spec),
        *spec_findings(spec, m),
    ]
    return tuple(sorted(found, key=lambda w: (w.source, w.line, w.column, w.kind)))
