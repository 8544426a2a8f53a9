"""Drop every mined constraint that the others imply, so a reviewer reads no repeats.

Candidates are tried weakest first; one is dropped when the constraints still kept imply
it by one of the rules below (each a theorem of LTLf over the template's formulas, with
``a != b``). Every drop is checked against what remains, so the kept set always means
what the whole set meant: nothing is lost, and no two constraints drop each other.

* ``response(a, b)`` <- any chain ``a -> ... -> b`` of response, altresponse and
  chainresponse (each implies response, which is transitive);
* ``precedence(a, b)`` <- a chain of precedence, altprecedence and chainprecedence, or
  ``init(a)``;
* ``altresponse(a, b)`` <- ``chainresponse(a, b)``, or ``at_most(a, 1)`` and a response
  chain; ``altprecedence(a, b)`` <- ``chainprecedence(a, b)``, or ``at_most(b, 1)`` and a
  precedence chain;
* ``not_succession(a, b)`` <- ``absence(b)``, or ``at_most(b, 1)`` and ``precedence(b, a)``;
* ``responded_existence(a, b)`` <- ``response(a, b)``, ``precedence(b, a)``,
  ``existence(b)``, or a chain of responded existences;
* ``existence(a)`` <- ``init(a)``; ``existence(b)`` with ``precedence(a, b)`` or
  ``response(b, a)``;
* anything ``a`` triggers (``b`` in a precedence) <- ``absence(a)``;
* a response, precedence or chain over value activities (:mod:`.refined`) <- the same
  template with a wider trigger and a narrower target: ``chainresponse(tool_a,
  tool_b(j = 1))`` gives ``chainresponse(tool_a(i = 2), tool_b(j = 1))`` and
  ``chainresponse(tool_a, tool_b)``;
* a data flow ``T.k <- src`` <- ``T.k <- S.m`` and ``S.m <- src`` (the value was in
  ``src`` before ``S`` passed it, and ``S`` passed it before ``T``); the user's messages
  are a source like any other; or the same flow from the *latest* ``src`` call (what
  held at the last call held at some call); the latest-call flow itself <- the flow and
  ``at_most(S, 1)`` (the only call is the latest).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from agentguard.mining.model import Candidate
from agentguard.mining.refined import refines

_STRENGTH: Final = {
    "responded_existence": 0,
    "existence": 1,
    "response": 2,
    "precedence": 2,
    "dataflow": 2,
    "latest": 1,
    "provenance": 2,
    "at_most": 2,
    "enum": 2,
    "distinct": 2,
    "consumed": 2,
    "range": 2,
    "not_succession": 2,
    "altresponse": 3,
    "altprecedence": 3,
    "chainresponse": 4,
    "chainprecedence": 4,
    "init": 5,
    "absence": 6,
}
"""Which templates are tried for dropping first: the ones most often implied."""

# the tool a template's activation waits for: absence of it makes the template vacuous
_TRIGGER: Final[dict[str, int]] = {
    "responded_existence": 0,
    "response": 0,
    "chainresponse": 0,
    "altresponse": 0,
    "not_succession": 0,
    "precedence": 1,
    "chainprecedence": 1,
    "altprecedence": 1,
    "at_most": 0,
}


class _Kept:
    """The kept constraints, indexed by (template, key) for the implication rules."""

    def __init__(self, items: Iterable[Candidate]) -> None:
        self.keys: set[tuple[str, Any]] = {(c.template, c.key) for c in items}
        self.tools: set[str] = set()
        for template, key in self.keys:
            if template in _TRIGGER or template in ("existence", "absence", "init"):
                self.tools.update(k for k in key if isinstance(k, str))

    def has(self, template: str, *key: Any) -> bool:
        return (template, tuple(key)) in self.keys

    def remove(self, c: Candidate) -> None:
        self.keys.discard((c.template, c.key))

    def add(self, c: Candidate) -> None:
        self.keys.add((c.template, c.key))

    def flows(self) -> set[Any]:
        return {key for template, key in self.keys if template in ("dataflow", "provenance")}


def _path(kept: _Kept, templates: tuple[str, ...], a: str, b: str) -> bool:
    """A chain ``a -> ... -> b`` of kept constraints of these (transitive) templates."""
    seen, todo = {a}, [a]
    while todo:
        x = todo.pop()
        for y in kept.tools - seen:
            if any(kept.has(t, x, y) for t in templates):
                if y == b:
                    return True
                seen.add(y)
                todo.append(y)
    return False


_RESPONSES: Final = ("response", "altresponse", "chainresponse")
_REFINABLE: Final = frozenset({"response", "precedence", "chainresponse", "chainprecedence"})
_PRECEDENCES: Final = ("precedence", "altprecedence", "chainprecedence")


def _responds(kept: _Kept, a: str, b: str) -> bool:
    """``response(a, b)`` follows from the kept constraints."""
    return _path(kept, _RESPONSES, a, b)


def _precedes(kept: _Kept, a: str, b: str) -> bool:
    """``precedence(a, b)`` follows: a chain of precedences, or ``a`` starts every run."""
    return kept.has("init", a) or _path(kept, _PRECEDENCES, a, b)


def _exists(kept: _Kept, a: str) -> bool:
    return kept.has("existence", a) or kept.has("init", a)


def _once(kept: _Kept, a: str) -> bool:
    return kept.has("at_most", a, "1")


def _within(label: str, other: str) -> bool:
    """Every call ``label`` names is one ``other`` names: the same, or a value of it."""
    return label == other or refines(label, other)


def _generalized(kept: _Kept, t: str, key: tuple[Any, ...]) -> bool:
    """``t`` over the same or wider trigger and the same or narrower target is kept: it
    says this of more calls, with less choice of what answers them."""
    trigger = _TRIGGER[t]
    for template, other in kept.keys:
        if (
            template == t
            and other != key
            and len(other) == 2
            and _within(key[trigger], other[trigger])
            and _within(other[1 - trigger], key[1 - trigger])
        ):
            return True
    return False


def _temporal(kept: _Kept, t: str, key: tuple[Any, ...]) -> bool:
    if t in _TRIGGER and kept.has("absence", key[_TRIGGER[t]]):
        return True
    if t in _REFINABLE and _generalized(kept, t, key):
        return True
    if t == "existence":
        (a,) = key
        return (
            kept.has("init", a)
            or any(_exists(kept, b) and _precedes(kept, a, b) for b in kept.tools - {a})
            or any(_exists(kept, b) and _responds(kept, b, a) for b in kept.tools - {a})
        )
    if t in ("absence", "init", "at_most") or len(key) != 2:
        return False
    a, b = key
    rules: dict[str, Callable[[], bool]] = {
        "response": lambda: _responds(kept, a, b),
        # with one a, "b before the next a" is "b after a"
        "altresponse": lambda: (
            kept.has("chainresponse", a, b) or (_once(kept, a) and _responds(kept, a, b))
        ),
        "precedence": lambda: _precedes(kept, a, b),
        "altprecedence": lambda: (
            kept.has("chainprecedence", a, b) or (_once(kept, b) and _precedes(kept, a, b))
        ),
        # the one b comes before the first a: none follows an a
        "not_succession": lambda: (
            kept.has("absence", b) or (_once(kept, b) and _precedes(kept, b, a))
        ),
        "responded_existence": lambda: (
            _responds(kept, a, b)
            or _precedes(kept, b, a)
            or kept.has("existence", b)
            or _path(kept, ("responded_existence",), a, b)
        ),
    }
    rule = rules.get(t)
    return rule is not None and rule()


def _flow(kept: _Kept, key: Any) -> bool:
    if kept.has("latest", *key):
        return True
    target, source = key
    for mid_target, mid_source in kept.flows():
        if mid_target != target or mid_source[1][0] != "args" or mid_source[2] != "eq":
            continue
        via = (mid_source[0], mid_source[1][1], "")  # the earlier call's whole argument
        if len(mid_source[1]) == 2 and via != target and (via, source) in kept.flows():
            return True
    return False


def implied(kept: _Kept, c: Candidate) -> bool:
    if c.template in ("dataflow", "provenance"):
        return _flow(kept, c.key)
    if c.template == "latest":  # with one S per run, its latest call is its only one
        return kept.has("dataflow", *c.key) and _once(kept, c.key[1][0])
    if c.template in ("enum", "range", "distinct", "consumed", "same", "from_user"):
        return False
    return _temporal(kept, c.template, c.key)


def prune(found: Sequence[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    """(kept, dropped): ``found`` without what the rest implies, order kept."""
    kept = _Kept(found)
    dropped: set[int] = set()
    order = sorted(range(len(found)), key=lambda i: (_STRENGTH.get(found[i].template, 9), i))
    for i in order:
        c = found[i]
        kept.remove(c)
        if implied(kept, c):
            dropped.add(i)
        else:
            kept.add(c)
    return (
        [c for i, c in enumerate(found) if i not in dropped],
        [c for i, c in enumerate(found) if i in dropped],
    )
