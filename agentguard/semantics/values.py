"""Value access and comparison for tests on calls, variables and metrics.

Undefined values (a missing key, an unknown result, a type mismatch) are ``⊥``; every
comparison involving ``⊥`` is false, as in AgentLTL Appendix A.1.4.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from typing import Any, Final

from agentguard.errors import EvaluationError
from agentguard.language.ast.terms import MATCHES, STAR, matches_regex
from agentguard.regex import CompiledRegex as CompiledRegex  # re-exported for old imports
from agentguard.regex import compile_regex as compile_regex
from agentguard.trace.model import UNKNOWN, Call


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "⊥"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()
"""``⊥``: a value that does not exist."""


def get_path(value: Any, path: Sequence[str | int]) -> Any:
    """Follow keys / indices into nested mappings and lists; ⊥ when any step is missing.

    A ``[*]`` step (:data:`~agentguard.language.ast.STAR`) maps the rest of the path over
    each element of a list and gives the flat list of what it reaches (elements where it
    is ⊥ skipped; a further ``[*]`` splices its list in); on a non-list it is ⊥.
    """
    for k, seg in enumerate(path):
        if seg == STAR:
            return _star(value, path[k + 1 :])
        if type(seg) is str and seg.startswith(MATCHES):
            return _star(_matches(value, seg), path[k + 1 :])
        if type(value) is dict and seg in value:  # the common case, without an ABC check
            value = value[seg]
            continue
        if value is MISSING or value is UNKNOWN:
            return MISSING
        if isinstance(value, Mapping):
            if seg in value:
                value = value[seg]
            elif isinstance(seg, int) and str(seg) in value:
                value = value[str(seg)]
            else:
                return MISSING
        elif isinstance(value, (list, tuple)) and isinstance(seg, int):
            if -len(value) <= seg < len(value):
                value = value[seg]
            else:
                return MISSING
        else:
            return MISSING
    return value


def _matches(value: Any, step: str) -> Any:
    """The parts of a text its ``[~ /pattern/flags]`` step matches, in order; of a list
    or a mapping, those of every text in it (keys included, depth first), so a tool
    handed a structure instead of a text hides nothing; none of a number, a boolean or
    null; ⊥ of ⊥. RE2 finds them in time linear in the text."""
    if value is MISSING or value is UNKNOWN:
        return MISSING
    pattern, flags = matches_regex(step)
    regex = compile_regex(pattern, flags)
    found: list[str] = []
    stack = [value]
    while stack:  # no recursion: a value nested deeper than the stack is still read
        item = stack.pop()
        if type(item) is str:
            found.extend(regex.find_all(item))
        elif isinstance(item, Mapping):
            for key, inner in reversed(list(item.items())):
                stack.append(inner)
                stack.append(key)
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
    return found


def _star(value: Any, rest: Sequence[str | int]) -> Any:
    if not isinstance(value, (list, tuple)):
        return MISSING
    spliced = STAR in rest
    out: list[Any] = []
    for item in value:
        reached = get_path(item, rest)
        if reached is MISSING:
            continue
        if spliced:
            out.extend(reached)
        else:
            out.append(reached)
    return out


def call_field(call: Call, path: Sequence[str | int]) -> Any:
    """The value a FieldRef names on a call: ``result...``, ``args.key...`` or ``key...``."""
    if len(path) == 1:  # the common ``key``: one lookup (get_path's first step)
        key = path[0]
        args = call.args
        if key != "result" and type(args) is dict and key in args:
            return args[key]
    if len(path) > 1 and path[0] == "args":
        return get_path(call.args, path[1:])
    if path and path[0] == "result":
        if call.result is UNKNOWN:
            return MISSING
        return get_path(call.result, path[1:])
    return get_path(call.args, path)


def outcome_is(call: Call, outcome: str) -> bool:
    """Did ``call`` end as ``outcome`` says (``"ok"``: without error, ``"error"``: with one)?

    ``Call.error`` is read by truthiness, so a flag or an error message both count.
    """
    return bool(call.error) == (outcome == "error")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def values_equal(a: Any, b: Any) -> bool:
    """Structural equality on JSON values: 1 == 1.0, but true != 1, and lists equal tuples."""
    kind = type(a)
    if kind is type(b) and (kind is str or kind is int):  # the common case, no ABC checks
        return bool(a == b)
    if a is MISSING or b is MISSING or a is UNKNOWN or b is UNKNOWN:
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return False
    return bool(a == b)


def is_submapping(expected: Mapping[str, Any], actual: Any) -> bool:
    """``a ⊑ c.args``: every key of ``expected`` is in ``actual`` with an equal value."""
    if not isinstance(actual, Mapping):
        return False
    return all(k in actual and values_equal(v, actual[k]) for k, v in expected.items())


def data_regex(pattern: str, flags: str = "") -> CompiledRegex:
    """A pattern the resolver could not check (a string operand of ``~``, a variable bound
    to trace data, a hand-built node): an invalid one is an :class:`EvaluationError`,
    never ``re.error``."""
    try:
        return compile_regex(pattern, flags)
    except (re.error, RecursionError, OverflowError, KeyError) as exc:
        raise EvaluationError(f"invalid regular expression {pattern!r}: {exc}") from None


def _order(a: Any, b: Any, op: Callable[[Any, Any], bool]) -> bool:
    if _is_number(a) and _is_number(b):
        return op(a, b)
    if isinstance(a, str) and isinstance(b, str):
        return op(a, b)
    return False


_ORDERING: Mapping[str, Callable[[Any, Any], bool]] = {
    "<": lambda x, y: x < y,
    "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y,
    ">=": lambda x, y: x >= y,
}


def member(item: Any, container: Any) -> bool:
    """``item in container`` with JSON equality; substring for text; key for mappings."""
    if item is MISSING or container is MISSING or container is UNKNOWN:
        return False
    if isinstance(container, str):
        return isinstance(item, str) and item in container
    if isinstance(container, Mapping):
        return isinstance(item, str) and item in container
    if isinstance(container, (list, tuple, set, frozenset)):
        return any(values_equal(item, x) for x in container)
    if isinstance(container, Container):  # a membership domain with its own matching rules
        return item in container
    return False


def compare(left: Any, op: str, right: Any) -> bool:
    """``left op right``; ``right`` is a :class:`CompiledRegex` (or its text) for ``~`` and ``!~``."""
    if left is MISSING or left is UNKNOWN or right is MISSING:
        return False
    if op == "=":
        return values_equal(left, right)
    if op == "!=":
        return not values_equal(left, right)
    if op in _ORDERING:
        return _order(left, right, _ORDERING[op])
    if op in ("~", "!~"):
        # ⊥ rule: a pattern is text; a value of another type (`true`, `[]`, a number
        # bound to `x` in `a(k ~ x)`) is a type mismatch, false under `~` and `!~` alike
        if not isinstance(left, str) or not isinstance(right, (str, CompiledRegex)):
            return False
        pattern = right if isinstance(right, CompiledRegex) else data_regex(right)
        found = pattern.search(left)
        return found if op == "~" else not found
    if op == "contains":
        return member(right, left)
    if op == "in":
        return member(left, right)
    raise ValueError(f"unknown comparison operator {op!r}")


def unwrap_result(value: Any) -> Any:
    """``{"result": v}`` -> ``v``: the paper's tools wrap scalar results this way."""
    if isinstance(value, Mapping) and len(value) == 1 and "result" in value:
        return value["result"]
    return MISSING


