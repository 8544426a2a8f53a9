"""The arguments a call is checked on, frozen: one snapshot that the check judges, the
trace records and the tool receives (a copy of it), so there is no time-of-check /
time-of-use gap.

A framework hands the firewall live Python objects. Judged as they are, they can change
between the check and the tool: a list the model's code mutates after the call, an
object whose ``__str__`` answers ``"ls /tmp"`` to the check and ``"rm -rf /prod"`` to the
tool, a value nested so deep that any walk of it gives up. So the firewall checks a
*snapshot*: plain JSON data (text, numbers, booleans, null, lists, objects keyed by
text) copied out of the arguments in one walk, and the adapter hands the tool a fresh
copy of that snapshot (:func:`copy_arguments`), never the objects it was given. What
the snapshot cannot hold faithfully (a custom object, bytes, a set, a key that is not
text, a container that holds itself, nesting past :data:`MAX_ARGUMENT_DEPTH`) is
refused with :class:`~agentguard.errors.UncheckableArgumentsError` naming where: never
summarised and allowed.

Dates, times, decimals, fractions and UUIDs (exact types, immutable) are kept as they
are: the check and the trace see their JSON form, which their value fixes. Subclasses of
``str``, ``int`` and ``float`` (an ``IntEnum``, a ``str`` subclass with its
own ``__str__``) become their base value, read from the object's storage, not through
its methods; the tool receives that base value, so what was checked is what runs.

It imports nothing from agentguard but the error it raises and the JSON reading of
numbers (agentguard/trace/json_values.py).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from agentguard.errors import CallArgumentsError, UncheckableArgumentsError
from agentguard.trace.json_values import exact_number

MAX_ARGUMENT_DEPTH: Final = 100
"""How deep arguments may nest (lists and objects inside one another). JSON tool calls
from models stay far below it; past it a value is refused, not summarised."""

_VALUES: Final = frozenset(
    (dt.date, dt.datetime, dt.time, dt.timedelta, Decimal, Fraction, uuid.UUID)
)
"""Immutable standard-library values (exact types: a subclass could change how it reads)
whose JSON form is fixed by their value (``2024-01-01``, ``150.00`` as a number): kept as
they are for the tool, and checked and recorded as that JSON form (what the trace and
the log hold of them, agentguard/trace/json_values.py)."""
_IMMUTABLE: Final = frozenset((str, int, float, bool, type(None))) | _VALUES
_SHARED: Final = _IMMUTABLE - {Decimal, Fraction}
"""What a snapshot shares without a look: a decimal or a fraction is first checked to be
the number it is judged as (:func:`_exact`)."""


def freeze_call_arguments(
    name: str, args: Mapping[str, Any] | None
) -> tuple[dict[str, Any], str | None]:
    """The arguments the call is checked on, run with and recorded as: a frozen snapshot
    (agentguard/trace/arguments.py), and None; or, for arguments that cannot be checked
    faithfully, what the log may show of them and why the call is refused."""
    if not args:
        if args is None or issubclass(type(args), Mapping):
            return {}, None
        raise CallArgumentsError(name, args)
    if not issubclass(type(args), Mapping):
        try:  # pairs, as dict() takes them: the old interface
            args = dict(args)
        except (TypeError, ValueError):  # a list, a JSON string, ...: said plainly
            raise CallArgumentsError(name, args) from None
    try:
        return snapshot_arguments(args), None
    except UncheckableArgumentsError as exc:
        return shown_arguments(args), str(exc)


def snapshot_arguments(args: Mapping[str, Any]) -> dict[str, Any]:
    """A frozen copy of ``args`` as plain JSON data (see the module docstring).

    Raises :class:`~agentguard.errors.UncheckableArgumentsError` for a value it cannot
    copy faithfully. The returned dict and its containers are new objects no caller
    holds; scalars (immutable) are shared.
    """
    out: dict[str, Any] = {}
    for key, value in _items(args, "arguments"):
        # the usual argument is immutable (text, a number): shared, not walked
        out[key] = value if type(value) in _SHARED else _copy(value, (key,), 1, set())
    return out


def shown_arguments(args: Mapping[str, Any]) -> dict[str, Any]:
    """What the log and the decision show of arguments :func:`snapshot_arguments` refused:
    each argument that can be copied as it is, the others as ``"[uncheckable: TYPE]"``
    (their own methods are never called: they are what could not be trusted)."""
    out: dict[str, Any] = {}
    try:
        items = _items(args, "arguments")
    except UncheckableArgumentsError:
        return {"[uncheckable]": _type_name(args)}
    for key, value in items:
        try:
            out[key] = _copy(value, (key,), 1, set())
        except UncheckableArgumentsError:
            out[key] = f"[uncheckable: {_type_name(value)}]"
    return out


def copy_arguments(args: Mapping[str, Any]) -> dict[str, Any]:
    """A fresh deep copy of a snapshot (plain JSON data): what the tool receives, so that
    a tool changing its arguments in place cannot change the trace's record of them."""
    out: dict[str, Any] = {}
    for key, value in args.items():
        out[key] = value if type(value) in _IMMUTABLE else fresh_copy(value)
    return out


