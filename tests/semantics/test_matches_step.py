"""``PATH[~ /pattern/flags]``: the parts of a text a pattern matches, as a list, so a
``from`` test can say where *each link in a body* came from (a whole-value test cannot:
the body is the agent's own text). Offline and online agree (the property tests of
tests/monitor/test_provenance.py run templates with the step too)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import Firewall, format_spec, verify_trace
from agentguard.errors import SpecSyntaxError
from agentguard.language import parse_spec
from agentguard.language.ast import matches_step
from agentguard.semantics.values import MISSING, get_path
from agentguard.trace.model import Call, Trace

LINKS = r"/(https?:\/\/|\bwww\.)[\w.\/~%?#=&+-]*\w/i"
SPEC = f"constraint links := G !send(body[~ {LINKS}] not from user)"


def _allowed(user_text: str, body: object) -> tuple[bool, bool]:
    """(offline verdict, online decision) for one user message and one send."""
    spec = parse_spec(SPEC)
    trace = Trace([Call.message("user", user_text), Call("send", {"body": body})])
    offline = verify_trace(trace, spec).constraints[0].passed
    fw = Firewall(spec)
    fw.observe("user", user_text)
    online = fw.propose("send", {"body": body}).executes
    return offline, online


@pytest.mark.parametrize(
    ("user_text", "body", "allowed"),
    [
        ("send Alice www.informations.com", "the article: www.informations.com.", True),
        ("send Alice www.informations.com", "www.informations.com and www.evil.example", False),
        ("say hi to Alice", "hi Alice!", True),  # no link: nothing to come from anywhere
        ("say hi to Alice", "log in at HTTPS://evil.example/login now", False),
        ("open https://a.example/x?id=1", "see https://a.example/x?id=1", True),
        ("open https://a.example/x?id=1", "see https://a.example/x?id=2", False),
        # a structure instead of a text hides nothing: every text in it is read
        ("say hi", ["hi", {"note": "www.evil.example"}], False),
        ("say hi", {"www.evil.example": "key"}, False),
        ("say hi", 7, True),  # a number holds no link
    ],
)
def test_each_link_must_come_from_the_user(user_text: str, body: object, allowed: bool) -> None:
    assert _allowed(user_text, body) == (allowed, allowed)


def test_a_missing_argument_is_bottom_for_both_tests() -> None:
    spec = parse_spec(
        f"constraint a := G !send(body[~ {LINKS}] not from user)\n"
        f"constraint b := G !send(body[~ {LINKS}] from user)"
    )
    report = verify_trace(Trace([Call("send", {})]), spec)
    assert [c.passed for c in report.constraints] == [True, True]


def test_the_step_works_in_any_test_and_after_it_the_path_goes_on() -> None:
    step = matches_step(r"[0-9]+", "")
    assert get_path({"t": "a 12 b 7"}, ("t", step)) == ["12", "7"]
    assert get_path({"t": [{"n": "x1"}, {"n": "y22"}]}, ("t", step)) == ["1", "22"]
    assert get_path({}, ("t", step)) is MISSING
    spec = parse_spec('constraint c := G !send(body[~ /[0-9]{4}/] contains "1234")')
    assert not verify_trace(Trace([Call("send", {"body": "pin 1234"})]), spec).score
    assert verify_trace(Trace([Call("send", {"body": "pin 12345"})]), spec).score == 0.0
    assert verify_trace(Trace([Call("send", {"body": "pin 4321"})]), spec).score == 1.0


def test_the_printer_writes_it_back() -> None:
    spec = parse_spec(SPEC)
    assert f"body[~ {LINKS}]" in format_spec(spec)
    assert format_spec(parse_spec(format_spec(spec))) == format_spec(spec)


def test_an_invalid_pattern_is_located() -> None:
    with pytest.raises(SpecSyntaxError) as caught:
        parse_spec("constraint c :=\n  G !send(body[~ /(a/] not from user)", source="s.ltl")
    assert "s.ltl:2:" in str(caught.value)
    assert "invalid regular expression literal" in str(caught.value)
    with pytest.raises(SpecSyntaxError, match="backreferences"):
        parse_spec(r"constraint c := G !send(body[~ /(a)\1/] not from user)")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab1. /w", max_size=40))
def test_matches_are_the_regex_s_non_empty_matches(text: str) -> None:
    """Law: the step's list is what Python's re.finditer finds (non-empty matches), for
    a pattern both engines read alike."""
    import re

    step = matches_step(r"w+\.[ab1]+", "")
    expected = [m.group(0) for m in re.finditer(r"w+\.[ab1]+", text) if m.group(0)]
    assert get_path({"t": text}, ("t", step)) == expected


def test_a_part_is_what_the_text_holds_lone_surrogates_included() -> None:
    """Found from outside: a body equal to the user's text holding a lone surrogate (a
    file name that is not UTF-8) was refused, its parts cut from the U+FFFD reading."""
    step = matches_step(r"\S+", "")
    assert get_path({"t": "r\udce9 ok"}, ("t", step)) == ["r\udce9", "ok"]
    spec = parse_spec(r"constraint words := G !send(body[~ /\S+/] not from user)")
    user = "report_\udce9.txt is ready"
    same = Trace([Call.message("user", user), Call("send", {"body": user})])
    other = Trace([Call.message("user", "report_\ufffd.txt"), Call("send", {"body": user})])
    assert verify_trace(same, spec).score == 1.0
    assert verify_trace(other, spec).score == 0.0
