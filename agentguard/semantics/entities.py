"""The answer's side of trace grounding: which referential entities an answer names.

Entities come from the answer by regex only (AgentLTL Appendix H.3): file paths with a
source extension, function signatures ``name(``, and identifiers shaped like code
(camelCase with two humps, snake_case) that are not ordinary words (:data:`BLOCKLIST`).
:mod:`.grounding` checks each against what the trace showed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

EntityKind = Literal["file_path", "function_signature", "identifier"]

SOURCE_EXTENSIONS: tuple[str, ...] = (
    "py",
    "pyi",
    "pyx",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "js",
    "jsx",
    "ts",
    "tsx",
    "java",
    "go",
    "rs",
    "rb",
    "kt",
    "swift",
    "scala",
    "sh",
)

BLOCKLIST: frozenset[str] = frozenset(
    {
        # Python keywords
        "False",
        "None",
        "True",
        "and",
        "as",
        "assert",
        "async",
        "await",
        "break",
        "class",
        "continue",
        "def",
        "del",
        "elif",
        "else",
        "except",
        "finally",
        "for",
        "from",
        "global",
        "if",
        "import",
        "in",
        "is",
        "lambda",
        "nonlocal",
        "not",
        "or",
        "pass",
        "raise",
        "return",
        "try",
        "while",
        "with",
        "yield",
        # standard-library modules
        "os",
        "sys",
        "json",
        "re",
        "math",
        "time",
        "typing",
        "collections",
        "itertools",
        "functools",
        "pathlib",
        "logging",
        "abc",
        "io",
        "datetime",
        "subprocess",
        # common exception classes
        "Exception",
        "ValueError",
        "TypeError",
        "KeyError",
        "IndexError",
        "AttributeError",
        "RuntimeError",
        "ImportError",
        "NotImplementedError",
        "StopIteration",
        "OSError",
    }
)
"""About 60 builtin names that are prose, not code-level claims (H.3)."""

_BLOCK_LOWER = frozenset(b.lower() for b in BLOCKLIST)
_EXT = "|".join(SOURCE_EXTENSIONS)
_PATH_RE = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXT}))(?![\w/])")
_SIG_RE = re.compile(r"\b((?:[A-Z][A-Za-z0-9_]*\.)?[A-Za-z_][A-Za-z0-9_]*)\(")
_CAMEL_RE = re.compile(r"^(?=[A-Z])(?=.*[a-z])(?=.+[A-Z])[A-Za-z0-9]+$")  # two humps or more
_SNAKE_RE = re.compile(r"^_*[a-z][a-z0-9]*(?:_+[a-z0-9]+)+_*$")  # at least one underscore
TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFUSAL_HINT = "not found"


@dataclass(frozen=True, slots=True, order=True)
class Entity:
    """One referential token of an answer."""

    kind: EntityKind
    text: str

    def __str__(self) -> str:
        return self.text


def _is_identifier(token: str, *, in_path: bool = False) -> bool:
    """CamelCase or snake_case, at least 3 chars, not blocklisted; inside a file path any
    name segment counts (``src/requests/api.py`` names ``src``, ``requests``, ``api``)."""
    return (
        len(token) >= 3
        and token.lower() not in _BLOCK_LOWER
        and (in_path or bool(_CAMEL_RE.match(token)) or bool(_SNAKE_RE.match(token)))
    )


def extract_entities(answer: str) -> list[Entity]:
    """``ent(a)``: file paths, function signatures and identifiers, deduplicated, in order."""
    found: dict[Entity, None] = {}
    path_words: list[str] = []
    for m in _PATH_RE.finditer(answer):
        path = normal_path(m.group(1))
        found[Entity("file_path", path)] = None
        path_words.extend(TOKEN_RE.findall(path.rsplit(".", 1)[0]))
    for m in _SIG_RE.finditer(answer):
        name = m.group(1)
        if name.split(".")[-1] not in BLOCKLIST:
            found[Entity("function_signature", name)] = None
    for word in path_words:
        if _is_identifier(word, in_path=True):
            found[Entity("identifier", word)] = None
    for m in TOKEN_RE.finditer(answer):
        if _is_identifier(m.group(0)):
            found[Entity("identifier", m.group(0))] = None
    return list(found)


def normal_path(path: str) -> str:
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")
