"""Resolution of provenance sources: the right side of ``PATH from SOURCE``.

A source is a fixed set of places (the user's messages, trust classes, the results or
arguments of earlier calls matching a pattern, constants written in the spec), so a
quantified variable inside one is a spec error at the variable: the monitor keeps one
index per source, filled as calls run, which a variable would make one per value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from agentguard.language import ast as A
from agentguard.language import syntax as S
from agentguard.language.scope import Env, Scope, Skip
from agentguard.language.terms import TermPass

ResolveEvent = Callable[[S.Call, Env], A.Formula]
"""How the formula pass resolves a tool atom (a source's pattern is one)."""

_WORDS = ("user", "trusted", "untrusted")


class SourcePass:
    """Resolves sources; tool atoms (patterns) go back through the formula pass."""

    def __init__(self, scope: Scope, terms: TermPass, event: ResolveEvent) -> None:
        self.scope = scope
        self.terms = terms
        self.event = event

    def test(self, node: S.Provenance, env: Env) -> A.Test:
        """``ref [not] from source`` inside a tool atom, as a :class:`~A.Test`."""
        left, src = node.left, env.source
        if left.head == "result":
            raise self.scope.problem(
                "a `from` test reads an argument of the call (its result is not known "
                "before it runs); test results with results(...) sources instead",
                left.span,
                src,
            )
        field_ref = A.FieldRef((left.head, *left.path), left.span)
        op = "not from" if node.negated else "from"
        return A.Test(field_ref, op, self.source(node.source, env), node.span)

    def source(self, node: S.Node, env: Env) -> A.Source:
        return A.Source(tuple(self._parts(node, env)), node.span)

    def _parts(self, node: S.Node, env: Env) -> Iterator[A.SourcePart]:
        src = env.source
        if isinstance(node, S.SourceUnion):
            yield from self._parts(node.left, env)
            yield from self._parts(node.right, env)
            return
        if isinstance(node, S.Ref) and not node.path:
            if node.head in env.bound:
                raise self._variable(node.head, node.span, src)
            if node.head in _WORDS:
                yield A.SourcePart(node.head, span=node.span)
                return
        if isinstance(node, S.ListLit):
            values = self.terms.term(node, env)
            assert isinstance(values, A.ListLiteral)  # a list node resolves to a list
            self._no_variables(values, src)
            yield A.SourcePart("values", values=values, span=node.span)
            return
        if isinstance(node, S.Call) and node.name in ("results", "args") and node.args:
            yield self._calls(node, env)
            return
        raise self.scope.problem(
            f"{S.describe(node)} is not a source (expected user, trusted, untrusted, "
            "results(tool...), args(tool.path), a list, or a union of them with |)",
            node.span,
            src,
        )

    def _calls(self, node: S.Call, env: Env) -> A.SourcePart:
        """``results(pattern[path])`` / ``args(pattern path)``."""
        src = env.source
        if len(node.args) != 1:
            raise self.scope.problem(
                f"{node.name}(...) takes one pattern such as {node.name}(tool.path)",
                node.span,
                src,
            )
        arg = node.args[0]
        path: tuple[str | int, ...] = ()
        call: S.Call | None = None
        if isinstance(arg, S.Ref):
            call, path = S.Call(arg.head, (), arg.span), arg.path
        elif isinstance(arg, S.Call):
            call = arg
        elif isinstance(arg, S.CallPath):
            call, path = arg.call, arg.path
        elif isinstance(arg, S.CallOutcome):
            call, path = arg.call, (arg.word,)
        if call is None:
            raise self.scope.problem(
                f"{node.name}(...) takes a tool pattern such as {node.name}(tool.path)",
                arg.span,
                src,
            )
        if call.name in env.bound:
            raise self._variable(call.name, call.span, src)
        pattern = self.event(call, env)
        if not isinstance(pattern, A.Event):
            raise self.scope.problem(f"{call.name!r} is not a tool pattern here", call.span, src)
        for test in pattern.tests:
            self._no_variables(test.value, src)
        if node.name == "args" and not path:
            raise self.scope.problem(
                "args(...) names an argument: args(tool.key) or args(tool(tests).key)",
                node.span,
                src,
            )
        return A.SourcePart(node.name, pattern, path, span=node.span)

    def _no_variables(self, term: Any, src: str) -> None:
        var = _first_variable(term)
        if var is not None:
            raise self._variable(var.name, var.span, src)

    def _variable(self, name: str, span: A.Span | None, src: str) -> Skip:
        return self.scope.problem(
            f"quantified variable {name!r} inside a source: a source is a fixed set of "
            "places (test the variable beside it instead)",
            span,
            src,
        )


def _first_variable(term: Any) -> A.Var | None:
    """The first quantified variable in a term (a source's nested patterns included)."""
    if isinstance(term, A.Var):
        return term
    if isinstance(term, A.ListLiteral):
        items: tuple[Any, ...] = term.items
    elif isinstance(term, A.MapLiteral):
        items = tuple(v for _, v in term.items)
    elif isinstance(term, A.Source):
        items = tuple(p.values for p in term.parts if p.values is not None) + tuple(
            t.value for p in term.parts if p.pattern is not None for t in p.pattern.tests
        )
    else:
        return None
    for item in items:
        found = _first_variable(item)
        if found is not None:
            return found
    return None
