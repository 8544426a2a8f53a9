"""Value and path helpers of the tool checks: types, bounds, paths into results, occurrence.

A leaf of the tool layer (it imports only AgentLTL's comparison and the result decoder), so the
firewall's checker, the PEC oracle and the trace-side code share one definition of "this value
has type int", "this value meets its bound" and "this value occurs in that result".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from agentguard.semantics.values import compare
from agentguard.trace.identity import value_key  # one home of identity (re-exported)
from agentguard.trace.model import decode_result

TYPE_NAMES: Final = ("str", "number", "int", "bool", "list", "dict", "any")
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
    """``value op limit`` with AgentLTL's comparison (mismatched types fail the bound)."""
    try:
        return compare(value, op, limit)
    except (TypeError, ValueError):
        return False


def occurs_in(value: Any, data: Any) -> bool:
    """``value`` equals a leaf or an object key somewhere in ``data`` (JSON text decoded)."""
    stack = [decode_result(data)]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if any(_same(value, k) for k in node):
                return True
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
        elif _same(value, node) or _same(value, decode_result(node)):
            return True
    return False


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
    "value_key",
    "within_bound",
]
