"""What ``agentguard lint`` reports: the warning kinds and one warning record.

A leaf module (it imports only the syntax tree's ``Span``) so the checks, the CLI and
the integrations share one vocabulary without import loops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from agentguard.language.ast import Span

WarningKind = Literal[
    "unsatisfiable",
    "valid",
    "conflict",
    "unknown-argument",
    "type-mismatch",
    "unknown-tool",
    "tool-mismatch",
    "never-blocks",
    "late",
]
"""The kinds of lint warnings (docs/lint.md has one example per kind)."""

WARNING_KINDS: tuple[WarningKind, ...] = get_args(WarningKind)


@dataclass(frozen=True, slots=True)
class LintWarning:
    """One finding about a spec, located at the construct it is about.

    ``constraint`` is the constraint's name (the first of a conflicting set; None for a
    tool declaration or a declared predicate); ``related`` names the others involved
    (the rest of a minimal conflicting set).
    """

    kind: WarningKind
    constraint: str | None
    message: str
    source: str = "<string>"
    line: int = 0
    column: int = 0
    related: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "constraint": self.constraint,
            "file": self.source,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }
        if self.related:
            out["related"] = list(self.related)
        return out

    def __str__(self) -> str:
        return f"{self.source}:{self.line}:{self.column}: {self.kind}: {self.message}"


def located(
    kind: WarningKind,
    constraint: str | None,
    message: str,
    span: Span | None,
    source: str,
    related: tuple[str, ...] = (),
) -> LintWarning:
    """A warning at ``span`` (line 0 when the construct has no span, e.g. a built formula)."""
    if span is None:
        return LintWarning(kind, constraint, message, source, 0, 0, related)
    return LintWarning(kind, constraint, message, span.source, span.line, span.column, related)
