"""DECLARE templates over tool names: each trace's verdict per candidate, counted.

The templates and their activation follow pm4py's ``discover_declare`` (Maggi, Mooij and
van der Aalst, CIDM 2011), so the two find the same constraints at the same thresholds
(``tests/mining/test_declare_vs_pm4py.py``): per trace a candidate is *activated* or
not, and an activated one is satisfied or violated; *support* counts the activating
traces and *confidence* the satisfying ones. Two templates pm4py lacks are added:
``not_succession`` (``a`` is never followed by ``b``, the LTL meaning; pm4py's
``nonsuccession`` negates its ``succession`` verdict instead) and ``at_most`` (a bound
on how often a tool is called, chosen in :mod:`agentguard.mining.temporal`).

A trace is read as the sequence of position names a spec sees; dialogue events keep
their positions (so ``X`` and ``init`` mean what the spec will evaluate) but are never
a template's activity.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import numpy as np

from agentguard.trace.model import DIALOGUE_NAMES

UNARY: Final = ("existence", "absence", "init")
BINARY: Final = (
    "responded_existence",
    "response",
    "precedence",
    "chainresponse",
    "chainprecedence",
    "altresponse",
    "altprecedence",
    "not_succession",
)
TEMPLATES: Final = (*UNARY, *BINARY)
"""Every template this module decides (``at_most`` is counted separately)."""

Key = tuple[str, ...]
Counts = dict[tuple[str, Key], list[int]]  # (template, key) -> [activated, satisfied]
_Grid = np.ndarray[Any, Any]


class _Log:
    """The log as columns: one activity code per position (``n`` for a position that is
    no listed activity, a dialogue event), its trace, and per trace and activity the
    count, first and last position (global positions: compared within a trace only)."""

    def __init__(self, seqs: Sequence[Sequence[str]], acts: Sequence[str]) -> None:
        n = self.n = len(acts)
        index = {a: i for i, a in enumerate(acts)}
        traces = self.traces = len(seqs)
        lengths = np.fromiter((len(s) for s in seqs), np.int64, traces)
        self.codes = np.fromiter(
            (index.get(x, n) if x not in DIALOGUE_NAMES else n for s in seqs for x in s),
            np.int64,
            int(lengths.sum()),
        )
        self.tid = np.repeat(np.arange(traces), lengths)
        self.ends = np.cumsum(lengths)
        self.starts = self.ends - lengths
        self.lengths = lengths
        pos = np.arange(len(self.codes))
        cells = self.tid * (n + 1) + self.codes
        size = traces * (n + 1)
        self.count = np.bincount(cells, minlength=size).reshape(traces, n + 1)[:, :n]
        self.present = self.count > 0
        first = np.full(size, np.iinfo(np.int64).max, np.int64)
        last = np.full(size, -1, np.int64)
        np.minimum.at(first, cells, pos)
        np.maximum.at(last, cells, pos)
        self.first = first.reshape(traces, n + 1)[:, :n]
        self.last = last.reshape(traces, n + 1)[:, :n]

    def adjacent(self) -> _Grid:
        """Per trace, how many ``a`` positions are directly followed by ``b``: (T, n, n)."""
        n, t = self.n, self.traces
        same = self.tid[:-1] == self.tid[1:]
        a, b, tid = self.codes[:-1][same], self.codes[1:][same], self.tid[:-1][same]
        cells = (tid * (n + 1) + a) * (n + 1) + b
        grid = np.bincount(cells, minlength=t * (n + 1) ** 2).reshape(t, n + 1, n + 1)
        return grid[:, :n, :n]

    def alternating(self, forward: bool) -> _Grid:
        """(T, n, n): ``[t, x, y]`` is true when, in trace ``t``, every ``x`` sees a ``y``
        before the next ``x`` (``forward``) or after the previous ``x`` (backward); true
        where ``x`` does not occur."""
        n, t = self.n, self.traces
        real = np.flatnonzero(self.codes < n)
        out = np.ones((t, n, n), bool)
        if len(real) == 0:
            return out
        codes, tid = self.codes[real], self.tid[real]
        order = np.lexsort((real, codes, tid))  # grouped by (trace, activity), by position
        pos, codes, tid = real[order], codes[order], tid[order]
        group = np.r_[True, (tid[1:] != tid[:-1]) | (codes[1:] != codes[:-1])]
        prefix = np.zeros((len(self.codes) + 1, n), np.int32)
        np.cumsum(np.eye(n + 1, dtype=np.int32)[self.codes][:, :n], axis=0, out=prefix[1:])
        if forward:  # (p, next x or the trace's end)
            nxt = np.r_[pos[1:], 0]
            last_of_group = np.r_[group[1:], True]
            nxt[last_of_group] = self.ends[tid[last_of_group]]
            ok = (prefix[nxt] - prefix[pos + 1]) > 0
        else:  # (previous x or the trace's start, p)
            prev = np.r_[0, pos[:-1]] + 1
            prev[group] = self.starts[tid[group]]
            ok = (prefix[pos] - prefix[prev]) > 0
        heads = np.flatnonzero(group)
        every = np.logical_and.reduceat(ok, heads, axis=0)
        out[tid[heads], codes[heads]] = every
        return out


def _binary(log: _Log, wanted: frozenset[str]) -> dict[str, tuple[_Grid, _Grid]]:
    """Per binary template, (activated, satisfied) grids (T, n, n) indexed [t, a, b]."""
    pa, pb = log.present[:, :, None], log.present[:, None, :]
    fa, fb = log.first[:, :, None], log.first[:, None, :]
    la, lb = log.last[:, :, None], log.last[:, None, :]
    both = pa & pb
    out: dict[str, tuple[_Grid, _Grid]] = {}
    if "responded_existence" in wanted:
        out["responded_existence"] = (pa, both)
    if "response" in wanted:
        out["response"] = (pa, both & (la < lb))
    if "precedence" in wanted:
        out["precedence"] = (pb, both & (fa < fb))
    if "not_succession" in wanted:
        out["not_succession"] = (pa, pa & (~pb | (lb < fa)))
    if wanted & {"chainresponse", "chainprecedence"}:
        adj = log.adjacent()
        ca, cb = log.count[:, :, None], log.count[:, None, :]
        out["chainresponse"] = (pa, pa & (adj == ca))
        out["chainprecedence"] = (pb, pb & (adj == cb))
    if "altresponse" in wanted:
        out["altresponse"] = (pa, pa & log.alternating(True))
    if "altprecedence" in wanted:
        out["altprecedence"] = (pb, pb & log.alternating(False).transpose(0, 2, 1))
    return {k: v for k, v in out.items() if k in wanted}


def count(
    sequences: Iterable[Sequence[str]],
    activities: Sequence[str],
    templates: Iterable[str] = TEMPLATES,
) -> tuple[int, Counts]:
    """How many traces, and per (template, key) how many activate and satisfy it.

    Computed on the log's columns at once (numpy), not trace by trace: per trace and
    activity the count, first and last position, the adjacency counts, and for the
    alternating templates a prefix count per activity. Binary keys no trace activates
    are left out; unary ones are always there (every trace activates them).
    """
    wanted = frozenset(templates)
    unknown = wanted - set(TEMPLATES)
    if unknown:
        raise ValueError(f"unknown DECLARE template(s): {', '.join(sorted(unknown))}")
    seqs = [tuple(s) for s in sequences]
    acts = list(activities)
    log = _Log(seqs, acts)
    total, n = log.traces, log.n
    counts: Counts = {}
    present = log.present.sum(axis=0)
    heads = log.codes[log.starts[log.lengths > 0]]
    starts = np.bincount(heads, minlength=n + 1)[:n]
    for i, a in enumerate(acts):
        if "existence" in wanted:
            counts[("existence", (a,))] = [total, int(present[i])]
        if "absence" in wanted:
            counts[("absence", (a,))] = [total, total - int(present[i])]
        if "init" in wanted:
            counts[("init", (a,))] = [total, int(starts[i])]
    for template, (act, sat) in _binary(log, wanted).items():
        activated = np.broadcast_to(act, (total, n, n)).sum(axis=0)
        satisfied = sat.sum(axis=0)
        for i, j in zip(*np.nonzero(activated), strict=True):
            if i != j:
                counts[(template, (acts[i], acts[j]))] = [
                    int(activated[i, j]),
                    int(satisfied[i, j]),
                ]
    return total, counts


def discover(
    sequences: Iterable[Sequence[str]],
    *,
    templates: Iterable[str] = TEMPLATES,
    min_support_ratio: float = 0.0,
    min_confidence_ratio: float = 0.0,
) -> dict[str, dict[str | tuple[str, str], dict[str, int]]]:
    """pm4py's ``discover_declare`` result shape and thresholds, on name sequences.

    ``{template: {activity or (a, b): {"support": n, "confidence": m}}}``: kept when
    ``support >= traces * min_support_ratio`` and ``confidence >= support *
    min_confidence_ratio`` (support > 0), exactly pm4py's rule.
    """
    seqs = [tuple(s) for s in sequences]
    activities = sorted({n for s in seqs for n in s if n not in DIALOGUE_NAMES})
    total, counts = count(seqs, activities, templates)
    out: dict[str, dict[str | tuple[str, str], dict[str, int]]] = {}
    for (template, key), (act, sat) in sorted(counts.items()):
        if act == 0 or act < total * min_support_ratio or sat < act * min_confidence_ratio:
            continue
        k: str | tuple[str, str] = key[0] if len(key) == 1 else (key[0], key[1])
        out.setdefault(template, {})[k] = {"support": act, "confidence": sat}
    return out
