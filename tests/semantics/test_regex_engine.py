"""Spec regular expressions run on RE2: linear time, and a located error for what RE2 refuses."""

from __future__ import annotations

import re

import pytest

from agentguard.errors import SpecSemanticError
from agentguard.language import parse_spec
from agentguard.scoring import verify_trace
from agentguard.semantics.values import CompiledRegex, compare, compile_regex


def _passes(formula: str, **args: str) -> bool:
    spec = parse_spec(f"constraint c := {formula}")
    return verify_trace([{"name": "write", "args": args}], spec).passed


def test_nested_quantifier_pattern_on_a_long_argument_is_decided() -> None:
    """`/^(a+)+$/` on a 10 kB near-miss (exponential for backtracking engines) is simply false."""
    assert _passes("G !write(text ~ /^(a+)+$/)", text="a" * 10_000 + "!")
    assert not _passes("G !write(text ~ /^(a+)+$/)", text="a" * 10_000)


@pytest.mark.parametrize(
    ("pattern", "where"),
    [(r"(a)\1", "backreferences"), ("(?=a)", "look-around"), ("(?<!a)b", "look-around")],
)
def test_patterns_re2_cannot_take_are_located_spec_errors(pattern: str, where: str) -> None:
    """Backreferences and look-around are refused at load time with the line and column."""
    text = f"constraint c :=\n  G !write(text ~ /{pattern}/)"
    with pytest.raises(SpecSemanticError) as info:
        parse_spec(text)
    problem = info.value.problems[0]
    assert problem.location is not None
    assert (problem.location.line, problem.location.column) == (2, 19)
    assert "backreferences or look-around" in problem.message, where


def test_flags_keep_their_meaning() -> None:
    """i, m and s flags mean what they mean in Python's re."""
    assert compare("CONFIG", "~", compile_regex("config", "i"))
    assert compare("x\nend", "~", compile_regex("^end$", "m"))
    assert not compare("x\nend", "~", compile_regex("^end$"))
    assert compare("a\nb", "~", compile_regex("a.b", "s"))
    assert not compare("a\nb", "~", compile_regex("a.b"))


def test_verbose_flag_is_refused_with_a_reason() -> None:
    """RE2 has no verbose mode, so /.../x is an error rather than a silently different pattern."""
    with pytest.raises(re.error, match="verbose"):
        compile_regex("a b", "x")


def test_python_end_of_text_escape_is_translated() -> None:
    r"""`\Z` means end of text as in Python; an escaped backslash before Z stays literal."""
    assert compare("a.env", "~", compile_regex(r"\.env\Z"))
    assert not compare("a.env.bak", "~", compile_regex(r"\.env\Z"))
    assert compare("x\\Z", "~", compile_regex(r"\\Z"))


def test_compiled_patterns_are_cached_values() -> None:
    """Compiling twice gives the same object; equality ignores the engine handle."""
    assert compile_regex("ab+", "i") is compile_regex("ab+", "i")
    assert isinstance(compile_regex("ab"), CompiledRegex)
    assert compile_regex("ab") == CompiledRegex("ab", "", None)


def test_non_text_values_never_match() -> None:
    """A number or a missing argument neither matches nor fails `!~` by accident."""
    assert not compare(5, "~", compile_regex("5"))
    assert not compare(5, "!~", compile_regex("5"))
