"""A result given as JSON text is decoded as ``json.loads`` reads it, whichever parser runs."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.trace.call_fields import decode_result
from agentguard.trace.model import Call

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()  # big ones too: orjson would read them as floats
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)  # json writes NaN and Infinity
    | st.text()  # lone surrogates included
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def _reference(value: str) -> Any:
    """decode_result as it was written with json alone (the same tests, then json.loads)."""
    if not value:
        return value
    first = value[0]
    if first not in "{[tfn-0123456789" and not first.isspace():
        return value
    text = value.strip()
    numeric = bool(text) and (text[0].isdigit() or (text[0] == "-" and text[1:2].isdigit()))
    if text[:1] in ("{", "[") or text in ("true", "false", "null") or numeric:
        try:
            return json.loads(text)
        except ValueError:
            return value
    return value


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@settings(max_examples=400, deadline=None)
@given(_VALUES, st.sampled_from(["", " ", "\n"]))
def test_json_text_decodes_as_json_loads(value: Any, pad: str) -> None:
    """Every JSON text (big integers, NaN, infinities, surrogates, nesting) decodes to the
    value json.loads gives, of the same types."""
    text = pad + json.dumps(value) + pad
    got = decode_result(text)
    if isinstance(value, (dict, list)):
        assert _same(got, json.loads(text))
    assert _same(Call("t", {}, text).result, got)


@settings(max_examples=400, deadline=None)
@given(
    st.text()
    | st.text(alphabet='{}[]":,0123456789.eE+- \ntruefalsnNaIiy\\u', max_size=30)
    | _VALUES.map(json.dumps).map(lambda t: t[: len(t) // 2])  # cut short: invalid
)
def test_any_text_decodes_as_the_json_only_reading(text: str) -> None:
    """Any text (JSON, broken JSON, plain words) decodes to what json alone made of it."""
    assert _same(decode_result(text), _reference(text))
