"""Data-flow constraints: where each argument's value came from, earlier in the run.

For every argument ``T.k`` the miner asks, per trace, which *sources* held the value of
every call's ``k`` strictly before that call: an argument or a result field of an earlier
call (equal to it, or a list containing it), or, when dialogue is recorded, the text of
an earlier user message (containing it). A source that held for every call of ``T``
in a trace satisfies the candidate there; one that did for every trace is a constraint
``forall v: G(T(k = v) -> O S(p = v))`` that no DECLARE miner states (DECLARE sees
activity names only). The values are matched with the evaluator's own equality and
membership (:mod:`agentguard.semantics.values`), so what is counted is what
``verify_trace`` decides.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from agentguard.language.printer import name as q
from agentguard.mining.fields import argument, field, variable
from agentguard.mining.model import Candidate, Evidence
from agentguard.semantics.values import freeze, member
from agentguard.severity import Severity, SeverityKind
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import USER_MESSAGE, Call, Trace

DATA_LAYER: Final = "L4_data"
DATA_SEVERITY: Final = Severity(SeverityKind.HARD_STOP)
"""An argument that did not come from where it always came from is the injected-value
case a firewall exists for: HARD_STOP is suggested (a safety constraint, lint-clean)."""

MIN_TEXT: Final = 3
"""Text shorter than this is not traced to a user message (one letter is in any text)."""

MAX_DEPTH: Final = 3
"""Result fields deeper than this are not sources (``result.a.b.c``)."""

Source = tuple[str, tuple[str, ...], str]  # (tool, field path, "eq" | "in" | "text")
Target = tuple[str, str, str]  # (tool, argument, part): "" whole, "*" each item, "0" an index
USER: Final = (USER_MESSAGE, ("args", "text"), "text")
EACH: Final = "*"


def _scalar(value: Any) -> bool:
    """A value a source offers for equality: JSON scalars (NaN equals nothing)."""
    if value is None or isinstance(value, (str, bool, int)):
        return True
    return isinstance(value, float) and value == value


def _paths(
    value: Any, prefix: tuple[str, ...], depth: int
) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """(path, kind, value) of every scalar (``eq``) and every list of scalars (``in``)."""
    if _scalar(value):
        yield prefix, "eq", value
    elif isinstance(value, list):
        for item in value:
            if _scalar(item):
                yield prefix, "in", item
    elif isinstance(value, Mapping) and depth < MAX_DEPTH:
        for key, inner in value.items():
            if isinstance(key, str):
                yield from _paths(inner, (*prefix, key), depth + 1)


def _outputs(call: Call) -> Iterator[tuple[Source, Any]]:
    """Every value a call makes available to later calls, with the source naming it."""
    for key, value in call.args.items():
        for path, kind, v in _paths(value, ("args", str(key)), MAX_DEPTH - 1):
            yield (call.name, path, kind), v
    if call.has_result and not call.error:
        result = call.result
        if isinstance(result, Mapping) and set(result) == {"result"} and _scalar(result["result"]):
            result = result["result"]  # the paper's {"result": v}: `result = v` matches it
        for path, kind, v in _paths(result, ("result",), 0):
            yield (call.name, path, kind), v


Shapes = Mapping[tuple[str, str], int | None]


def list_shapes(traces: Sequence[Trace]) -> dict[tuple[str, str], int | None]:
    """The arguments that are a list of scalars on every call that passes them, each with
    its length when every call passes the same length (a tuple: ``[r, i]``), else None.

    Only those are traced item by item: a test ``k contains v`` on a text is a substring
    test, and on a list holding a mapping binds the mapping, neither of which the item
    counts here would match."""
    seen: dict[tuple[str, str], int | None] = {}
    bad: set[tuple[str, str]] = set()
    for trace in traces:
        for call in trace:
            if not call.is_tool or call.name == FINAL_TOOL:
                continue
            for key, value in call.args.items():
                slot = (call.name, str(key))
                if not isinstance(value, list) or not all(_scalar(v) for v in value):
                    bad.add(slot)
                elif slot not in seen:
                    seen[slot] = len(value)
                elif seen[slot] != len(value):
                    seen[slot] = None
    return {k: v for k, v in seen.items() if k not in bad}


def _inputs(call: Call, shapes: Shapes) -> Iterator[tuple[str, str, Any]]:
    """Every (argument, part, value) the formula's ``T(k = v)`` can match: a value that is
    not a list whole, and a list of scalars item by item (``k contains v``), or index by
    index when it is a tuple (``k[0] = v``): a list is never equal to a source's scalar."""
    for key, value in call.args.items():
        if not isinstance(value, list):
            yield str(key), "", value
            continue
        shape = shapes.get((call.name, str(key)), -1)
        if shape == -1:
            continue
        if shape is None:
            for item in value:
                yield str(key), EACH, item
        else:
            for i, item in enumerate(value):
                yield str(key), str(i), item


