"""The JSON data a value becomes when it enters a trace: one home for what a tool's
Python result (or a call's argument) means once it is written down.

A trace is JSON data: the decision log writes each call as a JSON line, and ``check LOG``
judges what it reads back. A tool may return what JSON has no word for (a ``Decimal``, a
``date``, a ``set``, ``bytes``, a dataclass, a dict keyed by ``True``). Judged online as
the Python object and offline as its written form, such a value gave two verdicts for
one run (``Decimal("150.00") > 100`` held online; the log's ``"150.00"`` was text). So a
call's values are made JSON data when the call is built (:class:`~agentguard.trace.model.Call`),
and the log writes exactly that: online and offline judge the same document.

The conversions keep what a spec can test (a number stays a number, text stays text,
a collection stays a collection): see :func:`json_value`. Plain JSON data (the common
case) is returned as it is, found by one walk (:func:`plain`).

A leaf: it imports nothing from agentguard, so the trace model and the log share it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math
from collections.abc import Mapping, Sequence, Set
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

_SCALARS: Final = frozenset((str, bool, type(None)))
_INT_RANGE: Final = range(-(2**63), 2**64)
CIRCULAR: Final = "[circular]"
"""What a container that holds itself becomes where it recurs."""
TOO_DEEP: Final = "[too deep]"
"""What a value nested past Python's recursion limit becomes (no walk can reach its end)."""


def plain(value: Any) -> bool:
    """JSON data that orjson and ``json`` render alike (exact types: no subclasses); False
    for a container that holds itself or is nested too deep to walk."""
    try:
        return _plain(value)
    except RecursionError:
        return False


def _plain(value: Any) -> bool:
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is dict:  # loops, not all(): this runs for every line of the log
        for k, v in value.items():  # noqa: SIM110
            if type(k) is not str or not _plain(v):
                return False
        return True
    if kind is list or kind is tuple:
        for v in value:  # noqa: SIM110
            if not _plain(v):
                return False
        return True
    if kind is int:
        return value in _INT_RANGE
    if kind is float:
        return math.isfinite(value)
    return False


def json_value(value: Any) -> Any:
    """``value`` as JSON data (itself when it already is; ``json.dumps`` takes the result).

    * numbers stay numbers: ``int`` and ``float`` subclasses (``IntEnum``) their value,
      ``Decimal`` and ``Fraction`` a ``float`` (a whole number no float holds exactly, an
      ``int``); a ``bool`` stays a ``bool``;
    * text stays text: ``str`` subclasses their text, ``bytes`` their UTF-8 text (a byte
      that is none shown as ``\\xNN``), dates and times ``isoformat()``, a ``timedelta``
      its seconds, other enums their value, anything else ``str(value)`` (a ``UUID``, a
      path: what ``json.dumps(default=str)`` wrote before);
    * collections stay collections: a mapping a dict whose keys are text as
      ``json.dumps`` writes them (``True`` → ``"true"``, ``1`` → ``"1"``, any other key
      ``str(key)``), a sequence a list, a set a list in a fixed order (sorted by each
      member's JSON text), a dataclass the dict of its fields, a pydantic model its
      ``model_dump(mode="json")``, a numpy value its ``tolist()``;
    * a container that holds itself is :data:`CIRCULAR` where it recurs, and a value
      nested past the recursion limit is :data:`TOO_DEEP` (the loaders refuse such
      JSON too).

    ``NaN``, the infinities and integers past 64 bits are JSON data here (``json`` writes
    and reads them back exactly) and are kept.
    """
    if plain(value):
        return value
    try:
        return _convert(value, set())
    except RecursionError:
        return TOO_DEEP


