"""Data flows forward: every value a tool returns is used by a later call.

The converse of :mod:`agentguard.mining.dataflow`: there, an argument must come from an
earlier output; here, an output must go to a later argument
(``forall v: G(lookup(result.id = v) -> F refund(order_id = v))``). A run that skips
the call consuming a result (the next step of a loop, the refund after the lookup)
breaks it, which neither DECLARE (names only) nor the backward flow (the skipped call
has nothing to check) sees. Only the call's result is a source: an argument passed on
again is usually the same data the backward flow already ties.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from agentguard.language.printer import name as q
from agentguard.mining.dataflow import DATA_LAYER, EACH, MAX_DEPTH, Shapes, list_shapes
from agentguard.mining.fields import argument, field, variable
from agentguard.mining.model import Candidate, Evidence
from agentguard.mining.temporal import SOFT
from agentguard.semantics.values import freeze
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import Call, Trace

Source = tuple[str, tuple[str, ...], str]  # (tool, result path, "eq" | "in": each item)
Target = tuple[str, str, str]  # (tool, argument, "" whole | "*" each item of a list)
_OPAQUE: Final = object()
"""A value at a path that is neither a scalar nor a list of scalars (a mapping): the
formula's domain holds it whole, so the flow is not claimed where one occurs."""


def _scalar(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int)):
        return True
    return isinstance(value, float) and value == value


def _leaves(
    value: Any, path: tuple[str, ...], depth: int
) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """(path, kind, scalar) of a result, a list's items as ``in``; ``_OPAQUE`` where a
    mapping (or a list holding one) stops the walk."""
    if _scalar(value):
        yield path, "eq", value
        yield path, "in", _OPAQUE  # `p contains v` on a text: a substring test
    elif isinstance(value, list):
        yield path, "eq", _OPAQUE  # `p = v` binds the whole list
        if not all(_scalar(v) for v in value):
            yield path, "in", _OPAQUE
        for item in value:
            if _scalar(item):
                yield path, "in", item
    elif isinstance(value, Mapping):
        yield path, "eq", _OPAQUE
        yield path, "in", _OPAQUE
        if depth < MAX_DEPTH:
            for key, inner in value.items():
                if isinstance(key, str):
                    yield from _leaves(inner, (*path, key), depth + 1)


def _results(result: Any) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """The paper's ``{"result": v}`` is not unwrapped here: ``S(result = v)`` would put the
    whole mapping in the domain too; ``result.result`` names ``v`` alone."""
    yield from _leaves(result, ("result",), 0)


def _passed(calls: Sequence[Call], shapes: Shapes) -> dict[Target, dict[Any, int]]:
    """Per argument (or each item of a list argument): every value, with the last call
    that passed it."""
    last: dict[Target, dict[Any, int]] = {}
    for j, call in enumerate(calls):
        for key, value in call.args.items():
            if _scalar(value):
                last.setdefault((call.name, str(key), ""), {})[freeze(value)] = j
            elif isinstance(value, list) and shapes.get((call.name, str(key)), -1) != -1:
                slot = last.setdefault((call.name, str(key), EACH), {})
                for item in value:
                    slot[freeze(item)] = j
    return last


def _trace_flows(trace: Trace, shapes: Shapes) -> dict[Source, set[Target] | None]:
    """Per result path: the arguments that later took every value it held (None: a
    mapping was there, nothing is claimed)."""
    calls = [c for c in trace if c.is_tool]
    last = _passed(calls, shapes)
    found: dict[Source, set[Target] | None] = {}
    for i, call in enumerate(calls):
        if call.name == FINAL_TOOL or not call.has_result:
            continue
        for path, kind, value in _results(call.result):
            source = (call.name, path, kind)
            if source in found and found[source] is None:
                continue
            if value is _OPAQUE:
                found[source] = None
                continue
            v = freeze(value)
            here = {t for t, seen in last.items() if seen.get(v, -1) > i}
            before = found.get(source)
            found[source] = (
                here if before is None and source not in found else (before or set()) & here
            )
    return found


def formula(source: Source, target: Target) -> str:
    """``forall v: G(S(p = v) -> F T(k = v))`` (``X F`` when ``T`` is ``S``; ``contains``
    for each item of a list)."""
    s_tool, path, kind = source
    tool, key, part = target
    v = variable({key, *path})
    later = "X F" if s_tool == tool else "F"
    test = f"{field(path)} {'=' if kind == 'eq' else 'contains'} {v}"
    passed = f"{argument(key)} {'contains' if part == EACH else '='} {v}"
    return f"forall {v}: G({q(s_tool)}({test}) -> {later} {q(tool)}({passed}))"


def candidates(traces: Sequence[Trace]) -> list[Candidate]:
    """Every (result path, argument) pair that held in at least one trace."""
    shapes = list_shapes(traces)
    activated: dict[Source, int] = {}
    satisfied: dict[tuple[Source, Target], int] = {}
    for trace in traces:
        for source, targets in _trace_flows(trace, shapes).items():
            activated[source] = activated.get(source, 0) + 1
            for target in targets or ():
                satisfied[(source, target)] = satisfied.get((source, target), 0) + 1
    out = []
    for (source, target), sat in sorted(satisfied.items()):
        where = ".".join(source[1]) + (" (each item)" if source[2] == "in" else "")
        into = f"{target[0]}.{target[1]}" + (" (as an item)" if target[2] == EACH else "")
        out.append(
            Candidate(
                "consumed",
                (source, target),
                formula(source, target),
                Evidence(len(traces), activated[source], sat),
                DATA_LAYER,
                SOFT,
                f"every {source[0]}.{where} is passed on as {into} later",
            )
        )
    return out
