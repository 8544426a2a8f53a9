"""What one constraint says, before the model acts, of a call to a given tool.

The firewall refuses a call when the monitor's peek makes a constraint VIOLATED (or, for
a finishing call, false at the end). For a quantifier-free constraint that question has
an exact answer over *every* call to a tool at once: a call to ``tool`` is one of the
automaton's letters of that tool's class, its argument tests fixed by its arguments and
its result tests open (the result does not exist yet). Enumerating the argument tests'
valuations gives, per valuation, whether the peek would say VIOLATED; the valuations
that pass, minimised, are the condition a model can read (``amount <= 500``).

Other constraints get an exact answer only where the call cannot move them (their
verdict and truth at the end stay); otherwise the answer is *unknown*, with the reason,
and the caller labels it conservative. Nothing here changes a node's state.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Final, Literal

from agentguard.errors import AgentGuardError
from agentguard.monitor.atoms import EventAtom, eval_event
from agentguard.monitor.fallback import FallbackNode
from agentguard.monitor.machine import OTHER, Letter
from agentguard.monitor.monitor import Monitor
from agentguard.monitor.nodes import AutomatonNode, BoolNode, Node
from agentguard.monitor.state_sets import set_final, set_verdict
from agentguard.monitor.verdict import Verdict
from agentguard.semantics.predicates import values_match
from agentguard.trace.model import Call

MAX_TESTS: Final = 8
"""Argument tests of one tool in one constraint beyond which its valuations (2^n) are
not enumerated: the answer is unknown (conservative), never guessed."""

MAX_ALTERNATIVES: Final = 16
"""Alternatives of a condition beyond which a conjunction of conditions is not expanded."""

Kind = Literal["free", "refused", "conditional", "unknown"]


@dataclass(frozen=True, slots=True)
class Test:
    """One argument-test atom of a condition, holding (``positive``) or not."""

    atom: EventAtom  # the argument part of an event atom (its result tests dropped)
    positive: bool

    @property
    def text(self) -> str:
        try:
            found = _TEXTS.get(self)
        except TypeError:  # an unhashable literal inside: printed each time
            return _text(self)
        if found is None:
            if len(_TEXTS) >= MAX_TEXTS:
                _TEXTS.clear()
            found = _TEXTS[self] = _text(self)
        return found

    def holds(self, call: Call) -> bool:
        """Does ``call`` pass this test? A test that cannot be evaluated does not pass."""
        try:
            value = eval_event(self.atom, call, {}, values_match, pending=True)
        except AgentGuardError:
            return False
        return value is self.positive


def _text(test: Test) -> str:
    from agentguard.language import printer

    tests = " & ".join(
        f"{printer.term(t.field)} {t.op} {printer.term(t.value)}" for t in test.atom.tests
    )
    return tests if test.positive else f"!({tests})"


_TEXTS: dict[Test, str] = {}
"""Each test's text, printed once (a conjunction of conditions is rebuilt per answer)."""
MAX_TEXTS: Final = 16_384


Alternative = tuple[Test, ...]
"""A conjunction of tests."""


@dataclass(frozen=True, slots=True)
class Outlook:
    """One constraint's answer for calls to one tool.

    ``free``: no call to the tool violates it now; ``refused``: every call does;
    ``conditional``: a call violates it unless it passes one of ``alternatives`` (a DNF
    over argument tests; exact); ``unknown``: not analysed (``reason``), to be treated
    conservatively. ``tested`` says the answer rests on evaluating argument tests (one
    that cannot be evaluated on a call's arguments is a predicate error, not a verdict).
    """

    kind: Kind
    alternatives: tuple[Alternative, ...] = ()
    reason: str = ""
    tested: bool = False
    when: tuple[tuple[str, ...], ...] = ()  # the alternatives as text, made once

    def __post_init__(self) -> None:
        if self.alternatives and not self.when:
            texts = tuple(tuple(dict.fromkeys(t.text for t in a)) for a in self.alternatives)
            object.__setattr__(self, "when", texts)

    def admits(self, call: Call) -> bool:
        """Does the call avoid this constraint's refusal, by what this answer knows?"""
        if self.kind == "free":
            return True
        if self.kind == "conditional":
            return any(all(t.holds(call) for t in alt) for alt in self.alternatives)
        return False


FREE: Final = Outlook("free")
REFUSED: Final = Outlook("refused")


