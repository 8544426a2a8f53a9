"""JSON text to values for the trace loaders, as fast as it can be read exactly.

``orjson`` parses a JSON Lines corpus about twice as fast as ``json``, and reads the same
values, except in three places: an integer of 19 digits or more may come back as a float
(past 64 bits), and ``NaN`` / ``Infinity``, ``1e400`` and lone surrogates, which ``json``
accepts, are errors to it. So a text holding a run of 19 digits is read by ``json``
alone, and a line ``orjson`` rejects is read again by ``json``, which then accepts it or
raises its own error (the message the loaders report). The values are those of
``json.loads`` either way.

The cyclic garbage collector is paused while a file's records are built
(:func:`collector_paused`): JSON trees hold no reference cycles, and the collector's
passes over a growing heap of young dicts took as long as the parsing itself. What the
block built is then moved to the oldest generation: re-enabled as it was, the collector
would walk all of it at its next young collection, and again on the way up (a quarter of
the loading time for a file of records with arguments), to find nothing to free.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import numpy as np
import orjson

from agentguard.errors import TraceError

_DIGITS_AS_ZEROS: Final = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGIT_RUN: Final = b"0" * 19
"""The shortest integer ``orjson`` may read as a float (-9223372036854775809)."""
_STRIDE: Final = 9
"""Every 9th byte is looked at first: a run of 19 digits holds two bytes 9 apart that
are both looked at (it covers 19 >= 2 x 9 consecutive bytes), so a text in which no two
looked-at bytes in a row are digits has no such run; else the whole text is scanned."""


JsonText = str | bytes | memoryview
"""A JSON text: a string, or UTF-8 bytes (a memoryview of them: a line read in place)."""


def json_reader(text: str | bytes) -> Callable[[JsonText], Any]:
    """The fastest parser that reads every JSON value of ``text`` (a string, or UTF-8
    bytes) as ``json.loads`` reads its text; it reads ``text`` and the lines of it."""
    exact: Callable[[Any], Any] = json.loads
    if isinstance(text, bytes):
        raw, exact = text, _exact  # its lines may be memoryviews, which json does not take
    else:
        try:
            raw = text.encode()
        except UnicodeEncodeError:  # lone surrogates: orjson rejects them anyway
            return exact
    if _two_looked_at_digits(raw) and raw.translate(_DIGITS_AS_ZEROS).find(_LONG_DIGIT_RUN) >= 0:
        return exact
    return _loads


def _two_looked_at_digits(raw: bytes) -> bool:
    """Whether two bytes of ``raw`` looked at in a row (every :data:`_STRIDE` th) are
    both digits. A whole file's bytes are read in place as an array (no copy of the
    bytes looked at, no translation): about three fifths of the time the bytes' own
    methods take on a file, but several microseconds more on a short text (a result's
    JSON text is decoded through here), which keeps them."""
    if len(raw) < _ARRAY_FROM:
        return raw[::_STRIDE].translate(_DIGITS_AS_ZEROS).find(b"00") >= 0
    looked = np.frombuffer(raw, dtype=np.uint8)[::_STRIDE]
    digit = (looked - _ZERO) < 10  # (below "0" wraps past 10: no digit)
    return bool((digit[1:] & digit[:-1]).any())


_ARRAY_FROM: Final = 1 << 16
"""Texts of this many bytes or more are looked at as an array."""
_ZERO: Final = np.uint8(ord("0"))


def _loads(text: JsonText) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # json's reading of NaN, 1e400, ..., or json's error
        return _exact(text)


def _exact(text: JsonText) -> Any:
    """``json.loads`` of the text, bytes read as UTF-8 (``json`` would guess UTF-16 or
    UTF-32 from NUL bytes; a line that is not UTF-8 raises ``UnicodeDecodeError``)."""
    if isinstance(text, str):
        return json.loads(text)
    return json.loads(bytes(text).decode("utf-8"))


def file_text(raw: bytes, source: str) -> str:
    """A trace file's bytes as text: UTF-8, with or without a byte-order mark."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceError(f"{source}: cannot decode trace file ({exc})") from None


@contextmanager
def collector_paused(*, promote: bool = True) -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (restored as it was, even on
    error), and (``promote``) file what the block built with the long-lived objects.

    To promote, the young generations are collected first (what a collection would soon
    have done anyway), so the objects moved to the oldest generation afterwards
    (``gc.freeze()`` then ``gc.unfreeze()``, the documented way to do it) are the
    block's own; they are still collected there if they ever hold a cycle. Skipped when
    something else froze objects (its frozen set is left alone) or the collector was
    off (it stays off). Not worth it for a block that builds little (the calls of a short
    trace): the collection first would cost more than the young pass it saves.
    """
    was_enabled = gc.isenabled()
    promote = promote and was_enabled and gc.get_freeze_count() == 0
    if promote:
        gc.collect(1)
    gc.disable()
    try:
        yield
    finally:
        if promote and gc.get_freeze_count() == 0:  # (nothing froze objects meanwhile)
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


__all__ = ["JsonText", "collector_paused", "file_text", "json_reader"]
