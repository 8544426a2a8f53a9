"""Load the AgentLTL grammar once and turn lark's errors into SpecSyntaxError."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from lark import Lark, Tree, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from agentguard.errors import SourceLocation, SpecSyntaxError, draw_caret
from agentguard.language.parser_cache import cached_parser

_TOKEN_TEXT = {
    "LPAR": "(",
    "RPAR": ")",
    "LSQB": "[",
    "RSQB": "]",
    "LBRACE": "{",
    "RBRACE": "}",
    "COMMA": ",",
    "COLON": ":",
    "DOT": ".",
    "NAME": "a name",
    "QNAME": "`quoted name`",
    "STRING": "a string",
    "SIGNED_NUMBER": "a number",
    "INT": "an integer",
    "REGEX": "/regex/",
    "TRUE": "true",
    "FALSE": "false",
    "NULL": "null",
    "$END": "end of input",
}


_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "propagate_positions": True,
    "maybe_placeholders": True,
    "start": ["start", "formula_only"],
}


@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    """The LALR parser, built once from the packaged grammar (and kept between processes:
    :mod:`agentguard.language.parser_cache`)."""
    text = resources.files("agentguard.language").joinpath("agentltl.lark").read_text("utf-8")
    return cached_parser(text, _OPTIONS, _build)


def _build() -> Lark:
    return Lark.open_from_package("agentguard.language", "agentltl.lark", **_OPTIONS)


def _describe(name: str) -> str:
    if name in _TOKEN_TEXT:
        return _TOKEN_TEXT[name]
    if name.startswith("__ANON") or name.isupper():
        try:
            pattern = parser().get_terminal(name).pattern.value
        except KeyError:
            return name.lower()
        return f'"{pattern}"'
    return name


def parse_tree(text: str, source: str = "<string>", *, start: str = "start") -> Tree[Any]:
    """Parse text to lark's raw tree, or raise SpecSyntaxError with a caret."""
    try:
        return parser().parse(text, start=start)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text, source) from None


def _syntax_error(exc: UnexpectedInput, text: str, source: str) -> SpecSyntaxError:
    line = getattr(exc, "line", None) or 1
    column = getattr(exc, "column", None) or 1
    if isinstance(exc, UnexpectedEOF) or (line == -1):
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        message = "unexpected end of input"
    elif isinstance(exc, UnexpectedToken):
        tok = exc.token
        shown = "end of input" if tok.type == "$END" else repr(str(tok))
        message = f"unexpected {shown}"
        if tok.type == "$END":
            lines = text.splitlines() or [""]
            line, column = len(lines), len(lines[-1]) + 1
    elif isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream or 0
        message = f"unexpected character {text[pos : pos + 1]!r}"
    else:  # pragma: no cover - lark has no other UnexpectedInput subclasses today
        message = str(exc).splitlines()[0]
    expected: set[str] = set()
    for name in getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ():
        expected.add(_describe(name))
    lines = text.splitlines()
    before = lines[line - 1][: column - 1] if 0 < line <= len(lines) else ""
    if before.endswith("/") and before.count("/") >= 2:
        message += " (a '/' inside a /regular expression/ is written '\\/')"
    return SpecSyntaxError(
        message,
        SourceLocation(source, line, column),
        draw_caret(text, line, column),
        sorted(expected),
    )
