"""From a formula's syntax tree to a monitoring plan of machines.

* Quantifier-free formulas become one :class:`Machine` (so a constraint's verdicts are
  exact and earliest as a whole, not per subformula), built by
  :mod:`agentguard.monitor.builder` (trace predicates anchored, past operators as
  registers).
* ``forall``/``exists`` at the top of a constraint become parametric instances of one
  shared body machine (see :mod:`agentguard.monitor.quantified`).
* What cannot be followed incrementally (``Predicate(f)``, user extractors, quantifiers
  under temporal operators, order comparisons on quantified variables...) falls back to
  the offline evaluator at the end of the run: PENDING until then, never a wrong verdict.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from typing_extensions import assert_never

from agentguard.language import ast as A
from agentguard.language.walk import children, is_formula, subformulas
from agentguard.monitor.atoms import Unsupported, uses_metrics
from agentguard.monitor.builder import build_machine
from agentguard.monitor.decompose import split_conjunction
from agentguard.monitor.plans import (
    AutomatonPlan,
    BoolPlan,
    FallbackPlan,
    Plan,
    QuantPlan,
    Site,
)
from agentguard.semantics.predicates import ground
from agentguard.semantics.registry import Matcher
from agentguard.semantics.values import MISSING, flatten_values, get_path
from agentguard.semantics.variables import collect_sites, free_variables
from agentguard.semantics.vectors import TEMPORAL


def compile_plan(formula: A.Formula, match: Matcher) -> Plan:
    """The monitoring plan of one constraint's formula."""
    try:
        return _top(formula, match)
    except Unsupported as exc:
        return FallbackPlan(formula, str(exc))
    except RecursionError:
        return FallbackPlan(formula, "too deeply nested to unroll")


def _has_quantifier(f: A.Formula) -> bool:
    return any(isinstance(g, A.Quantified) for g in subformulas(f))


def _top(f: A.Formula, match: Matcher) -> Plan:
    if not _has_quantifier(f):
        return split_conjunction(f, lambda g: build_machine(g, None, match))
    if isinstance(f, A.Quantified):
        return _quantified(f, match)
    if isinstance(f, A.Not):
        return BoolPlan("not", (_top(f.operand, match),))
    if isinstance(f, A.And):
        return BoolPlan("and", (_top(f.left, match), _top(f.right, match)))
    if isinstance(f, A.Or):
        return BoolPlan("or", (_top(f.left, match), _top(f.right, match)))
    if isinstance(f, A.Implies):
        return BoolPlan("or", (BoolPlan("not", (_top(f.left, match),)), _top(f.right, match)))
    if isinstance(f, A.Iff):
        a, b = _top(f.left, match), _top(f.right, match)
        na, nb = BoolPlan("not", (a,)), BoolPlan("not", (b,))
        return BoolPlan("or", (BoolPlan("and", (a, b)), BoolPlan("and", (na, nb))))
    if isinstance(f, TEMPORAL):
        raise Unsupported("a quantifier under a temporal operator")
    if isinstance(f, (A.Const, A.Event, A.Compare, A.TracePredicate, A.UserPredicate)):
        raise TypeError(f"{type(f).__name__} holds no quantifier")  # _has_quantifier said so
    assert_never(f)


def _quantified(f: A.Quantified, match: Matcher) -> Plan:
    if _has_quantifier(f.body):
        raise Unsupported("nested quantifiers")
    d = f.domain
    if _names_tool(f.body, f.var):
        return _instantiated(f, match)
    if isinstance(d, A.Domain) and d.extractor not in ("args", "results", "tools"):
        raise Unsupported(f"user domain extractor {d.extractor!r}")
    if isinstance(d, A.ListLiteral) and (free_variables(d) or uses_metrics(d)):
        raise Unsupported("a domain list with variables or metrics")
    machine = build_machine(f.body, f.var, match)
    sites: list[Site] = []
    collect_sites(f.body, f.var, sites)
    return QuantPlan(f.kind, f.var, d, machine, tuple(sites), f)


def _names_tool(f: Any, var: str) -> bool:
    """Does ``var`` stand in a trace predicate's tool position somewhere in ``f``?"""
    if isinstance(f, A.TracePredicate):
        kinds = A.TRACE_PREDICATES[f.name].split()
        for kind, arg in zip(kinds, f.args, strict=False):
            tools = arg if kind == "[t]" else (arg,) if kind == "t" else ()
            if any(isinstance(t, A.Var) and t.name == var for t in tools):
                return True
        return False
    return is_formula(f) and any(_names_tool(c, var) for c in children(f))


def _instantiated(f: A.Quantified, match: Matcher) -> Plan:
    """``forall x in [a, b]: Called(x)`` as ``Called(a) & Called(b)``: a variable naming a
    tool is substituted per value (Appendix A.2.4), so the domain must be known now."""
    d = f.domain
    if not isinstance(d, A.ListLiteral) or not all(isinstance(x, A.Literal) for x in d.items):
        raise Unsupported("a variable naming a tool over a domain read from the trace")
    values = flatten_values([x.value for x in d.items if isinstance(x, A.Literal)])
    forall = f.kind == "forall"
    if not values:
        return AutomatonPlan(build_machine(A.Const(forall), None, match))
    plans = [_top(_substitute(f.body, f.var, v), match) for v in values]
    out = plans[0]
    for p in plans[1:]:
        out = BoolPlan("and" if forall else "or", (out, p))
    return out


def _substitute(node: Any, var: str, value: Any) -> Any:
    """``node[value/var]``: terms become literals, tool positions tool names."""
    if isinstance(node, A.Var):
        if node.name != var:
            return node
        got = get_path(value, node.path)
        if got is MISSING:
            raise Unsupported("a path into a quantified value that does not exist")
        return A.Literal(got, node.span)
    if isinstance(node, A.TracePredicate):
        grounded = ground(node, lambda t: value if isinstance(t, A.Var) and t.name == var else t)
        args = tuple(_substitute(a, var, value) for a in grounded.args)
        return A.TracePredicate(node.name, args, node.span)
    if isinstance(node, tuple):
        return tuple(_substitute(x, var, value) for x in node)
    if isinstance(node, (A.MapLiteral, A.ListLiteral, A.Test, A.Event, A.Compare)) or (
        is_formula(node) and not isinstance(node, A.Const)
    ):
        changes = {
            f.name: _substitute(getattr(node, f.name), var, value)
            for f in dataclasses.fields(node)
            if f.init and f.name != "span"
        }
        return dataclasses.replace(node, **changes)
    return node
