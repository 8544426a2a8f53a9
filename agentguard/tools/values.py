"""Value and path helpers of the tool checks: types, bounds, paths into results, occurrence.

A leaf of the tool layer (it imports only the parameter types, AgentLTL's comparison and the
result decoder), so the firewall's checker, the PEC oracle and the trace-side code share one
definition of "this value has type int", "this value meets its bound" and "this value occurs
in that result".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from agentguard.language.ast import PARAM_TYPES
from agentguard.semantics.values import compare, values_equal
from agentguard.trace.identity import value_key  # one home of identity (re-exported)
from agentguard.trace.model import decode_result

TYPE_NAMES: Final = PARAM_TYPES
"""The parameter types a ``tool`` declaration may name."""


def fits_type(value: Any, type_name: str) -> bool:
    """``value`` has type ``type_name`` (bools are not numbers; ints are numbers)."""
    if type_name == "any":
        return True
    if type_name == "bool":
        return isinstance(value, bool)
    if type_name == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_name == "str":
        return isinstance(value, str)
    if type_name == "list":
        return isinstance(value, (list, tuple))
    if type_name == "dict":
        return isinstance(value, Mapping)
    return True  # an unknown type name: the language core rejects these at parse time


def within_bound(value: Any, op: str, limit: Any) -> bool:
    """``value op limit`` with AgentLTL's comparison (mismatched types fail the bound).

    ``=`` and ``in`` use AgentLTL equality, so a bool never meets a numeric bound:
    ``True`` breaks ``= 1`` (Python's ``True == 1`` does not decide it)."""
    try:
        return compare(value, op, limit)
    except (TypeError, ValueError):
        return False


def one_of(value: Any, choices: Sequence[Any]) -> bool:
    """``value`` equals one of an enum's ``choices`` by AgentLTL equality (``1 == 1.0``,
    but a bool is no number: ``True`` is not one of ``(1, 2)``)."""
    return any(values_equal(value, choice) for choice in choices)


def occurs_in(value: Any, data: Any) -> bool:
    """``value`` equals a leaf or an object key somewhere in ``data`` (JSON text decoded,
    also inside the result: ``{"body": "{\\"id\\": \\"A1\\"}"}`` holds ``"A1"``), with the
    equality of :func:`value_key` (a bool never equals a number). One definition with the
    checker's index of earlier values (:func:`leaves`), so a value an in-flight call
    passed and one an executed call returned are found alike."""
    return any(_same(value, leaf) for leaf in leaves(data))


def at_path(data: Any, path: Sequence[str | int]) -> Any:
    """``data`` at ``path`` (None when the path does not exist)."""
    node = decode_result(data)
    for step in path:
        in_map = isinstance(node, Mapping) and step in node
        in_list = (
            isinstance(node, list) and isinstance(step, int) and -len(node) <= step < len(node)
        )
        if not (in_map or in_list):
            return None
        node = node[step]
    return node


def leaves(data: Any) -> Iterator[Any]:
    """Every value :func:`occurs_in` would find in ``data``: leaves and object keys."""
    stack = [decode_result(data)]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            yield from node
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
        else:
            yield node
            decoded = decode_result(node)
            if decoded is not node:
                stack.append(decoded)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - a value whose __eq__ raises is simply not equal
        return False


__all__ = [
    "TYPE_NAMES",
    "at_path",
    "fits_type",
    "leaves",
    "occurs_in",
    "one_of",
    "value_key",
    "within_bound",
]
