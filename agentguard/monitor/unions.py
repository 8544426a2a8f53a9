"""Which calls an end-of-run constraint can forget: those that add nothing to a union.

A fallback node (monitor/fallback.py) keeps every call and evaluates its formula when the
run ends, so its memory grows with the run. Some formulas read the trace only through
domains that are *unions over calls*: ``entities(final_answer.answer)`` is the union of
the entities each answer cites, ``outputs`` the union of what each read showed. For such a
formula, a trace and the same trace without a call that adds nothing new to any of those
unions have the same truth. ``forall e in entities(final_answer.answer): e in outputs``
(the paper's grounding constraint, ``specs/code_qa.ltl``) then keeps only the calls that
showed something new, which stops growing once a loop repeats itself.

Exact by construction: the node keeps its first call (an empty trace has its own
semantics) and every call that adds a key; evaluation runs the ordinary evaluator on what
was kept. Only the built-in ``entities`` and ``outputs`` extractors qualify (a user's
extractor may read anything); any event, temporal operator, predicate, field or metric in
the formula reads positions, and disqualifies it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeAlias

from agentguard.language import ast as A
from agentguard.semantics import builtins
from agentguard.semantics.grounding import call_entities, call_outputs, entity_path
from agentguard.semantics.registry import Registry
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import Call

CallKeys: TypeAlias = Callable[[Call], Iterable[Hashable]]
"""What one call adds to the union a domain is: the keys whose set decides the domain."""

READ_TOOLS = ("read_file",)  # what ``outputs`` reads (semantics/grounding.seen_entities)


def union_keys(formula: A.Formula, registry: Registry) -> CallKeys | None:
    """The keys a call adds to the unions ``formula`` reads, or None when the formula
    reads the trace any other way (then every call must be kept)."""
    domains: list[A.Domain] = []
    if not _only_domains(formula, domains):
        return None
    parts = [_keys_of(d, registry) for d in dict.fromkeys(domains)]
    if not parts or any(p is None for p in parts):
        return None
    keyed = [p for p in parts if p is not None]

    def keys(call: Call) -> list[Hashable]:
        return [(i, k) for i, part in enumerate(keyed) for k in part(call)]

    return keys


def _keys_of(d: A.Domain, registry: Registry) -> CallKeys | None:
    fn = registry.extractors.get(d.extractor)
    if d.extra or fn is None or fn is not builtins.EXTRACTORS.get(d.extractor):
        return None  # a user's extractor, or a built-in replaced by one
    if d.extractor == "entities":
        tool, parts = d.tool or FINAL_TOOL, entity_path(d.path or ("answer",))
        return lambda call: call_entities(call, parts) if call.name == tool else ()
    if d.extractor == "outputs":
        return _output_keys
    return None  # ``ungrounded`` subtracts: not a union


def _output_keys(call: Call) -> list[Hashable]:
    if call.name not in READ_TOOLS:
        return []
    paths, sigs, idents = call_outputs(call)
    return [
        *(("p", p) for p in paths),
        *(("s", s.lower()) for s in sigs),
        *(("i", i.lower()) for i in idents | sigs),
    ]


def _only_domains(f: Any, found: list[A.Domain]) -> bool:
    """True if ``f`` reads the trace only through the domains it appends to ``found``."""
    if isinstance(f, A.Const):
        return True
    if isinstance(f, A.Not):
        return _only_domains(f.operand, found)
    if isinstance(f, (A.And, A.Or, A.Implies, A.Iff)):
        return _only_domains(f.left, found) and _only_domains(f.right, found)
    if isinstance(f, A.Quantified):
        return f.domain is not None and _term(f.domain, found) and _only_domains(f.body, found)
    if isinstance(f, A.Compare):
        return _term(f.left, found) and _term(f.right, found)
    return False  # events, temporal operators, trace and user predicates read positions


def _term(t: Any, found: list[A.Domain]) -> bool:
    if isinstance(t, (A.Literal, A.Regex, A.Var)):
        return True
    if isinstance(t, A.ListLiteral):
        return all(_term(x, found) for x in t.items)
    if isinstance(t, A.MapLiteral):
        return all(_term(x, found) for _, x in t.items)
    if isinstance(t, A.Domain):
        found.append(t)
        return True
    return False  # fields and metrics read a position or the record; sources the trace


__all__ = ["CallKeys", "union_keys"]
