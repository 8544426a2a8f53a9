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

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

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


def _alt_response(a_idx: Sequence[int], b_idx: Sequence[int], n: int) -> bool:
    """Each ``a`` is followed by a ``b`` before the next ``a`` (or the end)."""
    j = 0
    for k, a in enumerate(a_idx):
        nxt = a_idx[k + 1] if k + 1 < len(a_idx) else n
        while j < len(b_idx) and b_idx[j] <= a:
            j += 1
        if j >= len(b_idx) or b_idx[j] >= nxt:
            return False
    return True


def _alt_precedence(a_idx: Sequence[int], b_idx: Sequence[int]) -> bool:
    """Each ``b`` is preceded by an ``a`` after the previous ``b`` (or the start)."""
    j, prev = 0, -1
    for b in b_idx:
        while j < len(a_idx) and a_idx[j] <= prev:
            j += 1
        if j >= len(a_idx) or a_idx[j] >= b:
            return False
        prev = b
    return True


def _bump(counts: Counts, key: tuple[str, Key], ok: bool) -> None:
    slot = counts.get(key)
    if slot is None:
        counts[key] = [1, int(ok)]
    else:
        slot[0] += 1
        slot[1] += ok


def _unary(
    counts: Counts,
    names: Sequence[str],
    idx: Mapping[str, list[int]],
    acts: Iterable[str],
    templates: frozenset[str],
) -> None:
    first = names[0] if names else None
    for a in acts:
        present = a in idx
        if "existence" in templates:
            _bump(counts, ("existence", (a,)), present)
        if "absence" in templates:
            _bump(counts, ("absence", (a,)), not present)
        if "init" in templates:
            _bump(counts, ("init", (a,)), first == a)


def _binary(
    counts: Counts,
    names: Sequence[str],
    idx: Mapping[str, list[int]],
    acts: Sequence[str],
    templates: frozenset[str],
) -> None:
    n = len(names)
    succ: dict[str, set[str | None]] = {}
    pred: dict[str, set[str | None]] = {}
    for a, positions in idx.items():
        succ[a] = {names[i + 1] if i + 1 < n else None for i in positions}
        pred[a] = {names[i - 1] if i > 0 else None for i in positions}
    for a, ai in idx.items():
        for b in acts:
            if b == a:
                continue
            bi = idx.get(b)
            # activated by a
            if "responded_existence" in templates:
                _bump(counts, ("responded_existence", (a, b)), bi is not None)
            if "response" in templates:
                _bump(counts, ("response", (a, b)), bi is not None and ai[-1] < bi[-1])
            if "chainresponse" in templates:
                _bump(counts, ("chainresponse", (a, b)), succ[a] == {b})
            if "altresponse" in templates:
                _bump(counts, ("altresponse", (a, b)), bi is not None and _alt_response(ai, bi, n))
            if "not_succession" in templates:
                _bump(counts, ("not_succession", (a, b)), bi is None or bi[-1] < ai[0])
            # activated by a as the consequent of (b, a)
            if "precedence" in templates:
                _bump(counts, ("precedence", (b, a)), bi is not None and bi[0] < ai[0])
            if "chainprecedence" in templates:
                _bump(counts, ("chainprecedence", (b, a)), pred[a] == {b})
            if "altprecedence" in templates:
                _bump(counts, ("altprecedence", (b, a)), bi is not None and _alt_precedence(bi, ai))


def count(
    sequences: Iterable[Sequence[str]],
    activities: Sequence[str],
    templates: Iterable[str] = TEMPLATES,
) -> tuple[int, Counts]:
    """How many traces, and per (template, key) how many activate and satisfy it.

    Identical sequences are decided once and counted with their multiplicity, as pm4py
    does with its variants.
    """
    wanted = frozenset(templates)
    unknown = wanted - set(TEMPLATES)
    if unknown:
        raise ValueError(f"unknown DECLARE template(s): {', '.join(sorted(unknown))}")
    variants: dict[tuple[str, ...], int] = {}
    for seq in sequences:
        t = tuple(seq)
        variants[t] = variants.get(t, 0) + 1
    total = 0
    counts: Counts = {}
    acts = list(activities)
    for names, times in variants.items():
        total += times
        idx: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            if name not in DIALOGUE_NAMES:
                idx.setdefault(name, []).append(i)
        one: Counts = {}
        _unary(one, names, idx, acts, wanted)
        _binary(one, names, idx, acts, wanted)
        for key, (act, sat) in one.items():
            slot = counts.get(key)
            if slot is None:
                counts[key] = [act * times, sat * times]
            else:
                slot[0] += act * times
                slot[1] += sat * times
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
