"""What the decision log may show of a call: the user's redactor, and every text it hid.

A redactor (``redact(tool, args) -> args``) says what the log may show of a call's
arguments. Hiding the arguments is not enough: a message, a violation's detail or hint,
an error text may quote a hidden value, so every text the log writes for that call is
scrubbed of each hidden value's text forms. A broken redactor must never leak what it
was asked to hide: its failure shows the failure's type, not the arguments.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from agentguard.enforcement.decision import Violation

Redactor = Callable[[str, Mapping[str, Any]], Mapping[str, Any]]
"""``redact(tool, args) -> args``: what the log may show of a call's arguments."""

REDACTED: Final = "[redacted]"
"""What replaces a hidden value wherever the log would quote it."""


def safe_args(redact: Redactor | None, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as the log may show them."""
    if redact is None:
        return dict(args)
    try:
        return dict(redact(tool, args))
    except Exception as exc:  # noqa: BLE001 - a broken redactor must not leak the arguments
        return {"<redaction failed>": type(exc).__name__}


def secret_texts(redact: Redactor | None, tool: str, args: Mapping[str, Any]) -> list[str]:
    """The text forms of every argument value the redactor hid, longest first (so that
    a secret containing another is scrubbed whole)."""
    if redact is None:
        return []
    shown = safe_args(redact, tool, args)
    hidden: set[str] = set()
    for key, value in args.items():
        if key in shown and shown[key] == value:
            continue
        for leaf in _leaves(value):
            for text in (str(leaf), repr(leaf), json.dumps(leaf, default=str)):
                if text:
                    hidden.add(text)
    return sorted(hidden, key=len, reverse=True)


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret replaced by :data:`REDACTED`."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def violation_records(
    violations: tuple[Violation, ...] | list[Violation], secrets: Sequence[str]
) -> list[dict[str, Any]]:
    """The violations as log records, their texts scrubbed."""
    out = []
    for v in violations:
        d = v.to_dict()
        if secrets:
            for key in ("message", "detail", "hint"):
                d[key] = scrub(d[key], secrets)
        out.append(d)
    return out


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [] if value is None or isinstance(value, bool) else [value]


__all__ = ["REDACTED", "Redactor", "safe_args", "scrub", "secret_texts", "violation_records"]