def outlook(
    node: Node, tool: str, extra: Sequence[Call], *, ending: bool, base: Verdict
) -> Outlook:
    """The answer of ``node`` (whose verdict after ``extra`` is ``base``) for a call to
    ``tool`` proposed after the calls ``extra`` (in flight, results unknown)."""
    names = node.names
    if not extra and not ending and names is not None and tool not in names and node.stable():
        # the call cannot move it: its verdict stays (a part of a boolean node may be
        # violated already while the whole is not)
        return REFUSED if node.verdict() is Verdict.VIOLATED else FREE
    if isinstance(node, AutomatonNode):
        return _automaton(node, tool, extra, ending=ending)
    if isinstance(node, BoolNode):
        return _boolean(node, tool, extra, ending=ending, base=base)
    if not extra and names is not None and tool not in names and node.stable():
        # the call cannot move it: its verdict stays, and so does its truth at the end
        if node.verdict() is Verdict.VIOLATED:
            return REFUSED
        if not ending:
            return FREE
        final = node.final()
        if final is None:
            return Outlook("unknown", reason="its truth at the end is not known yet")
        return FREE if final else REFUSED
    if isinstance(node, FallbackNode) and not ending:
        return FREE  # checked only at the end of the run
    what = "checked at the end" if isinstance(node, FallbackNode) else "quantified"
    return Outlook("unknown", reason=f"{what}: conditions on the call not analysed")


def _boolean(
    node: BoolNode, tool: str, extra: Sequence[Call], *, ending: bool, base: Verdict
) -> Outlook:
    """Kleene ``and`` is violated iff a part is, ``or`` iff every part is."""
    if node.op == "not":
        return Outlook("unknown", reason="a negated part: not analysed")
    parts = [outlook(c, tool, extra, ending=ending, base=base) for c in node.children]
    tested = any(p.tested for p in parts)
    if node.op == "and":
        if any(p.kind == "refused" for p in parts):
            return Outlook("refused", tested=tested)
        unknown = [p for p in parts if p.kind == "unknown"]
        if unknown:
            return Outlook("unknown", reason=unknown[0].reason, tested=tested)
        alts: list[Alternative] = [()]
        for p in parts:
            if p.kind == "free":
                continue
            alts = [(*a, *b) for a in alts for b in p.alternatives]
            if len(alts) > MAX_ALTERNATIVES:
                return Outlook("unknown", reason="too many alternatives", tested=tested)
        return FREE if alts == [()] else Outlook("conditional", tuple(alts), tested=tested)
    if any(p.kind == "free" for p in parts):
        return Outlook("free", tested=tested)
    unknown = [p for p in parts if p.kind == "unknown"]
    if unknown:
        return Outlook("unknown", reason=unknown[0].reason, tested=tested)
    alts = [a for p in parts for a in p.alternatives]
    return Outlook("conditional", tuple(alts), tested=tested) if alts else REFUSED


def _automaton(node: AutomatonNode, tool: str, extra: Sequence[Call], *, ending: bool) -> Outlook:
    """Enumerate the valuations of the tool's argument tests (see the module docstring);
    without calls in flight, answers are kept per machine state (the machine is shared
    by every run of the spec, and its states are immutable)."""
    if node.error:
        return REFUSED  # a predicate raised: peek says VIOLATED for every call
    m = node.machine
    cls = tool if tool in m.names else OTHER
    if extra:
        return _enumerate(node, cls, tool, extra, ending=ending)
    count = node.count + (tool not in node.uncounted) if node.budget else 0
    memo = _memo(m)
    key = (node.state, cls, count, ending)
    found = memo.get(key)
    if found is None:
        if len(memo) >= MAX_MEMO:
            memo.clear()
        found = memo[key] = _enumerate(node, cls, tool, extra, ending=ending)
    return found


_MEMOS: dict[int, tuple[object, dict[tuple[int, str | None, int, bool], Outlook]]] = {}
"""Answers per machine (by identity, the machine kept so its id is not reused)."""
MAX_MEMOS: Final = 4096
MAX_MEMO: Final = 16_384  # answers kept per machine (a budget's count keys them too)


def _memo(machine: object) -> dict[tuple[int, str | None, int, bool], Outlook]:
    entry = _MEMOS.get(id(machine))
    if entry is not None and entry[0] is machine:
        return entry[1]
    if len(_MEMOS) >= MAX_MEMOS:  # bounded: dropped wholesale, rebuilt on demand
        _MEMOS.clear()
    memo: dict[tuple[int, str | None, int, bool], Outlook] = {}
    _MEMOS[id(machine)] = (machine, memo)
    return memo