def flatten_values(values: Iterable[Any]) -> list[Any]:
    """Domain elements: list values contribute their items; duplicates dropped, order kept."""
    out: list[Any] = []
    seen: set[Any] = set()
    for v in values:
        items = v if isinstance(v, (list, tuple)) else (v,)
        for item in items:
            if item is MISSING or item is UNKNOWN:
                continue
            key = _freeze(item)
            if key in seen:
                continue
            seen.add(key)
            out.append(item)
    return out


def _freeze(v: Any) -> Any:
    kind = type(v)
    if kind is str or kind is int:  # the common case, past the Mapping ABC check
        return v
    if isinstance(v, Mapping):
        return ("__map__", tuple(sorted((str(k), _freeze(x)) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return ("__list__", tuple(_freeze(x) for x in v))
    if isinstance(v, bool):
        return ("__bool__", v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


freeze = _freeze


class _Unkeyed:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unkeyed>"


UNKEYED: Final = _Unkeyed()
""":func:`plain_key` of a value that is not plain JSON."""


def plain_key(v: Any) -> Any:
    """A hashable key whose equality is :func:`values_equal`, for plain JSON values.

    ``freeze(v)`` for JSON (strings, numbers, booleans, null, lists, string-keyed maps);
    ``MISSING`` for a value equal to nothing, itself included (NaN, or one inside);
    ``UNKEYED`` for anything else, whose equality an index cannot mirror.
    """
    if isinstance(v, str) or v is None or isinstance(v, bool):
        return _freeze(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return _freeze(v) if v == v else MISSING
    if isinstance(v, (list, tuple)):
        parts = [plain_key(x) for x in v]
        if any(p is UNKEYED for p in parts):
            return UNKEYED
        return MISSING if any(p is MISSING for p in parts) else ("__list__", tuple(parts))
    if isinstance(v, Mapping) and all(isinstance(k, str) for k in v):
        items = sorted((k, plain_key(x)) for k, x in v.items())
        if any(p is UNKEYED for _, p in items):
            return UNKEYED
        return MISSING if any(p is MISSING for _, p in items) else ("__map__", tuple(items))
    return UNKEYED


def common_key(call: Call, paths: Sequence[Sequence[str | int]]) -> Any:
    """The :func:`plain_key` of the one value every field ``paths`` names on ``call``
    holds: what ``field = x`` tests on all of them need ``x`` to equal. ``MISSING`` when
    no value can (a field absent, two disagreeing, a NaN), ``UNKEYED`` as plain_key."""
    key: Any = None
    first = True
    for path in paths:
        got = call_field(call, path)
        if got is MISSING:
            return MISSING
        k = plain_key(got)
        if k is UNKEYED or k is MISSING:
            return k
        if first:
            key, first = k, False
        elif key != k:
            return MISSING
    return MISSING if first else key
