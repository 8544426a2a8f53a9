"""Resolution pass for formulas: connectives, quantifiers, atoms, trace predicates.

Each name in formula position is classified here (tool atom, macro use, trace predicate,
user predicate); value positions go to :class:`~.terms.TermPass`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from agentguard.language import ast as A
from agentguard.language import macros
from agentguard.language import syntax as S
from agentguard.language.scope import Env, Scope, Skip, ref_text
from agentguard.language.sources import SourcePass
from agentguard.language.terms import TermPass

_UNOPS: dict[str, Callable[[A.Formula], A.Formula]] = {
    "X": lambda f: A.Next(f, True),
    "N": lambda f: A.Next(f, False),
    "F": lambda f: A.Eventually(f),
    "G": lambda f: A.Always(f),
    "Y": lambda f: A.Yesterday(f, True),
    "Z": lambda f: A.Yesterday(f, False),
    "O": lambda f: A.Once(f),
    "H": lambda f: A.Historically(f),
}
_BOUNDED: dict[str, Callable[[A.Formula, int], A.Formula]] = {
    "F": A.Eventually,
    "G": A.Always,
    "O": A.Once,
    "H": A.Historically,
}
_BINOPS: dict[str, Callable[[A.Formula, A.Formula], A.Formula]] = {
    "&": A.And,
    "and": A.And,
    "|": A.Or,
    "or": A.Or,
    "->": A.Implies,
    "implies": A.Implies,
    "<->": A.Iff,
    "iff": A.Iff,
    "U": A.Until,
    "W": A.WeakUntil,
    "R": A.Release,
    "S": A.Since,
}


_CMP_CANON = {"==": "="}


def _with_span(node: A.Formula, span: A.Span | None) -> A.Formula:
    return dataclasses.replace(node, span=span)


class FormulaPass:
    """Resolves formula positions against the scope's tools, macros and predicates."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.terms = TermPass(scope)
        self.sources = SourcePass(scope, self.terms, self._call)

    def try_formula(self, node: S.Node, env: Env) -> A.Formula | None:
        """The formula, or None once its problems are recorded."""
        try:
            return self.formula(node, env)
        except Skip:
            return None
        except RecursionError:
            self.scope.problem(
                "formula nested too deeply to process; split it into several constraints or macros",
                node.span,
                env.source,
            )
            return None

    def formula(self, node: S.Node, env: Env) -> A.Formula:
        if env.expansion is not None:
            macros.charge(self.scope, env)
        src = env.source
        span = node.span
        if isinstance(node, S.Binary):
            lf = self.try_formula(node.left, env)
            rf = self.formula(node.right, env)
            if lf is None:
                raise Skip()
            return _with_span(_BINOPS[node.op](lf, rf), span)
        if isinstance(node, S.Not):
            return A.Not(self.formula(node.operand, env), span)
        if isinstance(node, S.Unary):
            return _with_span(_UNOPS[node.op](self.formula(node.operand, env)), span)
        if isinstance(node, S.Bounded):
            if node.op not in _BOUNDED:
                raise self.scope.problem(
                    f"{node.op}[<=k] is not defined; bounds apply to F, G, O, H", span, src
                )
            operand = self.formula(node.operand, env)
            return _with_span(_BOUNDED[node.op](operand, node.bound), span)
        if isinstance(node, S.Bool):
            return A.Const(node.value, span)
        if isinstance(node, S.Quantified):
            domain = self.terms.domain(node.domain, env) if node.domain is not None else None
            body = self.formula(node.body, env.bind(node.var))
            return A.Quantified(node.quant, node.var, domain, body, span)
        if isinstance(node, S.Ref):
            return self._ref(node, env)
        if isinstance(node, S.Call):
            return self._call(node, env)
        if isinstance(node, S.CallOutcome):
            return self._outcome(self._call(node.call, env), node.word, span, src)
        if isinstance(node, S.Comparison):
            left = self.terms.term(node.left, env)
            right = self.terms.term(node.right, env)
            if node.op in ("~", "!~"):
                self.terms.check_pattern(right, node.right, src)
            return A.Compare(left, node.op, right, span)
        if isinstance(node, S.Provenance):
            raise self.scope.problem(
                "a `from` test reads a call's argument: write it inside the call's "
                "parentheses, e.g. send_money(recipient from trusted)",
                span,
                src,
            )
        raise self.scope.problem(f"{S.describe(node)} is not a formula", span, src)

    def _ref(self, node: S.Ref, env: Env) -> A.Formula:
        name, path, span, src = node.head, node.path, node.span, env.source
        if len(path) == 1 and path[0] in A.OUTCOMES and name not in env.bound:
            bare = self._ref(S.Ref(name, (), span), env)
            return self._outcome(bare, str(path[0]), span, src)
        if path:
            outcome = " or test how the call ended: `.ok`, `.error`" if len(path) == 1 else ""
            raise self.scope.problem(
                f"{ref_text(name, path)} is a value, not a formula (compare it: `... = v`"
                f"{outcome})",
                span,
                src,
            )
        if name in env.macro_args:
            return self._macro_argument(*env.macro_args[name], env)
        if name in env.bound:
            raise self.scope.problem(f"variable {name!r} is used as a formula", span, src)
        if name == "any":
            return A.Event(None, span=span)
        if name in self.scope.macros:
            inner = macros.bind(self.scope, name, (), node, env)
            return self.formula(self.scope.macros[name].body, inner)
        if name in A.TRACE_PREDICATES or self.scope.is_predicate(name):
            raise self.scope.problem(f"{name!r} needs arguments: {name}(...)", span, src)
        self.scope.check_tool(name, span, src)
        return A.Event(name, span=span)

    def _outcome(self, inner: A.Formula, word: str, span: A.Span | None, src: str) -> A.Formula:
        """``atom.ok`` / ``atom.error``: the atom, also testing how its call ended."""
        if word not in A.OUTCOMES:
            raise self.scope.problem(
                f"unknown call outcome `.{word}` (an atom ends in `.ok` or `.error`)", span, src
            )
        if not isinstance(inner, A.Event):
            raise self.scope.problem(
                f"`.{word}` applies to a tool atom such as `lookup.{word}`", span, src
            )
        if inner.outcome not in (None, word):
            raise self.scope.problem(
                f"an atom cannot test both `.{inner.outcome}` and `.{word}`", span, src
            )
        return A.Event(inner.tool, inner.tests, word, span)

    def _macro_argument(self, arg: S.Node, arg_env: Env, env: Env) -> A.Formula:
        """The argument bound to a parameter, resolved where it was written, and counted
        as part of the expansion that uses it (``env``'s)."""
        macros.check_formula_argument(self.scope, arg, arg_env)
        return self.formula(arg, arg_env.expanding(env.expansion))

    def _call(self, node: S.Call, env: Env) -> A.Formula:
        name, args, span, src = node.name, node.args, node.span, env.source
        if name in env.macro_args and not args:  # `x()` for a macro parameter `x`
            return self._macro_argument(*env.macro_args[name], env)
        if name in A.TRACE_PREDICATES:
            return A.TracePredicate(name, self._trace_predicate_args(node, env), span)
        if name in self.scope.macros:
            inner = macros.bind(self.scope, name, args, node, env)
            return self.formula(self.scope.macros[name].body, inner)
        if self.scope.is_predicate(name):
            arity = self.scope.predicate_arity(name)
            if arity is not None and arity != len(args):
                raise self.scope.problem(
                    f"predicate {name!r} takes {arity} argument(s), got {len(args)}", span, src
                )
            return A.UserPredicate(name, tuple(self.terms.term(a, env) for a in args), span)
        if self.scope.is_extractor(name):
            raise self.scope.problem(
                f"{name!r} is a domain extractor, not a formula (use `x in {name}(...)`)",
                span,
                src,
            )
        return self._event(node, env)

    def _event(self, node: S.Call, env: Env) -> A.Formula:
        """A tool atom ``tool(key = value, ...)`` (``any(...)``: any tool)."""
        name, src = node.name, env.source
        tool = None if name == "any" else name
        tests: list[A.Test] = []
        for arg in node.args:
            if isinstance(arg, S.Provenance):
                tests.append(self.sources.test(arg, env))
                continue
            if not isinstance(arg, S.Comparison):
                if name in self.scope.tools or name == "any":
                    raise self.scope.problem(
                        f"arguments of tool atom {name!r} must be tests such as `key = value`",
                        arg.span,
                        src,
                    )
                raise self.scope.problem(
                    f"unknown macro or predicate {name!r}: define it (`def {name}(...) := ...`), "
                    f"declare a registered predicate (`predicate {name}(...)`), or, for a tool, "
                    "write tests such as `key = value`",
                    node.span,  # at the name, the word that is unknown
                    src,
                )
            left = arg.left
            if not isinstance(left, S.Ref):
                raise self.scope.problem(
                    "a test must start with an argument name or `result`", arg.span, src
                )
            field_ref = A.FieldRef((left.head, *left.path), left.span)
            value = self.terms.term(arg.right, env)
            if arg.op in ("~", "!~"):
                self.terms.check_pattern(value, arg.right, src)
            tests.append(A.Test(field_ref, arg.op, value, arg.span))
        if tool is not None:
            self.scope.check_tool(tool, node.span, src)
        return A.Event(tool, tuple(tests), span=node.span)

    def _trace_predicate_args(self, node: S.Call, env: Env) -> tuple[Any, ...]:
        name, args, src = node.name, node.args, env.source
        kinds = A.TRACE_PREDICATES[name].split()
        optional_last = name == "CalledWithResult"
        if len(args) != len(kinds) and not (optional_last and len(args) == len(kinds) - 1):
            raise self.scope.problem(
                f"{name} takes {len(kinds)} argument(s), got {len(args)}", node.span, src
            )
        out: list[Any] = []
        for kind, arg in zip(kinds, args, strict=False):  # CalledWithResult may omit its map
            if kind == "t":
                out.append(self._tool_name(arg, env, name))
            elif kind == "[t]":
                if not isinstance(arg, S.ListLit):
                    raise self.scope.problem(
                        f"{name} expects a list of tools like [a, b]", arg.span, src
                    )
                out.append(tuple(self._tool_name(c, env, name) for c in arg.items))
            elif kind == "n":
                value = self.terms.term(arg, env)
                if (
                    not isinstance(value, A.Literal)
                    or not isinstance(value.value, int)
                    or isinstance(value.value, bool)
                ):
                    raise self.scope.problem(f"{name} expects an integer here", arg.span, src)
                if value.value < 0:
                    raise self.scope.problem(
                        f"{name} expects a non-negative integer here", arg.span, src
                    )
                out.append(value.value)
            elif kind == "op":
                if isinstance(arg, S.OpArg):
                    op = arg.op
                else:
                    term = self.terms.term(arg, env)
                    op = term.value if isinstance(term, A.Literal) else ""
                op = _CMP_CANON.get(op, op)
                if op not in ("=", ">=", "<=", ">", "<"):
                    raise self.scope.problem(
                        f"{name} expects one of = >= <= > < here", arg.span, src
                    )
                out.append(op)
            elif kind == "{}":
                term = self.terms.term(arg, env)
                if not isinstance(term, A.MapLiteral):
                    raise self.scope.problem(
                        f"{name} expects an argument map like {{key: value}}", arg.span, src
                    )
                out.append(term)
            elif kind == "v":
                out.append(self.terms.term(arg, env))
            elif kind == "f":
                fname = str(self._tool_name(arg, env, name, check=False))
                if (
                    fname not in self.scope.vocabulary.context_predicates
                    and fname not in self.scope.declared_predicates
                ):
                    raise self.scope.problem(
                        f"Predicate({fname}): no such registered predicate "
                        "(register it with agentguard.register_context_predicate or declare it)",
                        arg.span,
                        src,
                    )
                out.append(fname)
        return tuple(out)

    def _tool_name(self, arg: S.Node, env: Env, pred: str, *, check: bool = True) -> str | A.Var:
        """A tool name (bare or quoted, checked against the declared tools), or a bound
        variable: ``forall x in [a, b]: Called(x)`` substitutes ``x`` (Appendix A.2.4)."""
        src = env.source
        if isinstance(arg, S.Ref) and not arg.path:
            name = arg.head
            if name in env.macro_args:
                inner, inner_env = env.macro_args[name]
                return self._tool_name(inner, inner_env, pred, check=check)
            if name in env.bound and check:
                return A.Var(name, (), arg.span)
            if check:
                self.scope.check_tool(name, arg.span, src)
            return name
        if isinstance(arg, S.String):
            if check:
                self.scope.check_tool(arg.value, arg.span, src)
            return arg.value
        raise self.scope.problem(f"{pred} expects a tool name here", arg.span, src)
