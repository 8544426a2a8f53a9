"""When a value *appeared* in a source: the one rule behind ``PATH from SOURCE``.

A source's values are reduced to what the rule needs, kept in a :class:`Seen`: its
distinct texts (every text leaf and every mapping key, and each number leaf's JSON text),
its numbers (number leaves and the number tokens of its texts) and its ``true`` /
``false`` / ``null`` leaves. Memory grows with the distinct texts seen, never with the
number of calls that showed them again.

The rule (docs/language.md, "Provenance"), for a value ``v`` of the call:

* text: some text of the source holds ``v`` at token boundaries: where ``v`` starts with
  a letter or digit, the character before the occurrence is not one (or there is none);
  likewise at its end. Case-sensitive; ``""`` appears only where a text is exactly ``""``.
* number (not a bool): equal (``1 = 1.0``) to a number leaf or a number token, a maximal
  match of ``-?[0-9]+(.[0-9]+)?`` at token boundaries whose ``-`` counts only when no
  digit precedes it ("2022-01-01" holds 2022, 1 and 1; "x -5" holds -5).
* bool or null: an equal leaf (JSON types: ``true`` is not ``1``).
* list or mapping: every leaf value (not key) appears; an empty one does (vacuously).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

NUMBER_TOKEN: Final = re.compile(r"-?[0-9]+(?:\.[0-9]+)?", re.ASCII)
MAX_NUMBER_DIGITS: Final = 400
"""Longer number tokens are not read (``int`` of thousands of digits is slow); a value
that only such a token could show is then not found (the test fails closed)."""
CHUNK: Final = 1 << 16
"""Texts are searched in chunks of about this many characters, joined by NUL: one
``str.find`` per chunk instead of one per text, and an added text copies one chunk only."""
_SEP: Final = "\x00"


def number_tokens(text: str) -> Iterator[int | float]:
    """The numbers ``text`` shows as tokens (see the module docstring)."""
    for m in NUMBER_TOKEN.finditer(text):
        start, end = m.start(), m.end()
        token = m.group()
        if token[0] == "-" and start > 0 and text[start - 1].isdigit():
            token, start = token[1:], start + 1  # "2022-01": the dash separates
        if token[0] != "-" and start > 0 and text[start - 1].isalnum():
            continue  # "x12": inside a word
        if end < len(text) and text[end].isalnum():
            continue  # "12x"
        if len(token) > MAX_NUMBER_DIGITS:
            continue
        yield float(token) if "." in token else int(token)


def _words(text: str) -> Iterator[str]:
    """The maximal runs of letters and digits (``str.isalnum``) of ``text``."""
    start = -1
    for i, ch in enumerate(text):
        if ch.isalnum():
            if start < 0:
                start = i
        elif start >= 0:
            yield text[start:i]
            start = -1
    if start >= 0:
        yield text[start:]


def _end_runs(value: str) -> tuple[str | None, str | None]:
    """The run of letters and digits ``value`` starts with and the one it ends with
    (None where it starts / ends with another character)."""
    first = last = None
    if value[0].isalnum():
        end = 1
        while end < len(value) and value[end].isalnum():
            end += 1
        first = value[:end]
    if value[-1].isalnum():
        start = len(value) - 1
        while start > 0 and value[start - 1].isalnum():
            start -= 1
        last = value[start:]
    return first, last


def _at_boundaries(haystack: str, needle: str) -> bool:
    """``needle`` occurs in ``haystack`` at token boundaries."""
    check_start, check_end = needle[0].isalnum(), needle[-1].isalnum()
    size, start = len(needle), 0
    while True:
        i = haystack.find(needle, start)
        if i < 0:
            return False
        j = i + size
        if (not check_start or i == 0 or not haystack[i - 1].isalnum()) and (
            not check_end or j == len(haystack) or not haystack[j].isalnum()
        ):
            return True
        start = i + 1


class Seen:
    """What one source has shown so far (texts deduplicated, numbers, constants)."""

    __slots__ = ("_chunks", "consts", "empty", "numbers", "texts", "words")

    def __init__(self) -> None:
        self.texts: dict[str, None] = {}  # insertion-ordered set
        self.words: set[str] = set()  # every maximal run of letters and digits of a text
        self.numbers: set[int | float] = set()
        self.consts: set[bool | None] = set()
        self.empty = False
        self._chunks: list[str] = []

    def add(self, value: Any) -> None:
        """Every leaf of ``value`` (mapping keys as texts)."""
        stack = [value]
        while stack:
            v = stack.pop()
            if isinstance(v, str):
                self.add_text(v)
            elif v is None or isinstance(v, bool):
                self.consts.add(v)
            elif isinstance(v, (int, float)):
                self.numbers.add(v)
                self.add_text(json.dumps(v))
            elif isinstance(v, Mapping):
                for k, x in v.items():
                    self.add_text(str(k))
                    stack.append(x)
            elif isinstance(v, (list, tuple)):
                stack.extend(v)

    def add_text(self, text: str) -> None:
        if not text:
            self.empty = True
            return
        if text in self.texts:
            return
        self.texts[text] = None
        self.numbers.update(number_tokens(text))
        self.words.update(_words(text))
        chunks = self._chunks
        if chunks and len(chunks[-1]) + len(text) < CHUNK:
            chunks[-1] = chunks[-1] + _SEP + text
        else:
            chunks.append(text)

    def has_text(self, text: str) -> bool:
        if not text:
            return self.empty
        # an occurrence at token boundaries makes the value's first and last runs of
        # letters and digits whole runs of the text: a value that is one run appears iff
        # it is one of the words; otherwise a missing end run rules it out unsearched
        first, last = _end_runs(text)
        if first is not None and first == text:
            return text in self.words
        if (first is not None and first not in self.words) or (
            last is not None and last not in self.words
        ):
            return False
        if _SEP in text:  # could span two joined texts: look at each alone
            return any(_at_boundaries(t, text) for t in self.texts)
        return any(_at_boundaries(chunk, text) for chunk in self._chunks)

    def save(self) -> dict[str, Any]:
        """A JSON document of this index (numbers of number leaves as text: exact)."""
        leaves = self.numbers.difference(
            n for t in self.texts for n in number_tokens(t)
        )  # the rest come back with the texts
        return {
            "texts": list(self.texts),
            "numbers": [repr(n) for n in sorted(leaves, key=repr)],
            "consts": sorted(("null" if c is None else str(c).lower()) for c in self.consts),
            "empty": self.empty,
        }

    @classmethod
    def restore(cls, doc: Mapping[str, Any]) -> Seen:
        seen = cls()
        for text in doc["texts"]:
            if not isinstance(text, str):
                raise TypeError("a saved provenance text is not text")
            seen.add_text(text)
        for n in doc["numbers"]:
            seen.numbers.add(float(n) if any(c in n for c in ".en") else int(n))
        consts = {"null": None, "true": True, "false": False}
        seen.consts.update(consts[c] for c in doc["consts"])
        seen.empty = doc["empty"] is True
        return seen


def _scalar_appears(v: Any, seen: Sequence[Seen]) -> bool:
    if isinstance(v, str):
        return any(s.has_text(v) for s in seen)
    if v is None or isinstance(v, bool):
        return any(v in s.consts and _same_const(v, s) for s in seen)
    if isinstance(v, (int, float)):
        return any(v in s.numbers for s in seen)
    return False


def _same_const(v: bool | None, s: Seen) -> bool:
    """``consts`` holds only bools and None, so ``True in consts`` never means ``1``."""
    return any(c is v for c in s.consts)


def appears(value: Any, seen: Sequence[Seen]) -> bool:
    """Did ``value`` appear in the union of ``seen``? (the module docstring's rule)"""
    if type(value) is str:  # the common case first
        return any(s.has_text(value) for s in seen)
    if isinstance(value, Mapping):
        return all(appears(v, seen) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(appears(v, seen) for v in value)
    return _scalar_appears(value, seen)


def seen_of(values: Iterable[Any]) -> Seen:
    """A :class:`Seen` holding ``values`` (a literal list of a spec)."""
    seen = Seen()
    for v in values:
        seen.add(v)
    return seen
