"""Single-step mutations of a gold trace: the wrong procedures a spec must reject.

A benchmark's compliance score (and the reward built on it) is only as good as what it
rejects. This module enumerates the one-step departures from a gold trace that an agent
most often makes (one wrong argument, two calls to the same tool swapped, a call skipped,
two calls to different tools swapped) so that the synthesized specs can be measured
(``benchmarks/bench_mutations.py``) and property-tested (``tests/bench/test_mutations.py``).

A mutated call's result is recomputed on the real tools: the trace is what ran.
Whether a mutation changes what the procedure determines is decided by the template's
structure alone (:func:`changes_procedure`), never by the spec being tested.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentguard.bench.errors import BadParameterError
from agentguard.bench.instance import GoldCall, Instance
from agentguard.bench.tools import Toolbox

MutationKind = Literal["wrong_argument", "same_tool_swap", "skip", "different_tool_swap"]
MUTATION_KINDS: tuple[MutationKind, ...] = (
    "wrong_argument",
    "same_tool_swap",
    "skip",
    "different_tool_swap",
)


@dataclass(frozen=True, slots=True)
class Mutation:
    """One mutated trace: its kind, the positions it touches and the records."""

    kind: MutationKind
    positions: tuple[int, ...]
    records: tuple[Mapping[str, Any], ...]
    changes_procedure: bool
    description: str


def _bump(value: Any) -> Any:
    """A different value of the same type: ints +1, lists with their first element +1."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, list):
        return [value[0] + 1, *value[1:]] if value else [1]
    raise BadParameterError(f"cannot mutate argument value {value!r}")


def _rerun(toolbox: Toolbox, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    return {"tool_name": name, "arguments": dict(args), "tool_result": toolbox.call(name, args)}


def changes_procedure(gold: tuple[GoldCall, ...], i: int, j: int) -> bool:
    """Whether swapping gold calls ``i < j`` departs from the procedure.

    It does not only when both calls are whole items of the same fan-out block (the
    procedure maps over a set, so whole items may come in any order) or when the two
    calls are identical.
    """
    a, b = gold[i], gold[j]
    if a.name == b.name and a.args == b.args:
        return False
    if a.block is None or b.block is None or a.block[0] != b.block[0] or a.block == b.block:
        return True
    sizes = Counter(c.block for c in gold if c.block is not None)
    return not (sizes[a.block] == 1 and sizes[b.block] == 1)


def mutations(instance: Instance) -> Iterator[Mutation]:
    """Every single-step mutation of the instance's gold trace, kind by kind."""
    gold = instance.gold_trace
    base = [c.to_record() for c in gold]
    box = Toolbox(instance.seed, instance.difficulty, instance.tools)
    for i, call in enumerate(gold):
        for key, value in call.args.items():
            args = {**call.args, key: _bump(value)}
            records = [*base[:i], _rerun(box, call.name, args), *base[i + 1 :]]
            yield Mutation(
                "wrong_argument",
                (i,),
                tuple(records),
                True,
                f"call #{i + 1} {call.name}: {key}={value!r} -> {args[key]!r}",
            )
    last_of: dict[str, int] = {}
    for j, call in enumerate(gold):
        previous = last_of.get(call.name)
        last_of[call.name] = j
        if previous is None or gold[previous].args == call.args:
            continue
        i = previous
        records = list(base)
        records[i], records[j] = base[j], base[i]
        yield Mutation(
            "same_tool_swap",
            (i, j),
            tuple(records),
            changes_procedure(gold, i, j),
            f"calls #{i + 1} and #{j + 1} of {call.name} swapped",
        )
    for i, call in enumerate(gold):
        yield Mutation(
            "skip",
            (i,),
            tuple(base[:i] + base[i + 1 :]),
            True,
            f"call #{i + 1} {call.name} skipped",
        )
    for i in range(len(gold) - 1):
        if gold[i].name == gold[i + 1].name:
            continue
        records = list(base)
        records[i], records[i + 1] = base[i + 1], base[i]
        yield Mutation(
            "different_tool_swap",
            (i, i + 1),
            tuple(records),
            True,
            f"calls #{i + 1} {gold[i].name} and #{i + 2} {gold[i + 1].name} swapped",
        )
