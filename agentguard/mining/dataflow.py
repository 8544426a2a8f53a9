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
Target = tuple[str, str]  # (tool, argument)
USER: Final = (USER_MESSAGE, ("args", "text"), "text")


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


def _inputs(call: Call) -> Iterator[tuple[str, Any]]:
    """Every argument value the formula's ``T(k = v)`` can match: any value but a list
    (a list contributes its elements to the domain, which the list itself never equals)."""
    for key, value in call.args.items():
        if not isinstance(value, list):
            yield str(key), value


def _trace_sources(trace: Trace, dialogue: bool) -> dict[Target, set[Source]]:
    """Per argument used in the trace: the sources that held every value it took."""
    seen: dict[Any, set[Source]] = {}
    texts: list[str] = []
    found: dict[Target, set[Source]] = {}
    for call in trace:
        if call.name == USER_MESSAGE:
            text = call.args.get("text")
            if isinstance(text, str):
                texts.append(text)
            continue
        if not call.is_tool:
            continue
        if call.name != FINAL_TOOL:
            for key, value in _inputs(call):
                here = set(seen.get(freeze(value), ())) if _scalar(value) else set()
                text = dialogue and isinstance(value, str) and len(value) >= MIN_TEXT
                if text and any(member(value, t) for t in texts):
                    here.add(USER)
                here.discard((call.name, ("args", key), "eq"))
                target = (call.name, key)
                found[target] = here if target not in found else found[target] & here
        for source, value in _outputs(call):
            seen.setdefault(freeze(value), set()).add(source)
    return found


def formula(target: Target, source: Source) -> str:
    """``forall v: G(T(k = v) -> O S(p = v))`` (``contains`` for a list or a text;
    ``Y O`` when ``S`` is ``T``, so the call never vouches for itself)."""
    tool, key = target
    s_tool, path, kind = source
    avoid = {key, *path}
    v = variable(avoid)
    test = f"{field(path)} = {v}" if kind == "eq" else f"{field(path)} contains {v}"
    once = "Y O" if s_tool == tool else "O"
    return f"forall {v}: G({q(tool)}({argument(key)} = {v}) -> {once} {q(s_tool)}({test}))"


def _note(target: Target, source: Source) -> str:
    tool, key = target
    s_tool, path, kind = source
    if source == USER:
        return f"{tool}.{key} always appears in an earlier user message"
    where = ".".join(path[1:]) if path[0] == "args" else ".".join(path)
    verb = "is one of" if kind == "in" else "equals"
    return f"{tool}.{key} {verb} {s_tool}.{where} of an earlier call"


def candidates(traces: Sequence[Trace], dialogue: bool) -> list[Candidate]:
    """Every (argument, source) pair that held in at least one trace, with its evidence."""
    activated: dict[Target, int] = {}
    satisfied: dict[tuple[Target, Source], int] = {}
    for trace in traces:
        for target, sources in _trace_sources(trace, dialogue).items():
            activated[target] = activated.get(target, 0) + 1
            for source in sources:
                satisfied[(target, source)] = satisfied.get((target, source), 0) + 1
    out = []
    for (target, source), sat in sorted(satisfied.items()):
        template = "provenance" if source == USER else "dataflow"
        out.append(
            Candidate(
                template,
                (target, source),
                formula(target, source),
                Evidence(len(traces), activated[target], sat),
                DATA_LAYER,
                DATA_SEVERITY,
                _note(target, source),
            )
        )
    return out