def _convert(value: Any, path: set[int]) -> Any:
    kind = type(value)
    if kind in _SCALARS or kind is int or kind is float:
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, enum.Enum) and not isinstance(value, (int, float, str)):
        return _convert(value.value, path)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, (Decimal, Fraction)):
        return _number(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (Mapping, Sequence, Set)) or _is_record(value):
        key = id(value)
        if key in path:
            return CIRCULAR
        path.add(key)
        try:
            return _container(value, path)
        finally:
            path.discard(key)
    dump = _dump(value)
    if dump is not _NO_DUMP:
        return _convert(dump, path)
    return text_of(value)


def text_of(value: Any) -> str:
    """``str(value)``, or its ``repr``, or its type's name when both raise: a tool's result
    or error that cannot show itself as text still enters the trace (the call ran), as
    what can be said of it."""
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - any error of a foreign __str__
        try:
            return repr(value)
        except Exception:  # noqa: BLE001
            return f"<{type(value).__qualname__} that cannot be shown as text>"


def _number(value: Decimal | Fraction) -> Any:
    """A decimal or a fraction as JSON: :func:`exact_number`, else the nearest float (a
    result's ``Decimal("0.1000000000000000000001")``), else its text (a signalling NaN)."""
    exact = exact_number(value)
    if exact is not None:
        return exact
    try:
        return float(value)
    except (OverflowError, ValueError):
        return str(value)


def exact_number(value: Decimal | Fraction) -> float | int | None:
    """The JSON number that *is* ``value``, or None: its float when that is its value or
    when the float's shortest text reads back as it (``Decimal("19.99")``; NaN and the
    infinities as well), else the integer for a whole number of at most 4,000 digits
    (``Decimal("9007199254740993")``, which no float holds; Python writes no integer
    past 4,300 digits). A check judging arguments on that number judges their value."""
    try:
        number: float | None = float(value)
    except (OverflowError, ValueError):  # past a float's range; a signalling NaN
        number = None
    if number is not None and (
        number == value or number != number or type(value)(repr(number)) == value
    ):
        return number
    if isinstance(value, Decimal):
        whole = value.is_finite() and value.adjusted() < 4000
        whole = whole and value == value.to_integral_value()
    else:
        whole = value.denominator == 1 and value.numerator.bit_length() < 13_000
    return int(value) if whole else None


def _container(value: Any, path: set[int]) -> Any:
    if isinstance(value, Mapping):
        return {_key(k): _convert(v, path) for k, v in value.items()}
    if isinstance(value, Set):
        members = [_convert(v, path) for v in value]
        return sorted(members, key=_order)
    if isinstance(value, Sequence):
        return [_convert(v, path) for v in value]
    return {f.name: _convert(getattr(value, f.name), path) for f in dataclasses.fields(value)}


def _is_record(value: Any) -> bool:
    """A dataclass instance (not the class itself)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _key(key: Any) -> str:
    """A mapping key as ``json.dumps`` writes it (``str(key)`` for one it refuses)."""
    if isinstance(key, str):
        return str.__str__(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return json.dumps(float(key))
    return text_of(key)


def _order(member: Any) -> str:
    """A set member's place: its JSON text (members of mixed types have no other order)."""
    return json.dumps(member, sort_keys=True)


class _NoDump:
    """Type of :data:`_NO_DUMP`."""


_NO_DUMP: Final = _NoDump()


def _dump(value: Any) -> Any:
    """A pydantic model's JSON dump, or a numpy value's ``tolist()``; else :data:`_NO_DUMP`."""
    kind = type(value)
    model_dump = getattr(kind, "model_dump", None)
    if callable(model_dump) and not isinstance(value, type):
        try:
            return value.model_dump(mode="json")
        except Exception:  # noqa: BLE001 - a model that cannot dump itself is shown as text
            return _NO_DUMP
    tolist = getattr(kind, "tolist", None)
    if callable(tolist) and kind.__module__.split(".")[0] == "numpy":
        return value.tolist()
    return _NO_DUMP


__all__ = ["CIRCULAR", "TOO_DEEP", "json_value", "plain", "text_of"]
