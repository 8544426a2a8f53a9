"""The values a quantifier ranges over on a trace: its active domain (the values at its
sites) or the domain an extractor names.

Computed once per set of sites and shared by every constraint over the same fields (the
evaluator caches it), so fifty constraints over one tool pair read the trace once.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Any

from agentguard.errors import PredicateError
from agentguard.language import ast as A
from agentguard.semantics.registry import Registry
from agentguard.semantics.trace_index import TraceIndex
from agentguard.semantics.values import MISSING, call_field, flatten_values, freeze, unwrap_result
from agentguard.trace.model import Call

Site = tuple["str | None", "tuple[str | int, ...]", bool]


def values_at_site(call: Call, path: Sequence[str | int], elements: bool) -> list[Any]:
    """The domain values one call holds at a site: the field's value (its items for an
    element-wise ``contains`` site), and a ``{"result": v}`` wrapper's content too; the
    online monitor reads its sites with this same function."""
    v = call_field(call, path)
    if v is MISSING:
        return []
    out = list(v) if elements and isinstance(v, (list, tuple)) else [v]
    if tuple(path) == ("result",):
        inner = unwrap_result(v)
        if inner is not MISSING:
            out.append(inner)
    return out


def active_domain(idx: TraceIndex, sites: Sequence[Site]) -> list[Any]:
    """The active domain over ``sites``: every value at those fields, first-seen order."""
    calls = idx.trace.calls
    values: list[Any] = []
    for tool, path, elements in sites:
        chosen = calls if tool is None else [calls[i] for i in idx.positions.get(tool, ())]
        for c in chosen:
            values.extend(values_at_site(c, path, elements))
    seen: set[Any] = set()
    out = []
    for v in values:
        key = freeze(v)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def extract_domain(idx: TraceIndex, registry: Registry, d: A.Domain) -> list[Any]:
    """The elements of ``args(...)``, ``results(...)``, ``tools()`` or a user extractor's
    domain on the trace (deduplicated, first-seen order; a user extractor may return a
    membership container instead)."""
    calls = idx.trace.calls
    if d.extractor in ("args", "results"):
        chosen = calls if d.tool is None else [calls[i] for i in idx.positions.get(d.tool, ())]
        if d.extractor == "args":
            return flatten_values(
                call_field(c, d.path) if d.path else list(c.args.values()) for c in chosen
            )
        return flatten_values(call_field(c, ("result", *d.path)) for c in chosen)
    if d.extractor == "tools":
        return list(dict.fromkeys(idx.names))
    fn = registry.extractors.get(d.extractor)
    if fn is None:
        raise PredicateError(f"domain extractor {d.extractor!r} is declared but not registered")
    try:
        found = fn(idx.trace, d.tool, d.path, *d.extra)
        if isinstance(found, Container) and not isinstance(
            found, (list, tuple, set, frozenset, str, Mapping)
        ):
            return found  # type: ignore[return-value]  # a membership domain (e.g. `outputs`)
        return flatten_values(found)
    except Exception as exc:
        raise PredicateError(
            f"extractor {d.extractor!r} raised {type(exc).__name__}: {exc}"
        ) from exc
