"""``mine``: recorded runs in, a proposed least-privilege spec out.

The stages, each its own module: read the traces (:mod:`.sources`), declare the tools
they used (:mod:`.schema`), count DECLARE templates (:mod:`.declare`, :mod:`.temporal`)
and data flows (:mod:`.dataflow`), keep what holds on ``min_support`` of the traces (and,
given negative runs, rejects one of them), drop what the rest implies (:mod:`.prune`),
print (:mod:`.render`). The text is then parsed and every constraint verified on the
traces it was mined from with ``verify_traces``: the evaluator, not the miner, has the
last word: a disagreement is reported (``MinedSpec.unconfirmed``) and left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from agentguard.language import parse_spec
from agentguard.language.ast import Spec
from agentguard.mining import (
    consumption,
    dataflow,
    declare,
    origin,
    refined,
    schema,
    sequence,
    temporal,
)
from agentguard.mining.errors import MiningError
from agentguard.mining.model import Candidate, MinedSpec
from agentguard.mining.prune import prune
from agentguard.mining.render import render
from agentguard.mining.sources import read
from agentguard.scoring import verify_traces
from agentguard.trace.model import DIALOGUE_NAMES, USER_MESSAGE, Trace


def _check(min_support: float) -> None:
    if not 0.0 < min_support <= 1.0:
        raise MiningError(f"min_support is a share of the traces in (0, 1], got {min_support!r}")


def _candidates(
    traces: Sequence[Trace],
    min_support: float,
    templates: Iterable[str],
    *,
    flows: bool,
    values: bool,
) -> tuple[list[Candidate], Any]:
    dialogue = any(c.name == USER_MESSAGE for t in traces for c in t)
    activities = sorted({c.name for t in traces for c in t if c.name not in DIALOGUE_NAMES})
    total, counts = declare.count((t.names for t in traces), activities, templates)
    found = temporal.candidates(counts, total)
    per_trace = [Counter(c.name for c in t if c.is_tool) for t in traces]
    found += temporal.at_most(per_trace, activities, min_support)
    if values:
        found += refined.candidates(traces)
    tools = schema.tool_schemas(traces)
    if values:
        found += schema.value_candidates(tools, len(traces), schema.argument_traces(tools, traces))
    if flows:
        found += dataflow.candidates(traces, dialogue)
        if dialogue:
            found += origin.candidates(traces)
        found += sequence.candidates(traces)
        found += consumption.candidates(traces)
    kept = [
        c for c in found if c.evidence.activated > 0 and c.evidence.holds >= min_support - 1e-12
    ]
    return kept, tools


def _rejecting(found: list[Candidate], negatives: Sequence[Trace], tools: Any) -> list[Candidate]:
    """Each candidate with the number of negative runs it is violated on; those with none dropped."""
    text, names = render("negatives", tools, found, traces=0, min_support=1.0)
    spec = parse_spec(text)
    rejects = Counter[str]()
    for report in verify_traces(list(negatives), spec):
        for c in report.constraints:
            if not c.passed:
                rejects[c.name] += 1
    out = [replace(c, rejects=rejects[n]) for c, n in zip(found, names, strict=True)]
    return [c for c in out if c.rejects > 0]


def _confirmed(
    name: str,
    tools: Any,
    kept: list[Candidate],
    runs: list[Trace],
    min_support: float,
    negatives: int,
) -> tuple[str, Spec, tuple[Candidate, ...]]:
    """The rendered spec, parsed, with every constraint ``verify_traces`` does not confirm
    on ``min_support`` of the runs left out (and returned: a miner bug, never printed)."""
    text, names = render(
        name, tools, kept, traces=len(runs), min_support=min_support, negatives=negatives
    )
    spec = parse_spec(text, source=f"<mined {name}>")
    holds = Counter[str]()
    for report in verify_traces(runs, spec):
        for c in report.constraints:
            holds[c.name] += c.passed
    unconfirmed = tuple(
        c for c, n in zip(kept, names, strict=True) if holds[n] < min_support * len(runs) - 1e-9
    )
    if unconfirmed:
        left = [c for c in kept if c not in unconfirmed]
        text, _ = render(
            name, tools, left, traces=len(runs), min_support=min_support, negatives=negatives
        )
        spec = parse_spec(text, source=f"<mined {name}>")
    return text, spec, unconfirmed


def _jointly_satisfiable(
    found: list[Candidate], runs: Sequence[Trace], tools: Any
) -> list[Candidate]:
    """Below a support of 1, constraints that each hold on most runs may hold together on
    none (a conflict ``lint`` reports). Greedily, best-supported first, a candidate is
    kept only if some run still satisfies it and every one kept before it."""
    if not found:
        return found
    text, names = render("joint", tools, found, traces=0, min_support=1.0)
    passing: dict[str, set[int]] = {n: set() for n in names}
    for i, report in enumerate(verify_traces(list(runs), parse_spec(text))):
        for c in report.constraints:
            if c.passed:
                passing[c.name].add(i)
    witnesses = set(range(len(runs)))
    order = sorted(range(len(found)), key=lambda i: (-found[i].evidence.holds, i))
    keep: set[int] = set()
    for i in order:
        left = witnesses & passing[names[i]]
        if left:
            witnesses = left
            keep.add(i)
    return [c for i, c in enumerate(found) if i in keep]


def mine(
    traces: Iterable[Any],
    *,
    min_support: float = 1.0,
    negative: Iterable[Any] = (),
    name: str = "mined",
    templates: Iterable[str] = declare.TEMPLATES,
    dataflow: bool = True,
    values: bool = True,
    format: str | None = None,
    final_answer: bool = True,
) -> MinedSpec:
    """Propose a spec from recorded runs (files of any format ``check`` reads, or traces).

    Every constraint holds on at least ``min_support`` of the traces (1.0: on all of
    them), and below 1.0 some trace still satisfies them all (no conflict). ``negative`` runs (known to be bad) keep only the constraints that reject at
    least one of them. ``dataflow=False`` leaves out data flows, provenance and value orders;
    ``values=False`` the enumerations and ranges of arguments.
    """
    _check(min_support)
    runs = read(traces, format=format, final_answer=final_answer)
    if not runs:
        raise MiningError("cannot mine: no traces given")
    bad = read(negative, format=format, final_answer=final_answer)
    found, tools = _candidates(runs, min_support, templates, flows=dataflow, values=values)
    if bad:
        found = _rejecting(found, bad, tools)
    if min_support < 1.0:
        found = _jointly_satisfiable(found, runs, tools)
    kept, dropped = prune(found)
    text, spec, unconfirmed = _confirmed(name, tools, kept, runs, min_support, len(bad))
    kept = [c for c in kept if c not in unconfirmed]
    separating = None
    if bad:
        separating = sum(1 for r in verify_traces(bad, spec) if r.score < 1.0)
    return MinedSpec(
        text, spec, tools, tuple(kept), tuple(dropped), len(runs), len(bad), separating, unconfirmed
    )
