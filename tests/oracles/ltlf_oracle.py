"""Independent LTLf oracles: DFAs built by Spot and by MONA over the one-hot tool alphabet.

agentguard's evaluator and online monitor are checked against these. Neither engine
shares code with agentguard:

- **Spot** (``spottl``) reads the future fragment with :func:`spot.from_ltlf`; the
  Büchi automaton is cut back to finite words with :func:`spot.to_finite`.
- **MONA** decides the first-order encoding of every operator (past included) over
  finite strings (M2L-Str) and prints a minimal DFA.

Either way the automaton is read over the letters :data:`~tests.oracles.formulas.LETTERS`,
each letter being exactly one tool name: that restriction *is* the "exactly one name
holds per position" constraint, applied to transitions instead of conjoined as a formula.
The empty trace is outside both engines' languages (Spot requires ``alive`` at 0; MONA's
``x0 = 0`` needs a position), so :func:`empty_trace_holds` states its convention directly.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from .formulas import (
    LETTERS,
    TOOLS,
    Atom,
    Bin,
    Bnd,
    Const,
    Formula,
    Un,
    guarded_past_to_ppltl,
    is_future,
    mona_program,
    mona_var,
    to_ltlf2dfa,
    to_spot,
)

VerdictName = Literal["SATISFIED", "VIOLATED", "PENDING"]
Classification = Literal["safety", "mixed", "liveness"]
Engine = Literal["spot", "mona"]


class OracleError(RuntimeError):
    """An oracle engine is missing or produced output this module cannot read."""


@dataclass(frozen=True, slots=True)
class Dfa:
    """A complete DFA over :data:`LETTERS` whose language is the non-empty satisfying words.

    ``verdict[s]`` is the prefix verdict of any word ending in state ``s``: SATISFIED when
    every state reachable from ``s`` (``s`` included) accepts, VIOLATED when none does.
    """

    initial: int
    delta: tuple[tuple[int, ...], ...]  # delta[state][letter index]
    accepting: frozenset[int]
    verdict: tuple[VerdictName, ...]

    def run(self, word: Sequence[str]) -> int:
        state = self.initial
        for letter in word:
            state = self.delta[state][_LETTER_INDEX[letter]]
        return state

    def accepts(self, word: Sequence[str]) -> bool:
        """Whether the non-empty ``word`` satisfies the formula."""
        if not word:
            raise OracleError("the DFA does not decide the empty trace; use empty_trace_holds")
        return self.run(word) in self.accepting

    def verdicts(self, word: Sequence[str]) -> list[VerdictName]:
        """The prefix verdict after each letter of ``word`` (``len(word)`` entries)."""
        out: list[VerdictName] = []
        state = self.initial
        for letter in word:
            state = self.delta[state][_LETTER_INDEX[letter]]
            out.append(self.verdict[state])
        return out

    @property
    def num_states(self) -> int:
        return len(self.delta)


_LETTER_INDEX: Final[Mapping[str, int]] = {letter: i for i, letter in enumerate(LETTERS)}


def build_dfa(
    initial: frozenset[int],
    successors: Mapping[tuple[int, int], frozenset[int]],
    accepting: frozenset[int],
) -> Dfa:
    """Subset-construct the complete DFA of an automaton given as ``(state, letter) -> states``.

    The automaton accepts a word when some run ends in ``accepting``; a missing entry in
    ``successors`` means no move. The result is reachable-only, with verdicts attached.
    """
    index: dict[frozenset[int], int] = {initial: 0}
    order = [initial]
    delta: list[tuple[int, ...]] = []
    for subset in order:  # grows while iterating: breadth-first over reachable subsets
        row = []
        for letter in range(len(LETTERS)):
            target = frozenset(t for s in subset for t in successors.get((s, letter), ()))
            if target not in index:
                index[target] = len(order)
                order.append(target)
            row.append(index[target])
        delta.append(tuple(row))
    dfa_accepting = frozenset(i for i, subset in enumerate(order) if subset & accepting)
    return Dfa(0, tuple(delta), dfa_accepting, _verdicts(tuple(delta), dfa_accepting))


def _verdicts(
    delta: tuple[tuple[int, ...], ...], accepting: frozenset[int]
) -> tuple[VerdictName, ...]:
    """Per state: can it still reach acceptance, and can it still reach rejection."""
    n = len(delta)
    predecessors: list[set[int]] = [set() for _ in range(n)]
    for s, row in enumerate(delta):
        for t in row:
            predecessors[t].add(s)

    def backward(seeds: set[int]) -> set[int]:
        seen, todo = set(seeds), list(seeds)
        while todo:
            for p in predecessors[todo.pop()]:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        return seen

    may_accept = backward(set(accepting))
    may_reject = backward(set(range(n)) - accepting)
    out: list[VerdictName] = []
    for s in range(n):
        if s not in may_accept:
            out.append("VIOLATED")
        elif s not in may_reject:
            out.append("SATISFIED")
        else:
            out.append("PENDING")
    return tuple(out)


# Spot ------------------------------------------------------------------------------


def import_spot() -> tuple[Any, Any]:
    """Import Spot and its BDD library with SWIG's import-time DeprecationWarnings silenced.

    Under ``filterwarnings = error`` those warnings are raised inside the extension's
    module initialisation, which crashes the interpreter (a segfault, not an exception).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import spot
        from spot import buddy
    return spot, buddy


