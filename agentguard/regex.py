"""Compile AgentLTL's ``/pattern/flags`` literals: one home for the language and semantics.

A leaf module (it imports nothing from agentguard) so the resolver can reject an invalid
regex at parse time and the evaluators can compile the same pattern the same way, without
the language layer importing the semantics layer. Patterns are compiled for RE2, whose
matching time is linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

import re2  # type: ignore[import-untyped]

_RE2_FLAGS: Final = {"i": "i", "m": "m", "s": "s"}
_PYTHON_END = re.compile(r"(?<!\\)((?:\\\\)*)\\Z")
"""``\\Z`` (Python's end of text) not preceded by an escaping backslash; RE2 spells it ``\\z``."""
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
"""A code point UTF-8 cannot encode (only lone surrogates are left in a ``str``)."""
_UNSUPPORTED = re.compile(r"perl operator|escape sequence: \\\d")
"""RE2's wording for Python features it refuses by design (look-around, backreferences)."""


@dataclass(frozen=True, slots=True)
class CompiledRegex:
    """A spec regular expression compiled for RE2, whose matching time is linear in the text.

    Python's backtracking engine takes exponential time on patterns like ``^(a+)+$``
    while the firewall holds its lock; RE2 cannot backtrack, so one argument can never
    stall every guarded call. Patterns RE2 cannot take (backreferences, look-around) are
    refused when the spec is loaded, with ``re.error``, as any invalid pattern is.
    """

    pattern: str
    flags: str
    engine: Any = field(compare=False, repr=False)

    def search(self, text: str) -> bool:
        """Does the pattern match anywhere in ``text`` (``re.search`` semantics)?

        RE2 matches UTF-8, and a lone surrogate has none (``os.listdir`` gives one for a
        file name that is not UTF-8, and ``"\\udce9"`` is valid JSON): such a text is
        matched with each lone surrogate read as U+FFFD, one character for one, so ``.``
        still matches it. A pattern holding one (a pattern taken from such a text,
        ``a(k ~ x)``) reads it the same way (:func:`compile_regex`), so ``a(k = x) ->
        a(k ~ x)`` holds for a plain text ``x``.
        """
        try:
            return self.engine.search(text) is not None
        except UnicodeEncodeError:
            return self.engine.search(_LONE_SURROGATE.sub("\ufffd", text)) is not None

    def find_all(self, text: str) -> list[str]:
        """Every non-overlapping match of the pattern in ``text``, whole (its groups
        ignored), in order: a ``[~ /pattern/]`` path step's list. A lone surrogate is read
        as in :meth:`search`; an empty match is not a part (``/x*/`` finds no empty text)."""
        # matched on the U+FFFD reading of a lone surrogate (one character for one), each
        # part is cut from the text itself: a part is what the text holds
        read = _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text
        spans = [(m.start(), m.end()) for m in self.engine.finditer(read)]
        return [text[i:j] for i, j in spans if j > i]


@lru_cache(maxsize=1024)
def compile_regex(pattern: str, flags: str = "") -> CompiledRegex:
    """The one place spec regexes are compiled; raises ``re.error`` when RE2 refuses one.

    A lone surrogate in the pattern is read as U+FFFD, as in the text searched
    (:meth:`CompiledRegex.search`): UTF-8, which RE2 compiles, has no encoding for it.
    """
    inline = ""
    for ch in flags:
        if ch not in _RE2_FLAGS:
            hint = " (RE2 has no verbose mode)" if ch == "x" else ""
            raise re.error(f"unsupported flag {ch!r}{hint}; use i, m or s")
        inline += _RE2_FLAGS[ch]
    source = _PYTHON_END.sub(r"\1\\z", _LONE_SURROGATE.sub("\ufffd", pattern))
    if inline:
        source = f"(?{inline}){source}"
    options = re2.Options()
    options.log_errors = False  # the error is raised (and located by the resolver), not logged
    try:
        engine = re2.compile(source, options=options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args else "rejected"
        if _UNSUPPORTED.search(reason):
            reason += " (the linear-time engine RE2 has no backreferences or look-around)"
        raise re.error(reason) from None
    return CompiledRegex(pattern, flags, engine)
