"""What one argument must be, in words: a declared parameter's checks and the signature text.

The wording of the schema problems the checker reports (and the firewall shows the agent):
:func:`value_problem` checks one value against its parameter (type, list item type, enum,
bound, in that order), :func:`signature` writes a declaration as a hint reads it.
"""

from __future__ import annotations

from typing import Any, Final

from agentguard.language import ast as A
from agentguard.tools.values import fits_type, one_of, within_bound

_ARTICLE: Final = {"int": "an int", "any": "any value"}
_FITS: Final = object()  # no list element breaks the item type


def article(type_name: str) -> str:
    return _ARTICLE.get(type_name, f"a {type_name}")


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    for name in ("bool", "int", "number", "str", "list", "dict"):
        if fits_type(value, name):
            return name
    return type(value).__name__


def signature(decl: A.ToolDecl) -> str:
    """``issue_refund(order_id: str, amount: number >= 0, note?: str)``.

    A list's element type reads ``tags: list[str]``, an enum ``mode: str in ['a', 'b']``
    and a tool accepting undeclared arguments ends with ``...``."""
    parts = []
    for p in decl.params:
        text = f"{p.name}{'?' if p.optional else ''}: {p.type}"
        if p.items is not None:
            text += f"[{p.items}]"
        if p.enum is not None:
            text += f" in {list(p.enum)!r}"
        if p.bound is not None:
            text += f" {p.bound[0]} {p.bound[1]!r}"
        for op, limit in p.limits:
            text += f" {op} {limit!r}" if op in _COMPARISONS else f" ({op} {limit!r})"
        parts.append(text)
    if decl.allow_extra:
        parts.append("...")
    return f"{decl.name}({', '.join(parts)})"


def value_problem(p: A.Param, value: Any) -> tuple[str, str] | None:
    """The first way ``value`` breaks ``p``: its type, a list element's type, the enum, the
    bound (in that order). Enum and ``=`` / ``in`` bounds use AgentLTL equality, so a bool
    is never a number there (``True`` is not ``= 1`` and not one of ``(1, 2)``)."""
    key = p.name
    if not fits_type(value, p.type):
        return (
            f"argument {key!r} must be {article(p.type)}, got {kind_of(value)} {value!r:.60}",
            f"pass {key} as {article(p.type)}",
        )
    if p.items is not None and isinstance(value, (list, tuple)):
        bad = next((v for v in value if not fits_type(v, p.items)), _FITS)
        if bad is not _FITS:
            return (
                f"argument {key!r} holds {kind_of(bad)} {bad!r:.60}, not {article(p.items)}",
                f"pass {key} as a list of {p.items} values",
            )
    if p.enum is not None and not one_of(value, p.enum):
        return (
            f"argument {key!r} = {value!r:.60} is not one of {list(p.enum)!r:.120}",
            f"pass {key} as one of {list(p.enum)!r:.120}",
        )
    if p.bound is not None and not within_bound(value, *p.bound):
        op, limit = p.bound
        return (
            f"argument {key!r} = {value!r:.60} breaks its bound {key} {op} {limit!r}",
            f"pass {key} {op} {limit!r}",
        )
    for op, limit in p.limits:
        problem = _limit_problem(key, value, op, limit)
        if problem is not None:
            return problem
    return None


_COMPARISONS: Final = frozenset({">=", ">", "<=", "<"})
_LENGTHS: Final[dict[str, tuple[type | tuple[type, ...], str, str]]] = {
    "minLength": (str, "at least", "characters"),
    "maxLength": (str, "at most", "characters"),
    "minItems": ((list, tuple), "at least", "items"),
    "maxItems": ((list, tuple), "at most", "items"),
}


def _limit_problem(key: str, value: Any, op: str, limit: Any) -> tuple[str, str] | None:
    """How ``value`` breaks one of its parameter's ``limits``, or None (a limit of
    another kind of value, a length limit on a number, does not apply)."""
    if op in _COMPARISONS:
        if within_bound(value, op, limit):
            return None
        return (
            f"argument {key!r} = {value!r:.60} breaks its bound {key} {op} {limit!r}",
            f"pass {key} {op} {limit!r}",
        )
    kinds, side, unit = _LENGTHS[op]
    if not isinstance(value, (str, list, tuple)) or not isinstance(value, kinds):
        return None
    size = len(value)
    if (size >= limit) if side == "at least" else (size <= limit):
        return None
    return (
        f"argument {key!r} has {size} {unit}; its schema takes {side} {limit} ({op})",
        f"pass {key} with {side} {limit} {unit}",
    )


__all__ = ["article", "kind_of", "signature", "value_problem"]
