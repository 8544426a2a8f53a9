"""Resolution pass for ``def`` macros: the macro table and the binding of each use.

A macro body stays a syntax node; each use binds the parameters to the unresolved
argument nodes (with the caller's environment) and the formula pass resolves the body
under that binding, so ``def m(x) := F x`` works for any formula or value ``x``.

Expansion is budgeted. A macro that uses another twice doubles at each level, so six
``def``s of 25 bytes (``def b(x) := a(a(x))``...) expand to 2^32 nodes, and parsing such a
spec hung. Every node resolved inside an expansion is counted (:func:`charge`); past
:data:`MAX_EXPANSION` the spec is refused at once, at the macro use that started the
expansion. A macro used inside its own expansion is refused as recursive; nesting is
bounded too (:data:`MAX_MACRO_DEPTH`).
"""

from __future__ import annotations

from typing import Final

from agentguard.errors import Problem, SourceLocation, SpecSemanticError
from agentguard.language import ast as A
from agentguard.language import syntax as S
from agentguard.language.scope import Env, Macro, MacroUse, Scope

MAX_MACRO_DEPTH: Final = 64
"""Macro uses nested inside one another's bodies before a use is refused (deeper than any
real spec; a recursive use is refused at once)."""

MAX_EXPANSION: Final = 100_000
"""Syntax nodes (formulas and values) all of a spec's macro expansions may resolve to,
together. The shipped specs use under 30; resolving the whole budget takes about half a
second, so a doubly exponential macro spec is refused in bounded time."""


def define(scope: Scope, decl: S.DefDecl, source: str) -> None:
    """Add a ``def`` to the table, or record why it cannot be added."""
    name, params = decl.name, decl.params
    if name in scope.macros:
        scope.problem(f"macro {name!r} is defined twice", decl.span, source)
        return
    if name in A.TRACE_PREDICATES:
        scope.problem(f"macro {name!r} shadows a built-in trace predicate", decl.span, source)
        return
    if len(set(params)) != len(params):
        scope.problem(f"macro {name!r} repeats a parameter name", decl.span, source)
    scope.macros[name] = Macro(name, params, decl.body, source, decl.span)


def bind(scope: Scope, name: str, args: tuple[S.Node, ...], node: S.Node, env: Env) -> Env:
    """The environment a use ``name(args)`` resolves the macro's body in."""
    macro = scope.macros[name]
    src = env.source
    if len(args) != len(macro.params):
        raise scope.problem(
            f"macro {name!r} takes {len(macro.params)} argument(s), got {len(args)}",
            node.span,
            src,
        )
    if name in env.inside:
        raise scope.problem(f"macro {name!r} expands recursively", node.span, src)
    if env.depth >= MAX_MACRO_DEPTH:
        raise scope.problem(
            f"macro {name!r} nests more than {MAX_MACRO_DEPTH} macro uses deep "
            "(agentguard.language.macros.MAX_MACRO_DEPTH)",
            node.span,
            src,
        )
    bindings = {p: (a, env) for p, a in zip(macro.params, args, strict=True)}
    use = env.expansion or MacroUse(name, node.span, src)
    return Env((), bindings, env.depth + 1, macro.source, use, (*env.inside, name))


def charge(scope: Scope, env: Env) -> None:
    """Count one node resolved under ``env``; refuse the spec once its macro expansions
    pass :data:`MAX_EXPANSION` (raised at once, with the problems found so far)."""
    use = env.expansion
    if use is None:
        return
    scope.expanded += 1
    if scope.expanded <= MAX_EXPANSION:
        return
    span = use.span
    where = SourceLocation(use.source, span.line, span.column) if span else None
    over = Problem(
        f"macro {use.name!r} expands to more than {MAX_EXPANSION:,} syntax nodes (the "
        "budget of a spec's macro expansions, agentguard.language.macros.MAX_EXPANSION): "
        "a macro that uses another twice doubles its size at each level",
        where,
    )
    raise SpecSemanticError([*scope.problems, over])


def check_formula_argument(scope: Scope, arg: S.Node, arg_env: Env) -> None:
    """A macro parameter used as a formula must have been given a formula."""
    if isinstance(arg, S.VALUE_NODES):
        raise scope.problem("macro argument is not a formula here", arg.span, arg_env.source)
