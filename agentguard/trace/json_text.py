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
passes over a growing heap of young dicts took as long as the parsing itself.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import orjson

_DIGITS_AS_ZEROS: Final = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGIT_RUN: Final = b"0" * 19
"""The shortest integer ``orjson`` may read as a float (-9223372036854775809)."""
_STRIDE: Final = 9
"""Every 9th byte is looked at first: a run of 19 digits holds two bytes 9 apart that
are both looked at (it covers 19 >= 2 x 9 consecutive bytes), so a text in which no two
looked-at bytes in a row are digits has no such run; else the whole text is scanned."""


def json_reader(text: str) -> Callable[[str], Any]:
    """The fastest parser that reads every JSON value of ``text`` as ``json.loads`` does."""
    try:
        raw = text.encode()
    except UnicodeEncodeError:  # lone surrogates: orjson rejects them anyway
        return json.loads
    if raw[::_STRIDE].translate(_DIGITS_AS_ZEROS).find(b"00") >= 0 and (
        raw.translate(_DIGITS_AS_ZEROS).find(_LONG_DIGIT_RUN) >= 0
    ):
        return json.loads
    return _loads


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # json's reading of NaN, 1e400, ..., or json's error
        return json.loads(text)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (restored as it was, even on error)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["collector_paused", "json_reader"]