@functools.cache
def spot_available() -> bool:
    """Whether Spot imports (``pip install spottl``)."""
    try:
        import_spot()
    except ImportError:
        return False
    return True


@functools.cache
def spot_dfa(formula: Formula) -> Dfa:
    """DFA of a future-only formula through ``spot.from_ltlf`` and ``spot.to_finite``."""
    if not is_future(formula):
        raise OracleError("Spot has no past operators; use mona_dfa")
    spot, buddy = import_spot()
    ltl = spot.from_ltlf(spot.formula(to_spot(formula)), "alive")
    aut = spot.to_finite(spot.translate(ltl, "buchi", "sbacc", "deterministic"), "alive")
    variables = {t: buddy.bdd_ithvar(aut.register_ap(t)) for t in TOOLS}
    letters = []
    for letter in LETTERS:  # one-hot valuation: exactly the letter's tool holds
        cube = buddy.bddtrue
        for tool, var in variables.items():
            cube = buddy.bdd_and(cube, var if tool == letter else buddy.bdd_not(var))
        letters.append(cube)
    successors: dict[tuple[int, int], frozenset[int]] = {}
    for s in range(aut.num_states()):
        for edge in aut.out(s):
            for i, cube in enumerate(letters):
                if buddy.bdd_and(cube, edge.cond) != buddy.bddfalse:
                    successors[(s, i)] = successors.get((s, i), frozenset()) | {edge.dst}
    accepting = frozenset(s for s in range(aut.num_states()) if aut.state_is_accepting(s))
    return build_dfa(frozenset({aut.get_init_state_number()}), successors, accepting)


# MONA ------------------------------------------------------------------------------

_TRANSITION: Final = re.compile(r"^State (\d+): ([01X]*) -> state (\d+)$")


def mona_available() -> bool:
    return shutil.which("mona") is not None


def engine_available(engine: Engine) -> bool:
    return spot_available() if engine == "spot" else mona_available()


@functools.cache
def mona_dfa(formula: Formula) -> Dfa:
    """DFA of any formula (past included) from MONA's minimal automaton of its FOL encoding."""
    return parse_mona_output(run_mona(mona_program(formula)))


