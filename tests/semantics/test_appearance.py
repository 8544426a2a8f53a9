"""The appearance rule behind ``PATH from SOURCE`` (agentguard/semantics/appearance.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard.semantics.appearance import Seen, appears, number_tokens, seen_of


def shown(*values: object) -> list[Seen]:
    return [seen_of(values)]


@pytest.mark.parametrize(
    ("value", "texts", "expected"),
    [
        ("US1330", ["send to US1330 now"], True),
        ("Spotify", ["Spotify Premium"], True),
        ("Spot", ["Spotify"], False),
        ("12", ["2012"], False),
        ("a.com/x", ["see https://a.com/x."], True),
        ("/x", ["a/x"], True),  # starts with no letter: no boundary asked before it
        ("x@y.z", ["mail x@y.z,"], True),
        ("US1330", ["us1330"], False),  # case-sensitive
        ("hello world", ["say hello world!"], True),
        ("hello", ["hello"], True),  # an equal text
        ("", ["x"], False),
        ("", ["x", ""], True),  # the empty text appears only where a text is ""
        ("é1", ["aé1"], False),  # letters are Unicode letters
    ],
)
def test_text_appears_at_token_boundaries(value: str, texts: list[str], expected: bool) -> None:
    """A text appears inside a longer text only at token boundaries, case-sensitive."""
    assert appears(value, shown(*texts)) is expected


def test_number_tokens() -> None:
    """Numbers are maximal tokens; a dash preceded by a digit separates."""
    assert list(number_tokens("2022-01-01")) == [2022, 1, 1]
    assert list(number_tokens("x -5 y")) == [-5]
    assert list(number_tokens("98.70 EUR")) == [98.7]
    assert list(number_tokens("a12 12b 2012")) == [2012]
    assert list(number_tokens("1.5.2")) == [1.5, 2]


@pytest.mark.parametrize(
    ("value", "source", "expected"),
    [
        (98.7, ["paid 98.70 EUR"], True),
        (100, [100.0], True),
        (100, ["100.00"], True),
        (12, ["2012"], False),
        (2022, ["2022-01-01"], True),
        (-5, ["x -5"], True),
        (1, [True], False),  # JSON types: 1 is not true
        (True, [1], False),
        (True, [{"ok": True}], True),
        (None, [[None]], True),
        (None, ["null"], False),
    ],
)
def test_numbers_and_constants(value: object, source: list[object], expected: bool) -> None:
    """Numbers match number leaves and tokens by value; bool and null only equal leaves."""
    assert appears(value, shown(*source)) is expected


def test_lists_and_mappings_need_every_leaf_value() -> None:
    """Every leaf value (not key) of a list or mapping must appear; empty ones do."""
    src = shown({"iban": "DE89 3704", "name": "Bob"}, "amount 10")
    assert appears(["Bob", 10], src)
    assert appears({"to": "Bob", "n": 10}, src)
    assert not appears(["Bob", "Eve"], src)
    assert appears([], src) and appears({}, src)
    assert appears("iban", src)  # a mapping key is a text of the source


def test_union_is_leaf_wise() -> None:
    """In a union, each leaf may come from a different part."""
    assert appears(["a", "b"], [seen_of(["a"]), seen_of(["b"])])


def test_text_never_spans_two_texts() -> None:
    """Texts are joined for searching, but a value never matches across two of them."""
    src = shown("ab", "cd")
    assert not appears("ab\x00cd", src)
    assert not appears("b cd", src)


@given(st.lists(st.one_of(st.text(max_size=8), st.integers(), st.floats(allow_nan=False))))
def test_save_restore_keeps_every_answer(values: list[object]) -> None:
    """A restored index answers as the saved one, for every value it holds."""
    seen = seen_of(values)
    back = Seen.restore(json.loads(json.dumps(seen.save())))
    for v in values:
        assert appears(v, [back]) == appears(v, [seen])
    assert back.numbers == seen.numbers and back.texts == seen.texts


@given(st.text(max_size=6), st.text(max_size=6), st.text(min_size=1, max_size=4))
def test_text_rule_matches_a_reference(before: str, after: str, value: str) -> None:
    """Against a one-text source, the rule equals a direct reading of its definition."""
    text = before + value + after
    expected = any(
        text.startswith(value, i)
        and (not value[0].isalnum() or i == 0 or not text[i - 1].isalnum())
        and (
            not value[-1].isalnum()
            or i + len(value) == len(text)
            or not text[i + len(value)].isalnum()
        )
        for i in range(len(text))
    )
    assert appears(value, shown(text)) is expected


@given(
    st.lists(st.text("ab1 .-é_\x00", max_size=8), max_size=4),
    st.text("ab1 .-é_", min_size=1, max_size=5),
)
def test_word_index_never_changes_an_answer(texts: list[str], value: str) -> None:
    """The whole-word shortcut answers as a search of each text alone would."""
    expected = any(
        any(
            t.startswith(value, i)
            and (not value[0].isalnum() or i == 0 or not t[i - 1].isalnum())
            and (
                not value[-1].isalnum()
                or i + len(value) == len(t)
                or not t[i + len(value)].isalnum()
            )
            for i in range(len(t))
        )
        for t in texts
    )
    assert appears(value, shown(*texts)) is expected
