"""The one module that knows lark's tree shapes: raw parse tree → :mod:`.syntax` nodes.

A rule-named lark ``Transformer`` (one method per grammar rule or alias, children already
transformed), as lark's own examples and pylogics do; the resolver's passes then work on
typed nodes and never on ``Tree``/``Token``. It is the non-recursive transformer, so a
formula nested thousands deep is turned into nodes without touching Python's stack.
"""

# ruff: noqa: ARG002 - every rule method takes lark's (meta, children), used or not

from __future__ import annotations

import ast as pyast
import json
import re
import warnings
from typing import Any

from lark import Token, Transformer_NonRecursive, v_args
from lark.exceptions import VisitError
from lark.tree import Meta

from agentguard.errors import SourceLocation, SpecSyntaxError, draw_caret
from agentguard.language import syntax as S
from agentguard.language.ast import STAR, Span, matches_step
from agentguard.language.grammar import parse_tree
from agentguard.regex import compile_regex

CMP_CANON = {"==": "="}
Kids = list[Any]  # a rule's transformed children (an alias: the class defines `list`)


class _LiteralError(Exception):
    """Internal: a literal the lexer accepted has no value (a bad escape, too many digits)."""

    def __init__(self, token: Token, what: str, reason: str) -> None:
        super().__init__(reason)
        self.token = token
        self.what = what
        self.reason = reason


def decode_string(tok: Token) -> str:
    """The value of a ``"..."`` or ``'...'`` literal (JSON escapes, else Python's)."""
    text = str(tok)
    if text.startswith('"'):
        try:
            return str(json.loads(text))
        except ValueError:
            pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "\q" stays "\\q", as Python reads it
            return str(pyast.literal_eval(text))
    except (SyntaxError, ValueError) as exc:
        raise _LiteralError(tok, "string", str(exc.args[0] if exc.args else exc)) from None


def _int(tok: Token) -> int:
    """An integer token's value; past Python's digit limit it is a located syntax error."""
    try:
        return int(str(tok))
    except ValueError as exc:
        raise _LiteralError(tok, "number", str(exc).split(";")[0]) from None


def _number(tok: Token) -> int | float:
    text = str(tok)
    if any(ch in text for ch in ".eE"):
        return float(text)
    return _int(tok)


def _name(text: str) -> str:
    return text[1:-1] if text.startswith("`") else text


