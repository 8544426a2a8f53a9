"""Where variables occur in a formula: the free ones, and the call fields a quantified
one is tested against (its *sites*, which define its active domain).

A leaf shared by the offline evaluator and the monitor's compiler, so the online domain
of a quantifier is the offline one.
"""

from __future__ import annotations

from typing import Any, Final

from agentguard.language import ast as A

FreeMemo = dict[int, tuple[Any, frozenset[str]]]
"""``id(node) -> (node, its free variables)``: the node is kept alive with its entry, so
its id cannot be reused by another node while the entry lasts."""

SHARED_FREE_LIMIT: Final = 1 << 16
"""Entries of :func:`shared_free_memo` before it is cleared (and refilled as asked)."""

_shared_free: FreeMemo = {}


def shared_free_memo() -> FreeMemo:
    """The memo every evaluator shares: a formula's free variables never change, and a
    spec scored trace after trace (``Firewall.finish``, ``verify_trace`` in a loop) asked
    the same questions of the same nodes each time, a quarter of a short trace's
    scoring. Bounded: cleared whole at :data:`SHARED_FREE_LIMIT` entries (a process that
    parses spec after spec does not keep every node alive); clearing is safe while
    others use it, as every entry pins its node."""
    if len(_shared_free) >= SHARED_FREE_LIMIT:
        _shared_free.clear()
    return _shared_free


def free_variables(node: Any, memo: FreeMemo | None = None) -> frozenset[str]:
    """Variables a node uses that no quantifier inside it binds.

    ``memo`` (id -> (node, result)) makes repeated questions about subtrees O(1), so
    asking about every node of a formula stays linear in its size.
    """
    if memo is not None:
        hit = memo.get(id(node))
        if hit is not None:
            return hit[1]
    out: frozenset[str] = frozenset()
    if isinstance(node, A.Var):
        out = frozenset({node.name})
    elif isinstance(node, A.Quantified):
        out = free_variables(node.body, memo) - {node.var}
        if node.domain is not None:
            out |= free_variables(node.domain, memo)
    elif isinstance(
        node, (A.Literal, A.Regex, A.MetricRef, A.FieldRef, A.Const, str, int, float, type(None))
    ):
        return out
    elif isinstance(node, tuple):
        for x in node:
            out |= free_variables(x, memo)
    elif hasattr(node, "__dataclass_fields__"):
        for name in node.__dataclass_fields__:
            if name != "span":
                out |= free_variables(getattr(node, name), memo)
    if memo is not None and hasattr(node, "__dataclass_fields__"):
        memo[id(node)] = (node, out)  # the node is kept alive with its entry
    return out


def collect_sites(
    node: Any, var: str, out: list[tuple[str | None, tuple[str | int, ...], bool]]
) -> None:
    """Where ``var`` is tested against a call field: (tool, path, element-wise) triples.

    These fields define a parametric quantifier's active domain; the online monitor uses
    the same function so that its domains match the offline evaluator's exactly.
    """
    if isinstance(node, A.Quantified):
        if node.var != var:  # an inner binding of the same name shadows ours
            collect_sites(node.body, var, out)
        return
    if isinstance(node, A.Event):
        for t in node.tests:
            if isinstance(t.value, A.Var) and t.value.name == var and not t.value.path:
                out.append((node.tool, t.field.path, t.op == "contains"))
        return
    if (
        isinstance(node, A.TracePredicate)
        and node.name in ("CalledWith", "CalledWithResult")
        and isinstance(node.args[0], str)  # a variable tool is grounded per instance first
    ):
        amap = (
            node.args[1]
            if node.name == "CalledWith"
            else (node.args[2] if len(node.args) > 2 else None)
        )
        if isinstance(amap, A.MapLiteral):
            for key, term in amap.items:
                if isinstance(term, A.Var) and term.name == var and not term.path:
                    out.append((node.args[0], (key,), False))
        if (
            node.name == "CalledWithResult"
            and isinstance(node.args[1], A.Var)
            and node.args[1].name == var
        ):
            out.append((node.args[0], ("result",), False))
        return
    if hasattr(node, "__dataclass_fields__"):
        for name in node.__dataclass_fields__:
            if name != "span":
                child = getattr(node, name)
                if isinstance(child, tuple):
                    for c in child:
                        collect_sites(c, var, out)
                else:
                    collect_sites(child, var, out)
