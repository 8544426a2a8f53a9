"""Resolution pass for ``def`` macros: the macro table and the binding of each use.

A macro body stays a syntax node; each use binds the parameters to the unresolved
argument nodes (with the caller's environment) and the formula pass resolves the body
under that binding, so ``def m(x) := F x`` works for any formula or value ``x``.
"""

from __future__ import annotations

from agentguard.language import ast as A
from agentguard.language import syntax as S
from agentguard.language.scope import Env, Macro, Scope

MAX_MACRO_DEPTH = 64


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
    if env.depth >= MAX_MACRO_DEPTH:
        raise scope.problem(f"macro {name!r} expands recursively", node.span, src)
    bindings = {p: (a, env) for p, a in zip(macro.params, args, strict=True)}
    return Env((), bindings, env.depth + 1, macro.source)


def check_formula_argument(scope: Scope, arg: S.Node, arg_env: Env) -> None:
    """A macro parameter used as a formula must have been given a formula."""
    if isinstance(arg, S.VALUE_NODES):
        raise scope.problem("macro argument is not a formula here", arg.span, arg_env.source)