def fresh_copy(value: Any) -> Any:
    """``value`` (plain JSON data) with every list and object new, scalars shared; a tuple
    (plain too: JSON writes it as an array) becomes a new list, as the log reads it back."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _IMMUTABLE else fresh_copy(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [v if type(v) in _IMMUTABLE else fresh_copy(v) for v in value]
    return value  # a scalar


def _items(value: Any, where: str) -> list[tuple[str, Any]]:
    """A mapping's items, read from its storage once (a dict subclass's own ``items``
    is not asked), each key checked to be text."""
    if issubclass(type(value), dict):
        pairs = list(dict.items(value))
    elif issubclass(type(value), Mapping):
        raise UncheckableArgumentsError(
            where, f"is a {_type_name(value)} mapping; pass a plain dict"
        )
    else:  # pragma: no cover - the callers pass mappings only
        raise UncheckableArgumentsError(where, f"is a {_type_name(value)}, not a mapping")
    out: list[tuple[str, Any]] = []
    for key, item in pairs:
        if type(key) is not str:
            if not issubclass(type(key), str):
                raise UncheckableArgumentsError(
                    where, f"has a key that is not text (a {_type_name(key)})"
                )
            key = str.__str__(key)
        out.append((key, item))
    return out


def _copy(value: Any, path: tuple[str | int, ...], depth: int, seen: set[int]) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None or kind is int:
        return value
    if kind is Decimal or kind is Fraction:
        return _exact(value, path)
    if kind is float or kind in _VALUES:
        return value  # NaN and the infinities are JSON data here (json writes them back)
    if issubclass(kind, bool):  # pragma: no cover - bool cannot be subclassed
        return bool(value)
    if issubclass(kind, str):
        return str.__str__(value)  # the text itself, not what an override says
    if issubclass(kind, int):
        return int.__int__(value)
    if issubclass(kind, float):
        return float.__float__(value)
    if issubclass(kind, (dict, list, tuple)):
        if depth >= MAX_ARGUMENT_DEPTH:
            raise UncheckableArgumentsError(
                _where(path),
                f"nests deeper than {MAX_ARGUMENT_DEPTH} levels; agentguard refuses "
                "arguments it cannot check whole",
            )
        marker = id(value)
        if marker in seen:
            raise UncheckableArgumentsError(_where(path), "contains itself")
        seen.add(marker)
        try:
            if issubclass(kind, dict):
                return {
                    k: _copy(v, (*path, k), depth + 1, seen) for k, v in _items(value, _where(path))
                }
            items = list.__iter__(value) if issubclass(kind, list) else tuple.__iter__(value)
            return [_copy(v, (*path, i), depth + 1, seen) for i, v in enumerate(items)]
        finally:
            seen.discard(marker)
    raise UncheckableArgumentsError(_where(path), _why(value))


def _exact(value: Decimal | Fraction, path: tuple[str | int, ...]) -> Decimal | Fraction:
    """``value``, if the JSON number it is checked and recorded as is its value
    (:func:`~agentguard.trace.json_values.exact_number`); else refused: a cap of 500
    judged on ``500.0`` must not pass ``Decimal("500.00000000000000001")`` to the tool."""
    if exact_number(value) is None:
        raise UncheckableArgumentsError(
            _where(path),
            f"is {type(value).__name__}({str(value)!r}), which no JSON number the check "
            "could judge equals; pass it as text, or with fewer digits",
        )
    return value


def _why(value: Any) -> str:
    kind = type(value)  # never isinstance: a __class__ property can lie to it
    if issubclass(kind, (bytes, bytearray, memoryview)):
        return "is bytes; pass text (decode it first)"
    if issubclass(kind, (set, frozenset)):
        return "is a set; pass a list"
    if issubclass(kind, Mapping):
        return f"is a {_type_name(value)} mapping; pass a plain dict"
    return (
        f"is a {_type_name(value)} object; agentguard checks plain data only (text, "
        "numbers, booleans, null, lists, objects keyed by text) and refuses what it "
        "cannot check faithfully"
    )


def _where(path: tuple[str | int, ...]) -> str:
    """``argument 'items[2].name'``: the path of a value inside the arguments."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return f"argument {text!r}"


def _type_name(value: Any) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    qualname = getattr(kind, "__qualname__", kind.__name__)
    return qualname if module in ("builtins", "") else f"{module}.{qualname}"


__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "copy_arguments",
    "freeze_call_arguments",
    "fresh_copy",
    "shown_arguments",
    "snapshot_arguments",
]
