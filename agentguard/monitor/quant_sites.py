"""What one call tells a quantifier: the values it mentions and whether its domain grows.

Pure functions of the compiled plan and the call, shared by the committed step and the
hypothetical ``peek``; the sites come from :func:`agentguard.semantics.variables.collect_sites`,
so the online domain is the offline one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.language import ast as A
from agentguard.monitor.plans import QuantPlan
from agentguard.semantics.domains import values_at_site
from agentguard.semantics.values import MISSING, call_field, flatten_values, freeze
from agentguard.trace.model import Call


def site_values(plan: QuantPlan, call: Call) -> list[Any]:
    """The values at the fields the body tests the variable against (list items for
    ``contains``, and a ``{"result": v}`` wrapper's content)."""
    out: list[Any] = []
    for tool, path, elements in plan.sites:
        if tool is not None and tool != call.name:
            continue
        out.extend(values_at_site(call, path, elements))
    return out


def domain_values(plan: QuantPlan, call: Call, sites: list[Any]) -> list[Any]:
    """The values this call brings into the quantifier's domain."""
    d = plan.domain
    if d is None:
        return sites
    if isinstance(d, A.ListLiteral):
        return []
    if d.tool is not None and d.tool != call.name:
        return []
    if d.extractor == "tools":
        return [call.name]
    if d.extractor == "args":
        v = call_field(call, d.path) if d.path else list(call.args.values())
    else:
        v = call_field(call, ("result", *d.path))
    return flatten_values([v])


def touched(
    plan: QuantPlan, fixed: Mapping[Any, Any] | None, call: Call
) -> dict[Any, tuple[Any, bool]]:
    """Values this call mentions: freeze(value) -> (value, enters the domain); with a
    ``fixed`` domain (a literal list), only its members."""
    sites = site_values(plan, call)
    domain = domain_values(plan, call, sites)
    out: dict[Any, tuple[Any, bool]] = {}
    for v in sites:
        if v is not MISSING:
            out.setdefault(freeze(v), (v, False))
    for v in domain:
        out[freeze(v)] = (v, True)
    if fixed is not None:
        out = {k: (v, True) for k, (v, _) in out.items() if k in fixed}
    return out


def may_grow(plan: QuantPlan, call: Call) -> bool:
    """Could the domain gain values from this call's result, still unknown?"""
    if call.has_result:
        return False
    d = plan.domain
    if isinstance(d, A.Domain):
        return d.extractor == "results" and (d.tool is None or d.tool == call.name)
    if d is None:  # the active domain includes the result fields the body tests
        return any(
            path[:1] == ("result",) and (tool is None or tool == call.name)
            for tool, path, _ in plan.sites
        )
    return False


def opaque_contains(plan: QuantPlan, call: Call) -> bool:
    """Does a `contains x` site of this call hold something other than a list?"""
    for tool, path, elements in plan.sites:
        if elements and (tool is None or tool == call.name):
            v = call_field(call, path)
            if v is not MISSING and not isinstance(v, (list, tuple)):
                return True
    return False
