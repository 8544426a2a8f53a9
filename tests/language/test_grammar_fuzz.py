"""Texts generated from the grammar itself (``hypothesis.extra.lark``): whatever the
generator produces, parsing gives a ``Spec`` or a ``SpecError`` — never
another exception, never a bare ``RecursionError``.

Two generators: the grammar's own terminal regexes (random names and literals, mostly
rejected early), and the same rules over a small vocabulary of names the resolver treats
specially (trace predicates, extractors, ``metrics``, outcomes) and literals at the edges
(bad escapes, an invalid or oversized regex, a 5000-digit number), which reach deep into
resolution. Examples are bounded so the file runs in seconds. (Generating from the
``formula_only`` start symbol is far slower and adds nothing: constraint bodies are formulas.)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark

from agentguard.errors import SpecError
from agentguard.language import ast, parse_spec
from agentguard.language.grammar import parser

_EMPTY_DIR = Path(tempfile.mkdtemp(prefix="agentguard-fuzz-"))  # relative imports find nothing
_NAMES = [
    *("a", "b", "x", "t", "m", "p", "any", "final_answer", "metrics", "result"),
    *("ok", "error", "Called", "CalledN", "InOrder", "CalledWith", "Predicate", "grounded"),
    *("args", "results", "tools", "str", "int", "HARD_STOP", "SOFT_BLOCK", "safety"),
]
_EDGE_TERMINALS = {
    "NAME": st.sampled_from(_NAMES).map(lambda s: f" {s} "),  # spaced: never glued to a keyword
    "QNAME": st.sampled_from(["`a b`", "`x`"]),
    "STRING": st.sampled_from(['"a"', "'b'", '"\\q"', "'\\x'", '""', '"a.ltl"', '"\\u0000"']),
    "REGEX": st.sampled_from(["/a+/i", "/[a-/", "/a{99999999999}/", "/\\//", "/(?x) a/"]),
    "SIGNED_NUMBER": st.sampled_from(["0", "1", "-1", "2.5", "1e999", "9" * 5000]),
    "INT": st.sampled_from(["0", "2", "10", "9" * 5000]),
}


def _fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


def _spec_or_spec_error(text: str) -> None:
    try:
        spec = parse_spec(text, base_dir=_EMPTY_DIR)
    except SpecError:
        return
    assert isinstance(spec, ast.Spec)


@_fuzz(25)
@given(from_lark(parser(), start="start"))
def test_any_spec_from_the_grammars_terminals_is_a_spec_or_a_spec_error(text: str) -> None:
    """A spec text with the grammar's own random terminals gives a Spec or a SpecError."""
    _spec_or_spec_error(text)


@_fuzz(50)
@given(from_lark(parser(), start="start", explicit=_EDGE_TERMINALS))
def test_any_spec_over_edge_names_is_a_spec_or_a_spec_error(text: str) -> None:
    """A spec text over special names and edge literals gives a Spec or a SpecError."""
    _spec_or_spec_error(text)


_BIG = "9" * 5000


@pytest.mark.parametrize(
    "text",
    [
        f"constraint c := a(k = {_BIG})",
        f"constraint c := F[<={_BIG}] a",
        f"constraint c := a(k[{_BIG}] = 1)",
        f"constraint c severity SOFT_BLOCK({_BIG}) := a",
        "constraint c := a(k ~ /a{1001}/)",
        "constraint c := a(k = '\\x')",
        'import "\\u0000"',
    ],
    ids=["number", "bound", "index", "count", "regex-repeat", "escape", "nul-import"],
)
def test_fuzzer_findings_are_spec_errors(text: str) -> None:
    """Inputs that once escaped as bare ValueError/OverflowError/SyntaxError are SpecErrors."""
    with pytest.raises(SpecError):
        parse_spec(text, base_dir=_EMPTY_DIR)
