"""One home of call identity: content keys for retries and digests, set keys for values."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.trace.identity import call_key, canonical, digest, value_key

ARGS = st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4) | st.booleans())


@settings(deadline=None)
@given(ARGS)
def test_a_call_key_is_its_argument_content(args: dict[str, object]) -> None:
    """Key order does not matter; the tool name and every value do."""
    reordered = dict(reversed(list(args.items())))
    assert call_key("t", args) == call_key("t", reordered)
    assert call_key("t", args) != call_key("u", args)
    assert call_key("t", args) != call_key("t", {**args, "\x00extra": 1})


def test_a_digest_hashes_the_canonical_content() -> None:
    """The log's result digest is SHA-256 of the canonical text, for any value."""
    value = {"b": [1, 2.5, None], "a": object}
    assert canonical(value).startswith('{"a":"<class ')
    assert digest(value) == hashlib.sha256(canonical(value).encode()).hexdigest()
    assert digest({"x": 1, "y": 2}) == digest({"y": 2, "x": 1})


def test_a_value_key_keeps_bools_apart_from_numbers() -> None:
    """1 and 1.0 share a key, True does not; an unhashable value has none."""
    assert value_key(1) == value_key(1.0)
    assert value_key(True) != value_key(1)
    assert value_key([1]) is None