def _enumerate(
    node: AutomatonNode, cls: str | None, tool: str, extra: Sequence[Call], *, ending: bool
) -> Outlook:
    m = node.machine
    data = m._data[cls]
    # each data atom: its argument part (None: no argument test, always possibly true)
    # and whether its truth also hangs on the result or outcome (open before the call ran)
    parts: list[EventAtom | None] = []
    open_: list[bool] = []
    for i in data:
        atom = m._event(i)
        arg_tests = tuple(t for t in atom.tests if not t.field.is_result)
        parts.append(EventAtom(atom.tool, arg_tests) if arg_tests else None)
        open_.append(
            atom.result is not None or atom.outcome is not None or len(arg_tests) < len(atom.tests)
        )
    variables = [b for b, p in enumerate(parts) if p is not None]
    if len(variables) > MAX_TESTS:
        return Outlook("unknown", reason=f"more than {MAX_TESTS} argument tests")
    try:
        states = {node.state}
        for c in extra:
            letters = m.letters_of(c, {}, pending=True)
            states = {m.step(s, letter) for s in states for letter in letters}
    except AgentGuardError:
        return Outlook("unknown", reason="a call in flight cannot be evaluated")
    count = node.count + sum(1 for c in extra if c.name not in node.uncounted) if node.budget else 0
    if node.budget and tool not in node.uncounted:
        count += 1
    good: list[tuple[bool, ...]] = []
    for valuation in product((False, True), repeat=len(variables)):
        value = dict(zip(variables, valuation, strict=True))
        if not _refused(node, states, _letters(cls, value, open_), count, ending=ending):
            good.append(valuation)
    tested = bool(variables)
    if len(good) == 1 << len(variables):
        return Outlook("free", tested=tested)
    if not good:
        return Outlook("refused", tested=tested)
    tests = [p for p in parts if p is not None]
    alternatives = tuple(
        tuple(Test(tests[i], v) for i, v in enumerate(term) if v is not None)
        for term in minimise(good, len(variables))
    )
    return Outlook("conditional", alternatives, tested=tested)


def _letters(cls: str | None, value: dict[int, bool], open_: list[bool]) -> Iterator[Letter]:
    """The letters a call may be when its argument tests take ``value``: a test that
    also reads the result is open when its argument part holds, false otherwise."""
    choices: list[tuple[int, ...]] = []
    for bit, is_open in enumerate(open_):
        holds = value.get(bit, True)
        if not holds:
            choices.append((0,))
        elif is_open:
            choices.append((0, 1))
        else:
            choices.append((1,))
    for combo in product(*choices):
        yield cls, sum(on << bit for bit, on in enumerate(combo))


def _refused(
    node: AutomatonNode, states: set[int], letters: Iterator[Letter], count: int, *, ending: bool
) -> bool:
    """Would the peek of such a call say VIOLATED (or, ending, false at the end)?"""
    m = node.machine
    after = {m.step(s, letter) for s in states for letter in letters}
    views = {node.view(s, count) for s in after} if node.budget else after
    if set_verdict(views, m) is Verdict.VIOLATED:
        return True
    if not ending:
        return False
    ends = {node.view(s, count, ending=True) for s in after} if node.budget else after
    return set_final(ends, m) is False


def ending_hint(monitor: Monitor, name: str) -> str:
    """The monitor's hint for ``name`` if the run ended now, kept per machine state for
    a quantifier-free constraint (the repair search is the costly part of an answer)."""
    node = monitor.node(name)
    if not isinstance(node, AutomatonNode) or node.budget or node.error:
        return monitor.hint(name, None, ending=True)
    memo = _memo(node.machine)
    key = (node.state, "\x00hint", 0, True)
    found = memo.get(key)
    if found is None:
        found = memo[key] = Outlook("unknown", reason=monitor.hint(name, None, ending=True))
    return found.reason


def minimise(minterms: Sequence[tuple[bool, ...]], width: int) -> list[tuple[bool | None, ...]]:
    """A small DNF covering exactly ``minterms`` (prime implicants, greedy cover);
    ``None`` marks a variable the term does not test."""
    terms: set[tuple[bool | None, ...]] = set(minterms)
    primes: set[tuple[bool | None, ...]] = set()
    while terms:
        merged: set[tuple[bool | None, ...]] = set()
        used: set[tuple[bool | None, ...]] = set()
        listed = sorted(terms, key=repr)
        for i, a in enumerate(listed):
            for b in listed[i + 1 :]:
                diff = [k for k in range(width) if a[k] != b[k]]
                if len(diff) == 1 and a[diff[0]] is not None and b[diff[0]] is not None:
                    merged.add(tuple(None if k == diff[0] else a[k] for k in range(width)))
                    used.update((a, b))
        primes |= terms - used
        terms = merged
    left = set(minterms)
    cover: list[tuple[bool | None, ...]] = []
    while left:
        best = max(sorted(primes, key=repr), key=lambda p: sum(_covers(p, t) for t in left))
        cover.append(best)
        left = {t for t in left if not _covers(best, t)}
    return cover


def _covers(term: tuple[bool | None, ...], minterm: tuple[bool, ...]) -> bool:
    return all(v is None or v == x for v, x in zip(term, minterm, strict=True))


__all__ = ["MAX_TESTS", "Alternative", "Outlook", "Test", "ending_hint", "minimise", "outlook"]
