"""Random propositional LTLf formulas and traces for the oracle tests, and their renderings.

The oracle tests need formulas that neither agentguard's parser nor any oracle produced,
so this module keeps its own tiny syntax tree, a seeded generator (plus a Hypothesis
strategy), and one printer per consumer: agentguard's concrete syntax, Spot's LTLf
syntax (future fragment only) and first-order MONA (every operator).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final, Literal

from hypothesis import strategies as st

#: Tool names the formulas talk about; every one is a legal agentguard identifier.
TOOLS: Final = ("a", "b", "c")
#: A tool no formula mentions: the "other" letter of the one-hot alphabet.
OTHER: Final = "d"
#: The alphabet of traces: exactly one tool name per position.
LETTERS: Final = (*TOOLS, OTHER)

Unary = Literal["!", "X", "N", "F", "G", "Y", "Z", "O", "H"]
Binary = Literal["&", "|", "->", "<->", "U", "W", "R", "S"]
Bounded = Literal["F<=", "G<=", "O<=", "H<="]

BOOLEAN_UNARY: Final[tuple[Unary, ...]] = ("!",)
BOOLEAN_BINARY: Final[tuple[Binary, ...]] = ("&", "|", "->", "<->")
FUTURE_UNARY: Final[tuple[Unary, ...]] = ("X", "N", "F", "G")
FUTURE_BINARY: Final[tuple[Binary, ...]] = ("U", "W", "R")
PAST_UNARY: Final[tuple[Unary, ...]] = ("Y", "Z", "O", "H")
PAST_BINARY: Final[tuple[Binary, ...]] = ("S",)
FUTURE_BOUNDED: Final[tuple[Bounded, ...]] = ("F<=", "G<=")
PAST_BOUNDED: Final[tuple[Bounded, ...]] = ("O<=", "H<=")


@dataclass(frozen=True, slots=True)
class Const:
    """``true`` or ``false``."""

    value: bool


@dataclass(frozen=True, slots=True)
class Atom:
    """The call at this position is the tool ``name``."""

    name: str


@dataclass(frozen=True, slots=True)
class Un:
    """A unary operator: negation, a next, an eventually/always or a past operator."""

    op: Unary
    arg: Formula


@dataclass(frozen=True, slots=True)
class Bin:
    """A binary connective or temporal operator."""

    op: Binary
    left: Formula
    right: Formula


@dataclass(frozen=True, slots=True)
class Bnd:
    """``F[<=k]``/``G[<=k]``: some / every position in i..i+k; ``O[<=k]``/``H[<=k]``: i-k..i."""

    op: Bounded
    bound: int
    arg: Formula


Formula = Const | Atom | Un | Bin | Bnd


@dataclass(frozen=True, slots=True)
class Fragment:
    """Which operators a generated formula may use."""

    name: str
    unary: tuple[Unary, ...]
    binary: tuple[Binary, ...]
    bounded: tuple[Bounded, ...]


FUTURE: Final = Fragment(
    "future", BOOLEAN_UNARY + FUTURE_UNARY, BOOLEAN_BINARY + FUTURE_BINARY, FUTURE_BOUNDED
)
PAST: Final = Fragment(
    "past", BOOLEAN_UNARY + PAST_UNARY, BOOLEAN_BINARY + PAST_BINARY, PAST_BOUNDED
)
MIXED: Final = Fragment(
    "mixed",
    BOOLEAN_UNARY + FUTURE_UNARY + PAST_UNARY,
    BOOLEAN_BINARY + FUTURE_BINARY + PAST_BINARY,
    FUTURE_BOUNDED + PAST_BOUNDED,
)
FRAGMENTS: Final = (FUTURE, PAST, MIXED)


# generation ------------------------------------------------------------------------


def random_formula(rng: random.Random, depth: int, fragment: Fragment = MIXED) -> Formula:
    """A formula of at most ``depth`` operator levels, drawn from ``fragment``."""
    if depth <= 0 or rng.random() < 0.15:
        return Const(rng.random() < 0.5) if rng.random() < 0.1 else Atom(rng.choice(TOOLS))
    kinds = ["unary"] * 4 + ["binary"] * 4 + ["bounded"] * (1 if fragment.bounded else 0)
    kind = rng.choice(kinds)
    if kind == "unary":
        return Un(rng.choice(fragment.unary), random_formula(rng, depth - 1, fragment))
    if kind == "binary":
        return Bin(
            rng.choice(fragment.binary),
            random_formula(rng, depth - 1, fragment),
            random_formula(rng, depth - 1, fragment),
        )
    return Bnd(
        rng.choice(fragment.bounded), rng.randint(0, 3), random_formula(rng, depth - 1, fragment)
    )


def random_trace(rng: random.Random, max_len: int, min_len: int = 0) -> tuple[str, ...]:
    """A word over :data:`LETTERS` of length min_len..max_len (short ones are likelier)."""
    length = min(rng.randint(min_len, max_len), rng.randint(min_len, max_len))
    return tuple(rng.choice(LETTERS) for _ in range(length))


def formulas(depth: int = 3, fragment: Fragment = MIXED) -> st.SearchStrategy[Formula]:
    """Hypothesis strategy over the same formulas as :func:`random_formula`."""
    leaves: st.SearchStrategy[Formula] = st.one_of(
        st.builds(Atom, st.sampled_from(TOOLS)), st.builds(Const, st.booleans())
    )

    def extend(sub: st.SearchStrategy[Formula]) -> st.SearchStrategy[Formula]:
        options: list[st.SearchStrategy[Formula]] = [
            st.builds(Un, st.sampled_from(fragment.unary), sub),
            st.builds(Bin, st.sampled_from(fragment.binary), sub, sub),
        ]
        if fragment.bounded:
            options.append(
                st.builds(Bnd, st.sampled_from(fragment.bounded), st.integers(0, 3), sub)
            )
        return st.one_of(options)

    return st.recursive(leaves, extend, max_leaves=2**depth)


def traces(max_len: int = 6) -> st.SearchStrategy[tuple[str, ...]]:
    """Hypothesis strategy over words on :data:`LETTERS`."""
    return st.lists(st.sampled_from(LETTERS), max_size=max_len).map(tuple)


def subformulas(formula: Formula) -> Iterator[Formula]:
    """Every node of ``formula``, root first."""
    yield formula
    if isinstance(formula, Un | Bnd):
        yield from subformulas(formula.arg)
    elif isinstance(formula, Bin):
        yield from subformulas(formula.left)
        yield from subformulas(formula.right)


def is_future(formula: Formula) -> bool:
    """True when no past operator occurs (Spot's LTLf only has future operators)."""
    return not any(
        (isinstance(f, Un) and f.op in PAST_UNARY)
        or (isinstance(f, Bin) and f.op == "S")
        or (isinstance(f, Bnd) and f.op in PAST_BOUNDED)
        for f in subformulas(formula)
    )


def size(formula: Formula) -> int:
    return sum(1 for _ in subformulas(formula))


# agentguard's concrete syntax -----------------------------------------------------------

#: How agentguard spells the constants; one place to change if the grammar differs.
AGENTGUARD_TRUE: Final = "true"
AGENTGUARD_FALSE: Final = "false"


def to_agentguard(formula: Formula) -> str:
    """Fully parenthesised agentguard text: ``(a U (X b))``, ``(F[<=2] c)``."""
    match formula:
        case Const(value):
            return AGENTGUARD_TRUE if value else AGENTGUARD_FALSE
        case Atom(name):
            return name
        case Un(op, arg):
            return f"({op} {to_agentguard(arg)})"
        case Bin(op, left, right):
            return f"({to_agentguard(left)} {op} {to_agentguard(right)})"
        case Bnd(op, bound, arg):
            return f"({op[0]}[<={bound}] {to_agentguard(arg)})"
    raise TypeError(formula)


# Spot (future LTLf, read with spot.from_ltlf) ------------------------------------------

_SPOT_UNARY: Final[dict[str, str]] = {"!": "!", "X": "X[!]", "N": "X", "F": "F", "G": "G"}
_SPOT_BINARY: Final[dict[str, str]] = {
    "&": "&",
    "|": "|",
    "->": "->",
    "<->": "<->",
    "U": "U",
    "W": "W",
    "R": "R",
}


def to_spot(formula: Formula) -> str:
    """Spot LTL text whose :func:`spot.from_ltlf` reading is the LTLf meaning of ``formula``.

    Under ``from_ltlf`` Spot's ``X[!]`` is the strong next and ``X`` the weak one. Bounded
    operators are expanded by hand: Spot's ``F[0..k]`` uses the weak ``X`` and would be true
    at the end of a trace.
    """
    match formula:
        case Const(value):
            return "true" if value else "false"
        case Atom(name):
            return name
        case Un(op, arg):
            if op not in _SPOT_UNARY:
                raise ValueError(f"Spot has no past operator {op!r}")
            return f"({_SPOT_UNARY[op]} {to_spot(arg)})"
        case Bin(op, left, right):
            if op not in _SPOT_BINARY:
                raise ValueError(f"Spot has no past operator {op!r}")
            return f"({to_spot(left)} {_SPOT_BINARY[op]} {to_spot(right)})"
        case Bnd(op, bound, arg) if op in FUTURE_BOUNDED:
            return to_spot(expand_bounded(op, bound, arg))
    raise TypeError(formula)


def expand_bounded(op: Bounded, bound: int, arg: Formula) -> Formula:
    """``F[<=k] φ = φ | X F[<=k-1] φ`` (strong next), ``G[<=k] φ = φ & N G[<=k-1] φ`` (weak),
    and the same backwards for ``O[<=k]`` (strong ``Y``) and ``H[<=k]`` (weak ``Z``)."""
    if bound == 0:
        return arg
    step: dict[Bounded, tuple[Binary, Unary]] = {
        "F<=": ("|", "X"),
        "G<=": ("&", "N"),
        "O<=": ("|", "Y"),
        "H<=": ("&", "Z"),
    }
    connective, move = step[op]
    return Bin(connective, arg, Un(move, expand_bounded(op, bound - 1, arg)))


# MONA (first-order logic over finite strings, every operator) ---------------------------


def mona_var(tool: str) -> str:
    """The second-order MONA variable holding the positions where ``tool`` is called."""
    return f"P{tool.upper()}"


def to_mona(formula: Formula, here: str = "x0") -> str:
    """First-order MONA text true exactly at the positions ``here`` where ``formula`` holds.

    Positions are quantified over the string only (M2L-Str), so ``X`` (there is a next
    position) is strong and ``N`` (every next position...) is weak without special cases.
    """
    counter = iter(range(1, 1_000_000))
    return _mona(formula, here, lambda: f"v{next(counter)}")


def _mona(f: Formula, x: str, fresh: Callable[[], str]) -> str:
    match f:
        case Const(value):
            return "true" if value else "false"
        case Atom(name):
            return f"({x} in {mona_var(name)})"
        case Un("!", arg):
            return f"(~{_mona(arg, x, fresh)})"
        case Un(op, arg):
            y = fresh()
            body = _mona(arg, y, fresh)
            return {
                "X": f"(ex1 {y}: {y} = {x} + 1 & {body})",
                "N": f"(all1 {y}: {y} = {x} + 1 => {body})",
                "F": f"(ex1 {y}: {x} <= {y} & {body})",
                "G": f"(all1 {y}: {x} <= {y} => {body})",
                "Y": f"(ex1 {y}: {y} + 1 = {x} & {body})",
                "Z": f"(all1 {y}: {y} + 1 = {x} => {body})",
                "O": f"(ex1 {y}: {y} <= {x} & {body})",
                "H": f"(all1 {y}: {y} <= {x} => {body})",
            }[op]
        case Bin(op, left, right) if op in BOOLEAN_BINARY:
            mona_op = {"&": "&", "|": "|", "->": "=>", "<->": "<=>"}[op]
            return f"({_mona(left, x, fresh)} {mona_op} {_mona(right, x, fresh)})"
        case Bin(op, left, right):
            y, z = fresh(), fresh()
            if op == "U":
                return (
                    f"(ex1 {y}: {x} <= {y} & {_mona(right, y, fresh)} & "
                    f"(all1 {z}: {x} <= {z} & {z} < {y} => {_mona(left, z, fresh)}))"
                )
            if op == "W":
                until, always = (
                    _mona(Bin("U", left, right), x, fresh),
                    _mona(Un("G", left), x, fresh),
                )
                return f"({until} | {always})"
            if op == "R":  # ψ holds until and including the first φ, or forever
                return (
                    f"(all1 {y}: {x} <= {y} => ({_mona(right, y, fresh)} | "
                    f"(ex1 {z}: {x} <= {z} & {z} < {y} & {_mona(left, z, fresh)})))"
                )
            # S: ψ at some y <= x and φ at every position after y up to x
            return (
                f"(ex1 {y}: {y} <= {x} & {_mona(right, y, fresh)} & "
                f"(all1 {z}: {y} < {z} & {z} <= {x} => {_mona(left, z, fresh)}))"
            )
        case Bnd(op, bound, arg):
            y = fresh()
            body = _mona(arg, y, fresh)
            if op == "F<=":
                return f"(ex1 {y}: {x} <= {y} & {y} <= {x} + {bound} & {body})"
            if op == "G<=":
                return f"(all1 {y}: {x} <= {y} & {y} <= {x} + {bound} => {body})"
            if op == "O<=":
                return f"(ex1 {y}: {y} <= {x} & {x} <= {y} + {bound} & {body})"
            return f"(all1 {y}: {y} <= {x} & {x} <= {y} + {bound} => {body})"
    raise TypeError(f)


def mona_program(formula: Formula) -> str:
    """A whole M2L-Str program: its DFA accepts the non-empty words where ``formula`` holds at 0."""
    variables = ", ".join(mona_var(t) for t in TOOLS)
    return f"m2l-str;\nvar2 {variables};\nex1 x0: x0 = 0 & {to_mona(formula, 'x0')};\n"


def sample_cases(
    seed: int, count: int, fragment: Fragment, depth: int, per_formula: int, max_len: int
) -> list[tuple[Formula, list[tuple[str, ...]]]]:
    """``count`` seeded formulas of ``fragment``, each with ``per_formula`` non-empty traces."""
    rng = random.Random(seed)
    return [
        (
            random_formula(rng, depth, fragment),
            [random_trace(rng, max_len, min_len=1) for _ in range(per_formula)],
        )
        for _ in range(count)
    ]


# ltlf2dfa (its own MONA encodings: LTLf for the future, PPLTL at the last position) -----


@dataclass(frozen=True)
class Ltlf2dfaDialect:
    """One of ltlf2dfa's two input languages: the operators it writes as we do, its
    spelling of our weak next (``N``) or weak yesterday (``Z``), and what it cannot take."""

    what: str
    unary: tuple[str, ...]
    weak: tuple[Unary, str]
    binary: tuple[str, ...]
    bounded: tuple[Bounded, ...]


#: LTLf for the future (``X`` strong, ``WX`` weak; ``W`` and bounded ops expanded)
LTLF: Final = Ltlf2dfaDialect(
    "a future LTLf formula",
    ("!", "X", "F", "G"),
    ("N", "WX"),
    (*BOOLEAN_BINARY, "U", "R"),
    FUTURE_BOUNDED,
)
#: PPLTL for a pure-past formula (``Y`` is ltlf2dfa's strong ``Y``, ``WY`` its weak one)
PPLTL: Final = Ltlf2dfaDialect(
    "a pure-past formula",
    ("!", "Y", "O", "H"),
    ("Z", "WY"),
    (*BOOLEAN_BINARY, "S"),
    PAST_BOUNDED,
)


def to_ltlf2dfa_text(formula: Formula, dialect: Ltlf2dfaDialect) -> str:
    """``formula`` in ltlf2dfa's ``dialect``; a ValueError if the dialect cannot say it."""
    match formula:
        case Const(value):
            return "true" if value else "false"
        case Atom(name):
            return name
        case Un(op, arg) if op in dialect.unary:
            return f"({op}({to_ltlf2dfa_text(arg, dialect)}))"
        case Un(op, arg) if op == dialect.weak[0]:
            return f"({dialect.weak[1]}({to_ltlf2dfa_text(arg, dialect)}))"
        case Bin("W", left, right) if dialect is LTLF:
            return to_ltlf2dfa_text(Bin("|", Bin("U", left, right), Un("G", left)), dialect)
        case Bin(op, left, right) if op in dialect.binary:
            left_text, right_text = (to_ltlf2dfa_text(x, dialect) for x in (left, right))
            return f"(({left_text}) {op} ({right_text}))"
        case Bnd(op, bound, arg) if op in dialect.bounded:
            return to_ltlf2dfa_text(expand_bounded(op, bound, arg), dialect)
    raise ValueError(f"not {dialect.what}: {to_agentguard(formula)}")


def to_ltlf2dfa(formula: Formula) -> str:
    """ltlf2dfa's LTLf text of a future formula."""
    return to_ltlf2dfa_text(formula, LTLF)


def to_ppltl(formula: Formula) -> str:
    """ltlf2dfa's PPLTL text of a pure-past formula."""
    return to_ltlf2dfa_text(formula, PPLTL)


def random_guarded_past(rng: random.Random, depth: int) -> Formula:
    """A Boolean combination of ``G p`` and ``F p`` with ``p`` pure past: the firewall's shape.

    At position 0 of a non-empty trace ``G p`` is ``H p`` at the last position and ``F p``
    is ``O p`` there, so ltlf2dfa's PPLTL can check these formulas independently.
    """
    if depth <= 1 or rng.random() < 0.4:
        return Un(rng.choice(("G", "F")), random_formula(rng, depth, PAST))
    if rng.random() < 0.3:
        return Un("!", random_guarded_past(rng, depth - 1))
    return Bin(
        rng.choice(BOOLEAN_BINARY),
        random_guarded_past(rng, depth - 1),
        random_guarded_past(rng, depth - 1),
    )


def guarded_past_to_ppltl(formula: Formula) -> str:
    """The PPLTL (at the last position) equivalent of a :func:`random_guarded_past` formula."""
    match formula:
        case Un("G", arg):
            return f"(H({to_ppltl(arg)}))"
        case Un("F", arg):
            return f"(O({to_ppltl(arg)}))"
        case Un("!", arg):
            return f"(!({guarded_past_to_ppltl(arg)}))"
        case Bin(op, left, right) if op in BOOLEAN_BINARY:
            return f"(({guarded_past_to_ppltl(left)}) {op} ({guarded_past_to_ppltl(right)}))"
    raise ValueError(f"not a guarded-past formula: {to_agentguard(formula)}")
