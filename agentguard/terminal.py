"""Text from traces and logs, made safe to print on a terminal.

What ``check``, ``audit verify``, ``pec`` and the error messages print comes partly from the
files they read: tool names, run and trace ids, argument values in violation details, JSON
keys in a "no format fits" error. A log can carry control characters there: ESC sequences
that clear the screen and print a fake "ALL CLEAR", a carriage return that overwrites the
line with another verdict, bidirectional overrides that show a name reversed, or rich
markup (``[green]``) that the console would render. So every such text goes through
:func:`printable` (plain output) or :func:`markup` (rich output) before it is printed:
control and formatting characters are shown as escapes (``\\x1b``, ``\\u202e``), never
interpreted. JSON output goes through :func:`json_text`, which escapes the same characters
the JSON way (still valid JSON, the same document).

A leaf: it imports nothing from agentguard.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from rich.markup import escape

_UNSAFE: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb]"
)
"""C0 controls but tab and newline, DEL, C1 controls, and the invisible formatting
characters that change how text reads (bidirectional marks, embeddings, overrides and
isolates; zero-width characters; line and paragraph separators; the BOM), and lone
surrogates (no terminal can print one)."""

_UNSAFE_WITH_LAYOUT: Final = re.compile(_UNSAFE.pattern[:-1] + "\t\n]")
"""The same, tab and newline too: for one-line fields (an id, a tool name, a table cell)."""


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: Any, *, one_line: bool = True) -> str:
    """``text`` (any value: it is made text first) with every control and invisible
    formatting character shown as an escape; ``one_line``: newlines and tabs too."""
    text = text if isinstance(text, str) else str(text)
    pattern = _UNSAFE_WITH_LAYOUT if one_line else _UNSAFE
    return pattern.sub(_escape, text)


def markup(text: Any, *, one_line: bool = True) -> str:
    """:func:`printable`, with rich markup escaped: for strings a rich console renders."""
    return escape(printable(text, one_line=one_line))


def json_text(document: Any, *, indent: int | None = 2) -> str:
    """``json.dumps(document, ensure_ascii=False)`` with the characters :func:`printable`
    escapes written as ``\\uXXXX`` (the same JSON document, safe on a terminal)."""
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


__all__ = ["json_text", "markup", "printable"]