@v_args(meta=True)
class _ToSyntax(Transformer_NonRecursive[Token, Any]):
    """One method per rule of ``agentltl.lark``; ``None`` children are absent optionals."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source

    def _span(self, meta: Meta) -> Span | None:
        if getattr(meta, "empty", True):
            return None
        return Span(self.source, meta.line, meta.column, meta.end_line, meta.end_column)

    def _token_span(self, tok: Token) -> Span | None:
        if tok.line is None:
            return None
        return Span(
            self.source,
            tok.line,
            tok.column or 1,
            tok.end_line or tok.line,
            tok.end_column or tok.column or 1,
        )

    # ------------------------------------------------------------------- file
    def start(self, meta: Meta, kids: Kids) -> S.SpecFile:
        return S.SpecFile(tuple(kids))

    def formula_only(self, meta: Meta, kids: Kids) -> S.Node:
        node: S.Node = kids[0]
        return node

    def spec_decl(self, meta: Meta, kids: Kids) -> S.SpecDecl:
        return S.SpecDecl(kids[0], self._span(meta))

    def import_decl(self, meta: Meta, kids: Kids) -> S.ImportDecl:
        return S.ImportDecl(decode_string(kids[0]), self._span(meta))

    def def_params(self, meta: Meta, kids: Kids) -> tuple[str, ...]:
        return tuple(str(k) for k in kids if k is not None)

    def def_decl(self, meta: Meta, kids: Kids) -> S.DefDecl:
        return S.DefDecl(str(kids[0]), kids[1] or (), kids[2], self._span(meta))

    def predicate_decl(self, meta: Meta, kids: Kids) -> S.PredicateDecl:
        arity = len([k for k in kids[1:] if k is not None])
        return S.PredicateDecl(kids[0], arity, self._span(meta))

    def extractor_decl(self, meta: Meta, kids: Kids) -> S.ExtractorDecl:
        return S.ExtractorDecl(kids[0], self._span(meta))

    def tool_decl(self, meta: Meta, kids: Kids) -> S.ToolDecl:
        params = tuple(k for k in kids[1:] if isinstance(k, S.ParamDecl))
        requires = kids[-1] if len(kids) > 1 and isinstance(kids[-1], _Requires) else None
        returns = next((k for k in kids[1:] if isinstance(k, Token)), None)
        return S.ToolDecl(
            kids[0],
            params,
            requires.formula if requires else None,
            self._span(meta),
            None if returns is None else str(returns),
            None if returns is None else self._token_span(returns),
        )

    def returns(self, meta: Meta, kids: Kids) -> Token:
        tok: Token = kids[0]
        return tok

    def trust_decl(self, meta: Meta, kids: Kids) -> S.TrustDecl:
        return S.TrustDecl(str(kids[0]) == "trusted", tuple(kids[1:]), self._span(meta))

    def requires(self, meta: Meta, kids: Kids) -> _Requires:
        return _Requires(kids[0])

    def param(self, meta: Meta, kids: Kids) -> S.ParamDecl:
        type_tok: Token = kids[2]
        extras = kids[3:]
        source = next((e for e in extras if isinstance(e, S.ParamFrom)), None)
        bound = next((e for e in extras if isinstance(e, S.ParamBound)), None)
        return S.ParamDecl(
            kids[0],
            kids[1] is not None,
            str(type_tok),
            self._token_span(type_tok),
            source,
            bound,
            self._span(meta),
        )

    def param_from(self, meta: Meta, kids: Kids) -> S.ParamFrom:
        return S.ParamFrom(kids[0], self._span(meta))

    def param_bound(self, meta: Meta, kids: Kids) -> S.ParamBound:
        return S.ParamBound(kids[0], kids[1], self._span(meta))

    def constraint_decl(self, meta: Meta, kids: Kids) -> S.ConstraintDecl:
        clauses = tuple(k for k in kids[1:-1] if isinstance(k, S.Clause))
        return S.ConstraintDecl(kids[0], clauses, kids[-1], self._span(meta))

    def layer_clause(self, meta: Meta, kids: Kids) -> S.Clause:
        return S.Clause("layer", str(kids[0]), None, self._span(meta))

    def weight_clause(self, meta: Meta, kids: Kids) -> S.Clause:
        return S.Clause("weight", str(kids[0]), None, self._span(meta))

    def severity_clause(self, meta: Meta, kids: Kids) -> S.Clause:
        arg = None if kids[1] is None else str(kids[1])
        if arg is not None and arg.isdigit():
            _int(kids[1])  # a count too long to read is a syntax error here
        return S.Clause("severity", str(kids[0]), arg, self._span(meta))

    def message_clause(self, meta: Meta, kids: Kids) -> S.Clause:
        return S.Clause("message", decode_string(kids[0]), None, self._span(meta))

    # ---------------------------------------------------------------- formulas
    def binary(self, meta: Meta, kids: Kids) -> S.Binary:
        return S.Binary(kids[1], kids[0], kids[2], self._span(meta))

    def not_(self, meta: Meta, kids: Kids) -> S.Not:
        return S.Not(kids[1], self._span(meta))

    def unary_op(self, meta: Meta, kids: Kids) -> S.Unary:
        return S.Unary(kids[0], kids[1], self._span(meta))

    def bounded_op(self, meta: Meta, kids: Kids) -> S.Bounded:
        return S.Bounded(kids[0], _int(kids[1]), kids[2], self._span(meta))

    def quantified(self, meta: Meta, kids: Kids) -> S.Quantified:
        quant, var, domain, body = kids
        return S.Quantified(quant, str(var), domain, body, self._span(meta))

    def true(self, meta: Meta, kids: Kids) -> S.Bool:
        return S.Bool(True, self._span(meta))

    def false(self, meta: Meta, kids: Kids) -> S.Bool:
        return S.Bool(False, self._span(meta))

    def comparison(self, meta: Meta, kids: Kids) -> S.Comparison:
        return S.Comparison(kids[0], kids[1], kids[2], self._span(meta))

    def call(self, meta: Meta, kids: Kids) -> S.Call:
        args = tuple(k for k in kids[1:] if k is not None)
        return S.Call(kids[0], args, self._span(meta))

    def call_outcome(self, meta: Meta, kids: Kids) -> S.CallOutcome | S.CallPath:
        steps = [_int(k) if isinstance(k, Token) else k for k in kids[1:]]
        if len(steps) == 1 and isinstance(steps[0], str) and steps[0] is not STAR:
            return S.CallOutcome(kids[0], steps[0], self._span(meta))
        return S.CallPath(kids[0], tuple(steps), self._span(meta))

    def from_test(self, meta: Meta, kids: Kids) -> S.Provenance:
        return S.Provenance(kids[0], False, kids[1], self._span(meta))

    def not_from_test(self, meta: Meta, kids: Kids) -> S.Provenance:
        return S.Provenance(kids[0], True, kids[1], self._span(meta))

    def source_union(self, meta: Meta, kids: Kids) -> S.SourceUnion:
        return S.SourceUnion(kids[0], kids[1], self._span(meta))

    def star(self, meta: Meta, kids: Kids) -> str:
        return STAR

    def matches(self, meta: Meta, kids: Kids) -> str:
        regex = self.regex(meta, kids)
        try:  # a path step is no term the resolver checks: an invalid pattern is located here
            compile_regex(regex.pattern, regex.flags)
        except (re.error, OverflowError, RecursionError) as exc:
            raise _LiteralError(kids[0], "regular expression", str(exc)) from None
        return matches_step(regex.pattern, regex.flags)

    def op_arg(self, meta: Meta, kids: Kids) -> S.OpArg:
        return S.OpArg(kids[0], self._span(meta))

    def ref(self, meta: Meta, kids: Kids) -> S.Ref:
        path: list[str | int] = []
        for seg in kids[1:]:
            path.append(_int(seg) if isinstance(seg, Token) else seg)
        return S.Ref(kids[0], tuple(path), self._span(meta))

    def name(self, meta: Meta, kids: Kids) -> str:
        return _name(str(kids[0]))

    # ------------------------------------------------------------------ values
    def string(self, meta: Meta, kids: Kids) -> S.String:
        return S.String(decode_string(kids[0]), self._span(meta))

    def number(self, meta: Meta, kids: Kids) -> S.Number:
        return S.Number(_number(kids[0]), self._span(meta))

    def null(self, meta: Meta, kids: Kids) -> S.Null:
        return S.Null(self._span(meta))

    def regex(self, meta: Meta, kids: Kids) -> S.RegexLit:
        text = str(kids[0])
        end = text.rfind("/")
        return S.RegexLit(text[1:end].replace("\\/", "/"), text[end + 1 :], self._span(meta))

    def list(self, meta: Meta, kids: Kids) -> S.ListLit:
        return S.ListLit(tuple(k for k in kids if k is not None), self._span(meta))

    def map(self, meta: Meta, kids: Kids) -> S.MapLit:
        return S.MapLit(tuple(k for k in kids if k is not None), self._span(meta))

    def pair(self, meta: Meta, kids: Kids) -> tuple[str, S.Node]:
        key: Token = kids[0]
        return (decode_string(key) if key.type == "STRING" else str(key), kids[1])

    # --------------------------------------------------------- operator spellings
    def _spelling(self, meta: Meta, kids: Kids) -> str:
        return CMP_CANON.get(str(kids[0]), str(kids[0]))

    iff_op = implies_op = or_op = and_op = not_op = tbin_op = unop = quant = _spelling
    cmp = _spelling


class _Requires:
    """Internal marker: a tool's ``requires`` clause, told apart from its parameters."""

    __slots__ = ("formula",)

    def __init__(self, formula: S.Node) -> None:
        self.formula = formula


def _transform(text: str, source: str, start: str) -> Any:
    tree = parse_tree(text, source, start=start)
    try:
        return _ToSyntax(source).transform(tree)
    except VisitError as exc:
        orig = exc.orig_exc
        if isinstance(orig, _LiteralError):
            line, column = orig.token.line or 1, orig.token.column or 1
            shown = str(orig.token) if len(orig.token) <= 40 else str(orig.token)[:37] + "..."
            raise SpecSyntaxError(
                f"invalid {orig.what} literal {shown!r}: {orig.reason}",
                SourceLocation(source, line, column),
                draw_caret(text, line, column),
                [],
            ) from None
        raise orig from None


def parse_file(text: str, source: str) -> S.SpecFile:
    """Parse a whole spec to syntax nodes, or raise :class:`SpecSyntaxError`."""
    result: S.SpecFile = _transform(text, source, "start")
    return result


def parse_node(text: str, source: str) -> S.Node:
    """Parse one formula to a syntax node, or raise :class:`SpecSyntaxError`."""
    result: S.Node = _transform(text, source, "formula_only")
    return result
