"""Resolution pass for values: literals, variables, metric references and domains."""

from __future__ import annotations

import re
from typing import Any

from agentguard.language import ast as A
from agentguard.language import macros
from agentguard.language import syntax as S
from agentguard.language.scope import Env, Scope, ref_text
from agentguard.language.vocabulary import BUILTIN_EXTRACTORS
from agentguard.regex import compile_regex


class TermPass:
    """Resolves value positions: comparison operands, predicate arguments, domains."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def term(self, node: S.Node, env: Env) -> A.Term:
        if env.expansion is not None:
            macros.charge(self.scope, env)
        src = env.source
        span = node.span
        if isinstance(node, S.String):
            return A.Literal(node.value, span)
        if isinstance(node, S.Number):
            return A.Literal(node.value, span)
        if isinstance(node, S.Bool):
            return A.Literal(node.value, span)
        if isinstance(node, S.Null):
            return A.Literal(None, span)
        if isinstance(node, S.RegexLit):
            return self._regex(node, src)
        if isinstance(node, S.ListLit):
            return A.ListLiteral(tuple(self.term(c, env) for c in node.items), span)
        if isinstance(node, S.MapLit):
            return A.MapLiteral(tuple((k, self.term(v, env)) for k, v in node.items), span)
        if isinstance(node, S.Ref):
            return self._ref(node, env)
        if isinstance(node, S.Call):
            return self.domain(node, env)
        if isinstance(node, S.OpArg):
            return A.Literal(node.op, span)
        raise self.scope.problem(f"{S.describe(node)} is not a value", span, src)

    def _regex(self, node: S.RegexLit, src: str) -> A.Regex:
        regex = A.Regex(node.pattern, node.flags, node.span)
        try:
            compile_regex(regex.pattern, regex.flags)
        except (re.error, OverflowError, RecursionError) as exc:  # `a{99999999999}`, deep groups
            raise self.scope.problem(
                f"invalid regular expression /{regex.pattern}/: {exc}", node.span, src
            ) from None
        return regex

    def check_pattern(self, value: A.Term, node: S.Node, src: str) -> None:
        """A constant string right of ``~`` is a pattern known now: an invalid one is a
        spec error where it is written (as ``/.../`` is), not an evaluation error at
        every call that reaches it."""
        if not (isinstance(value, A.Literal) and type(value.value) is str):
            return
        try:
            compile_regex(value.value)
        except (re.error, OverflowError, RecursionError, KeyError) as exc:
            raise self.scope.problem(
                f"invalid regular expression {value.value!r}: {exc}", node.span, src
            ) from None

    def _ref(self, node: S.Ref, env: Env) -> A.Term:
        name, path, span = node.head, node.path, node.span
        if name in env.macro_args and not path:
            inner, inner_env = env.macro_args[name]
            return self.term(inner, inner_env.expanding(env.expansion))
        if name in env.bound:
            return A.Var(name, path, span)
        if name == "metrics" and path:
            return A.MetricRef(path, span)
        if not path and self.scope.is_extractor(name):
            return A.Domain(name, span=span)
        hint = f' (quote it for a string: "{name}")' if not path else ""
        raise self.scope.problem(
            f"unbound variable {ref_text(name, path)!r}{hint}", span, env.source
        )

    def domain(self, node: S.Node, env: Env) -> A.Domain | A.ListLiteral:
        """The set a quantifier ranges over, or a parameter's ``from`` source."""
        src = env.source
        if isinstance(node, S.ListLit):
            return A.ListLiteral(tuple(self.term(c, env) for c in node.items), node.span)
        if isinstance(node, S.Ref):
            if not node.path and self.scope.is_extractor(node.head):
                return A.Domain(node.head, span=node.span)
            raise self.scope.problem(
                f"{node.head!r} is not a domain (expected e.g. args(tool.key) or results(tool))",
                node.span,
                src,
            )
        if isinstance(node, S.Call):
            return self._extractor_call(node, env)
        raise self.scope.problem(f"{S.describe(node)} is not a domain", node.span, src)

    def _extractor_call(self, node: S.Call, env: Env) -> A.Domain:
        src = env.source
        name = node.name
        if not self.scope.is_extractor(name):
            raise self.scope.problem(
                f"unknown domain extractor {name!r} (built in: {', '.join(BUILTIN_EXTRACTORS)}; "
                "declare others with `extractor NAME` and register them)",
                node.span,
                src,
            )
        tool: str | None = None
        path: tuple[str | int, ...] = ()
        extra: list[Any] = []
        for i, arg in enumerate(node.args):
            if i == 0 and isinstance(arg, S.Ref):
                tool = None if arg.head == "any" else arg.head
                path = arg.path
                if tool is not None:
                    self.scope.check_tool(tool, arg.span, src)
            else:
                term = self.term(arg, env)
                if not isinstance(term, A.Literal):
                    raise self.scope.problem(
                        "extractor arguments after the first must be constants", arg.span, src
                    )
                extra.append(term.value)
        return A.Domain(name, tool, path, tuple(extra), node.span)
