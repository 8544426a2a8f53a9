"""Spec regular expressions run on RE2: linear time, and a located error for what RE2 refuses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentguard import Firewall, load_traces
from agentguard.enforcement.decision import Action
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


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("secret", "caf\udce9_secret.txt", True),
        ("^caf._", "caf\udce9_secret.txt", True),  # the lone surrogate is one character
        ("^x.$", "x\udce9", True),
        ("^x$", "x\udce9", False),
        ("é", "caf\udce9", False),  # U+00E9 is not the surrogate that stands for its byte
        ("\ufffd", "a\ud800b", True),  # it is read as U+FFFD
    ],
)
def test_a_lone_surrogate_is_matched_as_one_replacement_character(
    pattern: str, text: str, matches: bool
) -> None:
    """A text RE2 cannot encode (a non-UTF-8 file name from ``os.listdir``) is matched, not raised on."""
    assert compile_regex(pattern).search(text) is matches
    assert _passes(f"G !write(text ~ /{pattern}/)", text=text) is not matches


def test_a_lone_surrogate_argument_is_judged_online_and_offline_alike(tmp_path: Path) -> None:
    """The firewall decides a lone-surrogate argument (no crash), logs it, and its log scores as online."""
    spec = parse_spec(
        "tool read_file(path: str)\n"
        "constraint no_secret := G !read_file(path ~ /secret/)\n"
        "constraint odd := F read_file(path ~ /^x.$/)"
    )
    log = tmp_path / "log.jsonl"
    fw = Firewall(spec, log_path=log, keep_trace=True)
    assert fw.propose("read_file", {"path": "caf\udce9_secret"}).action is Action.BLOCK
    assert fw.propose("read_file", {"path": "x\udce9"}).executes
    fw.record("read_file", {"path": "x\udce9"}, "r\udce9")
    report = fw.finish()
    (back,) = load_traces(log)
    assert back.trace is not None
    assert back.trace.calls[0].args == {"path": "x\udce9"}
    assert verify_trace(back.trace, spec) == report.compliance