Found = dict[Target, set[Source]]


def _trace_sources(trace: Trace, dialogue: bool, shapes: Shapes) -> tuple[Found, Found]:
    """Per argument used in the trace: the sources that held every value it took before,
    and those whose latest call held it (the lookup just made, not any earlier one)."""
    seen: dict[Any, set[Source]] = {}
    latest: dict[str, dict[Any, set[Source]]] = {}
    texts: list[str] = []
    found: Found = {}
    last: Found = {}
    for call in trace:
        if call.name == USER_MESSAGE:
            text = call.args.get("text")
            if isinstance(text, str):
                texts.append(text)
            continue
        if not call.is_tool:
            continue
        if call.name != FINAL_TOOL:
            values: dict[Target, list[Any]] = {}
            for key, part, value in _inputs(call, shapes):
                values.setdefault((call.name, key, part), []).append(value)
            for target, items in values.items():
                here: set[Source] | None = None
                recent: set[Source] | None = None
                for value in items:
                    v = freeze(value) if _scalar(value) else None
                    h = set(seen.get(v, ())) if v is not None else set()
                    r = (
                        set().union(*(d.get(v, ()) for d in latest.values()))
                        if v is not None
                        else set()
                    )
                    text = dialogue and isinstance(value, str) and len(value) >= MIN_TEXT
                    if text and any(member(value, t) for t in texts):
                        h.add(USER)
                    here = h if here is None else here & h
                    recent = r if recent is None else recent & r
                for bucket, got in ((found, here or set()), (last, recent or set())):
                    got -= {(call.name, ("args", target[1]), k) for k in ("eq", "in")}
                    bucket[target] = got if target not in bucket else bucket[target] & got
        mine: dict[Any, set[Source]] = {}
        for source, value in _outputs(call):
            seen.setdefault(freeze(value), set()).add(source)
            mine.setdefault(freeze(value), set()).add(source)
        latest[call.name] = mine
    return found, last


def target_test(target: Target, v: str) -> str:
    """``k = v``, ``k contains v`` (each item of a list) or ``k[i] = v`` (a tuple's item)."""
    _, key, part = target
    if part == EACH:
        return f"{argument(key)} contains {v}"
    index = f"[{part}]" if part else ""
    return f"{argument(key)}{index} = {v}"


def formula(target: Target, source: Source, *, latest: bool = False) -> str:
    """``forall v: G(T(k = v) -> O S(p = v))`` (``contains`` for a list or a text;
    ``Y O`` when ``S`` is ``T``, so the call never vouches for itself). ``latest``: the
    last ``S`` before the call held it, ``(!S S S(p = v))``."""
    tool = target[0]
    s_tool, path, kind = source
    v = variable({target[1], *path})
    test = f"{field(path)} = {v}" if kind == "eq" else f"{field(path)} contains {v}"
    step = "Y " if s_tool == tool else ""
    if latest:
        since = f"{step}(!{q(s_tool)} S {q(s_tool)}({test}))"
    else:
        since = f"{step}O {q(s_tool)}({test})"
    return f"forall {v}: G({q(tool)}({target_test(target, v)}) -> {since})"


def _note(target: Target, source: Source, latest: bool) -> str:
    tool, key, part = target
    s_tool, path, kind = source
    what = f"{tool}.{key}" + ("" if not part else " (each item)" if part == EACH else f"[{part}]")
    if source == USER:
        return f"{what} always appears in an earlier user message"
    where = ".".join(path[1:]) if path[0] == "args" else ".".join(path)
    verb = "is one of" if kind == "in" else "equals"
    return f"{what} {verb} {s_tool}.{where} of {'the latest' if latest else 'an earlier'} call"


def candidates(traces: Sequence[Trace], dialogue: bool) -> list[Candidate]:
    """Every (argument, source) pair that held in at least one trace, with its evidence;
    ``latest`` where the latest call of the source held it there too."""
    shapes = list_shapes(traces)
    activated: dict[Target, int] = {}
    satisfied: dict[tuple[str, Target, Source], int] = {}
    for trace in traces:
        found, last = _trace_sources(trace, dialogue, shapes)
        for target, sources in found.items():
            activated[target] = activated.get(target, 0) + 1
            for source in sources:
                slot = ("dataflow", target, source)
                satisfied[slot] = satisfied.get(slot, 0) + 1
            for source in last.get(target, ()):
                slot = ("latest", target, source)
                satisfied[slot] = satisfied.get(slot, 0) + 1
    out = []
    for (template, target, source), sat in sorted(satisfied.items()):
        latest = template == "latest"
        if source == USER:
            template = "provenance"
        out.append(
            Candidate(
                template,
                (target, source),
                formula(target, source, latest=latest),
                Evidence(len(traces), activated[target], sat),
                DATA_LAYER,
                DATA_SEVERITY,
                _note(target, source, latest),
            )
        )
    return out