def run_mona(program: str) -> str:
    """Run ``mona -q -u -w`` on ``program`` (read from stdin) and return its output."""
    if not mona_available():
        raise OracleError("the `mona` executable is not installed (apt-get install mona)")
    done = subprocess.run(
        ["mona", "-q", "-u", "-w", "/dev/stdin"],
        input=program,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0 or "Transitions:" not in done.stdout:
        raise OracleError(f"mona failed on:\n{program}\n{done.stdout}\n{done.stderr}")
    return done.stdout


def parse_mona_output(text: str, variable: Callable[[str], str] = mona_var) -> Dfa:
    """Read MONA's ``-w`` listing; its state 0 only eats MONA's leading dummy letter.

    ``variable(tool)`` names the set variable of ``tool`` in the program.
    """
    free: list[str] = []
    accepting: frozenset[int] = frozenset()
    rows: list[tuple[int, str, int]] = []
    for line in text.splitlines():
        if line.startswith("DFA for formula with free variables:"):
            free = line.split(":", 1)[1].split()
        elif line.startswith("Accepting states:"):
            accepting = frozenset(int(s) for s in line.split(":", 1)[1].split())
        elif match := _TRANSITION.match(line.strip()):
            rows.append((int(match[1]), match[2], int(match[3])))
    valuations = [
        {var: var == variable(letter) for var in free} for letter in LETTERS
    ]  # OTHER sets every variable false
    successors: dict[tuple[int, int], frozenset[int]] = {}
    for source, bits, target in rows:
        for i, valuation in enumerate(valuations):
            if all(
                b == "X" or (b == "1") == valuation[var] for var, b in zip(free, bits, strict=True)
            ):
                successors[(source, i)] = successors.get((source, i), frozenset()) | {target}
    start = {t for (s, _), targets in successors.items() if s == 0 for t in targets}
    if len(start) != 1 or any(len(t) != 1 for t in successors.values()):
        raise OracleError(f"MONA's automaton is not deterministic as expected:\n{text}")
    return build_dfa(frozenset(start), successors, accepting)


# ltlf2dfa (a second, independent MONA encoding) ------------------------------------------


@functools.cache
def ltlf2dfa_dfa(formula: Formula) -> Dfa:
    """DFA from ltlf2dfa's own encoding: LTLf for future formulas, else guarded-past PPLTL."""
    from ltlf2dfa.base import MonaProgram  # type: ignore[import-untyped, unused-ignore]
    from ltlf2dfa.parser.ltlf import LTLfParser  # type: ignore[import-untyped, unused-ignore]
    from ltlf2dfa.parser.ppltl import PPLTLParser  # type: ignore[import-untyped, unused-ignore]

    if is_future(formula):
        parsed = LTLfParser()(to_ltlf2dfa(formula))
    else:
        parsed = PPLTLParser()(guarded_past_to_ppltl(formula))
    return parse_mona_output(run_mona(MonaProgram(parsed).mona_program()), str.upper)


# the answers -----------------------------------------------------------------------


def empty_trace_holds(formula: Formula) -> bool:
    """The documented convention: evaluate at position 0 of a trace with no positions.

    Atoms are false; a claim that some position exists (``X F U S Y O F[<=k] O[<=k]``) is
    false; a claim about every position (``N G W R Z H G[<=k] H[<=k]``) is vacuously true.
    It coincides with the first-order reading where every quantifier ranges over no position.
    """
    match formula:
        case Const(value):
            return value
        case Atom():
            return False
        case Un("!", arg):
            return not empty_trace_holds(arg)
        case Un(op, _):
            return op in ("N", "G", "Z", "H")
        case Bin("&", left, right):
            return empty_trace_holds(left) and empty_trace_holds(right)
        case Bin("|", left, right):
            return empty_trace_holds(left) or empty_trace_holds(right)
        case Bin("->", left, right):
            return (not empty_trace_holds(left)) or empty_trace_holds(right)
        case Bin("<->", left, right):
            return empty_trace_holds(left) == empty_trace_holds(right)
        case Bin(op, _, _):
            return op in ("W", "R")
        case Bnd(op, _, _):
            return op in ("G<=", "H<=")
    raise TypeError(formula)


def dfa(formula: Formula, engine: Engine) -> Dfa:
    return spot_dfa(formula) if engine == "spot" else mona_dfa(formula)


def oracle_holds(formula: Formula, word: Sequence[str], engine: Engine = "mona") -> bool:
    """Does ``formula`` hold at position 0 of ``word``, by ``engine`` (empty: the convention)."""
    if not word:
        return empty_trace_holds(formula)
    return dfa(formula, engine).accepts(word)


def oracle_verdicts(
    formula: Formula, word: Sequence[str], engine: Engine = "mona"
) -> list[VerdictName]:
    """The prefix verdict after each call of ``word``, by ``engine``."""
    return dfa(formula, engine).verdicts(word)


def classify(
    formula: Formula, engine: Engine = "mona", *, include_empty: bool = True
) -> Classification:
    """Safety / mixed / liveness on finite traces, read off the DFA.

    **safety**: every violating trace has a bad prefix (a prefix, possibly empty, that no
    continuation repairs); **liveness**: no trace has a bad prefix; **mixed** otherwise.
    ``G(a -> X b)`` is mixed: the trace ``a`` violates with no bad prefix, ``a c`` is one.
    With ``include_empty`` the empty trace is a trace too (judged by
    :func:`empty_trace_holds`): then ``a`` is mixed, since ending before any call violates
    it and no prefix of the empty trace is bad; without, ``a`` is safety.
    """
    automaton = dfa(formula, engine)
    first = set(automaton.delta[automaton.initial])
    reachable, todo = set(first), list(first)
    while todo:
        for t in automaton.delta[todo.pop()]:
            if t not in reachable:
                reachable.add(t)
                todo.append(t)
    dead = {s for s in reachable if automaton.verdict[s] == "VIOLATED"}
    rejecting = {s for s in reachable if s not in automaton.accepting}
    empty_rejected = include_empty and not empty_trace_holds(formula)
    empty_dead = empty_rejected and first <= dead  # nothing at all satisfies the formula
    if rejecting <= dead and (empty_dead or not empty_rejected):
        return "safety"
    return "mixed" if dead or empty_dead else "liveness"
