"""Turn lark's raw tree into the resolved AST, collecting every semantic problem.

Resolution classifies names (tool atom, trace predicate, macro, user predicate,
extractor, variable), expands ``def`` macros, inlines ``import``-ed specs, and checks
arities, bound variables, declared tools, weights and severities. Problems are
collected and raised together as one :class:`SpecSemanticError`.
"""

from __future__ import annotations

import ast as pyast
import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lark import Token, Tree

from agentguard.errors import (
    Problem,
    SourceLocation,
    SpecError,
    SpecSemanticError,
    SpecSyntaxError,
)
from agentguard.language import ast as A
from agentguard.language.files import inside, read_spec_file
from agentguard.language.grammar import parse_tree
from agentguard.language.vocabulary import BUILTIN_EXTRACTORS, Vocabulary, default_vocabulary
from agentguard.regex import compile_regex
from agentguard.severity import DEFAULT_SEVERITY, Severity, SeverityKind
from agentguard.trace.model import DIALOGUE_NAMES

_PARAM_TYPES = {
    "str": "str",
    "string": "str",
    "number": "number",
    "float": "number",
    "int": "int",
    "integer": "int",
    "bool": "bool",
    "boolean": "bool",
    "list": "list",
    "array": "list",
    "dict": "dict",
    "object": "dict",
    "any": "any",
}
IMPLICIT_TOOLS = frozenset({"final_answer"}) | DIALOGUE_NAMES
"""Tools every spec may mention without declaring them (and the dialogue events)."""

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
_MAX_MACRO_DEPTH = 64


class _Skip(Exception):
    """Internal: a problem was recorded; abandon the current node."""


@dataclass(slots=True)
class _Macro:
    name: str
    params: tuple[str, ...]
    body: Tree[Any]
    source: str
    span: A.Span | None


@dataclass(slots=True)
class _Env:
    """Lexical environment while resolving a formula."""

    bound: tuple[str, ...] = ()
    macro_args: Mapping[str, tuple[Tree[Any] | Token, _Env]] = field(default_factory=dict)
    depth: int = 0
    source: str = "<string>"

    def bind(self, name: str) -> _Env:
        return _Env((*self.bound, name), self.macro_args, self.depth, self.source)


class Resolver:
    """Resolves one spec (and its imports) against a registry."""

    def __init__(self, registry: Vocabulary | None = None, *, check_tools: bool = True) -> None:
        self.registry = registry if registry is not None else default_vocabulary()
        self.check_tools = check_tools
        self.problems: list[Problem] = []
        self.macros: dict[str, _Macro] = {}
        self.tools: dict[str, A.ToolDecl] = {}
        self.declared_predicates: dict[str, int] = {}
        self.declared_extractors: set[str] = set()
        self.constraints: list[A.Constraint] = []
        self._constraint_names: set[str] = set()
        self.spec_name: str | None = None
        self._loading: list[Path] = []
        self._loaded: set[Path] = set()
        self.import_roots: tuple[Path, ...] = ()  # folders imports may reach besides _root
        self._root = Path.cwd()

    # ---------------------------------------------------------------- entry points
    def resolve_spec(self, text: str, source: str, base: Path | None) -> A.Spec:
        self._root = (base or Path.cwd()).resolve()
        tree = parse_tree(text, source)
        path = Path(source).resolve() if base is not None or Path(source).exists() else None
        if path is not None:
            self._loading.append(path)
            self._loaded.add(path)
        self._collect(tree, source, base, top=True)
        self._resolve_items(tree, source)
        if self.problems:
            raise SpecSemanticError(self.problems)
        name = self.spec_name or (Path(source).stem if source not in ("<string>", "") else None)
        return A.Spec(
            name=name,
            constraints=tuple(self.constraints),
            tools=tuple(self.tools.values()),
            predicates=tuple(sorted(self.declared_predicates.items())),
            extractors=tuple(sorted(self.declared_extractors)),
            source=source,
            text=text,
        )

    def resolve_formula(
        self, text: str, source: str, tools: Mapping[str, A.ToolDecl] | None
    ) -> A.Formula:
        tree = parse_tree(text, source, start="formula_only")
        if tools:
            self.tools = dict(tools)
        root = tree.children[0]
        if not isinstance(root, (Tree, Token)):  # pragma: no cover - the grammar guarantees it
            raise SpecSemanticError([Problem("expected a formula", None)])
        formula = self._try_formula(root, _Env(source=source))
        if self.problems or formula is None:
            raise SpecSemanticError(self.problems)
        return formula

    # ------------------------------------------------------------- helpers
    def _span(self, node: Tree[Any] | Token, source: str) -> A.Span | None:
        if isinstance(node, Token):
            if node.line is None:
                return None
            return A.Span(
                source,
                node.line,
                node.column or 1,
                node.end_line or node.line,
                node.end_column or node.column or 1,
            )
        meta = node.meta
        if getattr(meta, "empty", True):
            return None
        return A.Span(source, meta.line, meta.column, meta.end_line, meta.end_column)

    def _problem(self, message: str, node: Tree[Any] | Token | None, source: str) -> _Skip:
        span = self._span(node, source) if node is not None else None
        loc = (
            SourceLocation(source, span.line, span.column) if span else SourceLocation(source, 1, 1)
        )
        self.problems.append(Problem(message, loc))
        return _Skip()

    # ------------------------------------------------------------- pass 1: declarations
    def _collect(self, tree: Tree[Any], source: str, base: Path | None, *, top: bool) -> None:
        for item in tree.children:
            if not isinstance(item, Tree):
                continue
            kind = item.data
            if kind == "spec_decl" and top:
                self.spec_name = _name(item.children[0])
            elif kind == "import_decl":
                self._import(item, source, base)
            elif kind == "def_decl":
                name = str(item.children[0])
                params_node = item.children[1]
                params = (
                    tuple(str(p) for p in params_node.children if p is not None)
                    if params_node
                    else ()
                )
                if name in self.macros:
                    self._problem(f"macro {name!r} is defined twice", item, source)
                    continue
                if name in A.TRACE_PREDICATES:
                    self._problem(
                        f"macro {name!r} shadows a built-in trace predicate", item, source
                    )
                    continue
                if len(set(params)) != len(params):
                    self._problem(f"macro {name!r} repeats a parameter name", item, source)
                self.macros[name] = _Macro(
                    name, params, item.children[2], source, self._span(item, source)
                )
            elif kind == "predicate_decl":
                name = _name(item.children[0])
                self.declared_predicates[name] = len(
                    [p for p in item.children[1:] if p is not None]
                )
            elif kind == "extractor_decl":
                self.declared_extractors.add(_name(item.children[0]))
            elif kind == "tool_decl":
                name = _name(item.children[0])
                if name in DIALOGUE_NAMES:
                    self._problem(
                        f"{name!r} is a dialogue event, not a tool: it cannot be declared",
                        item,
                        source,
                    )
                elif name in self.tools:
                    self._problem(f"tool {name!r} is declared twice", item, source)
                else:
                    # placeholder until pass 2 resolves parameter sources and `requires`
                    self.tools[name] = A.ToolDecl(name, span=self._span(item, source))

    def _import(self, item: Tree[Any], source: str, base: Path | None) -> None:
        rel = _string_value(item.children[0])
        where = (base or Path.cwd()) / rel
        try:
            path = where.resolve()
        except OSError:
            path = where
        if path in self._loading:
            chain = " -> ".join(p.name for p in [*self._loading, path])
            self._problem(f"cyclic import: {chain}", item, source)
            return
        if path in self._loaded:
            return
        roots = (self._root, *(r.resolve() for r in self.import_roots))
        if not inside(path, roots):
            self._problem(
                f"cannot import {rel!r}: outside the spec's folder {self._root} (imports stay "
                "in its tree, symlinks resolved; allow more with allow_imports_from)",
                item,
                source,
            )
            return
        try:
            text = read_spec_file(path)
        except SpecError as exc:  # never the file's content: only why it cannot be read
            self._problem(
                f"cannot import {rel!r}: {str(exc).removeprefix(f'{path}: ')}", item, source
            )
            return
        try:
            tree = parse_tree(text, str(path))
        except SpecSyntaxError as exc:
            # a file that is not a spec would have its first token echoed: name the place only
            detail = exc.message if path.suffix == ".ltl" else "not AgentLTL (syntax error)"
            self.problems.append(Problem(f"in imported file: {detail}", exc.location))
            return
        self._loading.append(path)
        self._loaded.add(path)
        self._collect(tree, str(path), path.parent, top=False)
        self._resolve_items(tree, str(path))
        self._loading.pop()

    # ------------------------------------------------------------- pass 2: bodies
    def _resolve_items(self, tree: Tree[Any], source: str) -> None:
        for item in tree.children:
            if not isinstance(item, Tree):
                continue
            if item.data == "tool_decl":
                self._tool(item, source)
            elif item.data == "constraint_decl":
                self._constraint(item, source)

    def _tool(self, item: Tree[Any], source: str) -> None:
        name = _name(item.children[0])
        params: list[A.Param] = []
        requires: A.Formula | None = None
        seen: set[str] = set()
        for child in item.children[1:]:
            if not isinstance(child, Tree):
                continue
            if child.data == "param":
                p = self._param(child, source)
                if p is None:
                    continue
                if p.name in seen:
                    self._problem(f"tool {name!r} repeats parameter {p.name!r}", child, source)
                seen.add(p.name)
                params.append(p)
            elif child.data == "requires":
                requires = self._try_formula(child.children[0], _Env(source=source))
        existing = self.tools.get(name)
        if existing is not None and existing.params == () and existing.requires is None:
            self.tools[name] = A.ToolDecl(name, tuple(params), requires, self._span(item, source))

    def _param(self, node: Tree[Any], source: str) -> A.Param | None:
        kids = node.children
        pname = _name(kids[0])
        optional = kids[1] is not None
        type_tok = kids[2]
        ptype = _PARAM_TYPES.get(str(type_tok))
        if ptype is None:
            self._problem(
                f"unknown parameter type {str(type_tok)!r} (use one of: {', '.join(sorted(set(_PARAM_TYPES)))})",
                type_tok,
                source,
            )
            return None
        src: A.Domain | None = None
        bound: tuple[str, Any] | None = None
        for extra in kids[3:]:
            if not isinstance(extra, Tree):
                continue
            try:
                if extra.data == "param_from":
                    dom = self._domain(extra.children[0], _Env(source=source))
                    if not isinstance(dom, A.Domain):
                        raise self._problem(
                            "`from` needs a domain such as results(tool)", extra, source
                        )
                    src = dom
                elif extra.data == "param_bound":
                    op = _cmp(extra.children[0])
                    value = self._term(extra.children[1], _Env(source=source), in_event=False)
                    if not isinstance(value, A.Literal):
                        raise self._problem("a parameter bound must be a constant", extra, source)
                    bound = (op, value.value)
            except _Skip:
                continue
        return A.Param(pname, ptype, optional, src, bound, self._span(node, source))

    def _constraint(self, item: Tree[Any], source: str) -> None:
        name = _name(item.children[0])
        layer: str | None = None
        weight = 1.0
        severity = DEFAULT_SEVERITY
        message = ""
        given: set[str] = set()
        for clause in item.children[1:-1]:
            if not isinstance(clause, Tree):
                continue
            if clause.data in given:
                word = clause.data.removesuffix("_clause")
                self._problem(f"constraint {name!r}: `{word}` is given twice", clause, source)
            given.add(clause.data)
            if clause.data == "layer_clause":
                layer = str(clause.children[0])
            elif clause.data == "weight_clause":
                weight = float(str(clause.children[0]))
                if not 0 < weight < float("inf"):
                    self._problem(
                        f"constraint {name!r}: weight must be a finite number > 0, "
                        f"got {clause.children[0]}",
                        clause,
                        source,
                    )
            elif clause.data == "severity_clause":
                sev = self._severity(clause, source, name)
                if sev is not None:
                    severity = sev
            elif clause.data == "message_clause":
                message = _string_value(clause.children[0])
        if name in self._constraint_names:
            self._problem(f"constraint {name!r} is defined twice", item, source)
            return
        self._constraint_names.add(name)
        formula = self._try_formula(item.children[-1], _Env(source=source))
        if formula is None:
            return
        self.constraints.append(
            A.Constraint(name, formula, layer, weight, severity, message, self._span(item, source))
        )

    def _severity(self, clause: Tree[Any], source: str, cname: str) -> Severity | None:
        word = str(clause.children[0])
        arg = clause.children[1]
        try:
            kind = SeverityKind(word)
        except ValueError:
            self._problem(
                f"constraint {cname!r}: unknown severity {word!r} "
                "(HARD_STOP, SOFT_BLOCK(n), BLOCK_AND_WARN, TOLERATE, ASK)",
                clause,
                source,
            )
            return None
        if arg is None:
            return Severity(kind)
        if kind is not SeverityKind.SOFT_BLOCK:
            self._problem(f"constraint {cname!r}: only SOFT_BLOCK takes a count", clause, source)
            return None
        text = str(arg)
        if not text.isdigit() or int(text) < 1:
            self._problem(
                f"constraint {cname!r}: SOFT_BLOCK count must be a positive integer", clause, source
            )
            return None
        return Severity(kind, int(text))

    # ------------------------------------------------------------- formulas
    def _try_formula(self, node: Tree[Any] | Token, env: _Env) -> A.Formula | None:
        try:
            return self._formula(node, env)
        except _Skip:
            return None
        except RecursionError:
            self._problem(
                "formula nested too deeply to process; split it into several constraints or macros",
                node,
                env.source,
            )
            return None

    def _formula(self, node: Tree[Any] | Token, env: _Env) -> A.Formula:
        src = env.source
        if isinstance(node, Token):  # pragma: no cover - the grammar wraps every formula
            raise self._problem(f"unexpected {node!s}", node, src)
        kind = node.data
        span = self._span(node, src)
        if kind == "binary":
            left, op, right = node.children
            op_text = str(op.children[0]) if isinstance(op, Tree) else str(op)
            lf = self._try_formula(left, env)
            rf = self._formula(right, env)
            if lf is None:
                raise _Skip()
            return _with_span(_BINOPS[op_text](lf, rf), span)
        if kind == "not_":
            return A.Not(self._formula(node.children[1], env), span)
        if kind == "unary_op":
            op_text = str(node.children[0].children[0])
            return _with_span(_UNOPS[op_text](self._formula(node.children[1], env)), span)
        if kind == "bounded_op":
            op_text = str(node.children[0].children[0])
            bound = int(str(node.children[1]))
            if op_text not in _BOUNDED:
                raise self._problem(
                    f"{op_text}[<=k] is not defined; bounds apply to F, G, O, H", node, src
                )
            return _with_span(_BOUNDED[op_text](self._formula(node.children[2], env), bound), span)
        if kind == "true":
            return A.Const(True, span)
        if kind == "false":
            return A.Const(False, span)
        if kind == "quantified":
            return self._quantified(node, env)
        if kind == "ref":
            return self._ref_formula(node, env)
        if kind == "call":
            return self._call_formula(node, env)
        if kind == "call_outcome":
            inner = self._call_formula(node.children[0], env)
            return self._outcome(inner, str(node.children[1]), node, src)
        if kind == "comparison":
            left = self._term(node.children[0], env, in_event=False)
            op = _cmp(node.children[1])
            right = self._term(node.children[2], env, in_event=False)
            return A.Compare(left, op, right, span)
        raise self._problem(f"{_describe_node(node)} is not a formula", node, src)

    def _quantified(self, node: Tree[Any], env: _Env) -> A.Formula:
        quant, var_tok, dom_node, body = node.children
        kind = str(quant.children[0])
        var = str(var_tok)
        domain: A.Domain | A.ListLiteral | None = None
        if dom_node is not None:
            domain = self._domain(dom_node, env)
        inner = env.bind(var)
        return A.Quantified(
            kind, var, domain, self._formula(body, inner), self._span(node, env.source)
        )

    def _domain(self, node: Tree[Any] | Token, env: _Env) -> A.Domain | A.ListLiteral:
        src = env.source
        if isinstance(node, Tree) and node.data == "list":
            items = tuple(
                self._term(c, env, in_event=False) for c in node.children if c is not None
            )
            return A.ListLiteral(items, self._span(node, src))
        if isinstance(node, Tree) and node.data == "ref":
            name, path = _ref_parts(node)
            if not path and self._is_extractor(name):
                return A.Domain(name, span=self._span(node, src))
            raise self._problem(
                f"{name!r} is not a domain (expected e.g. args(tool.key) or results(tool))",
                node,
                src,
            )
        if isinstance(node, Tree) and node.data == "call":
            name = _name(node.children[0])
            if not self._is_extractor(name):
                raise self._problem(
                    f"unknown domain extractor {name!r} (built in: {', '.join(BUILTIN_EXTRACTORS)}; "
                    "declare others with `extractor NAME` and register them)",
                    node,
                    src,
                )
            args = [a for a in node.children[1:] if a is not None]
            tool: str | None = None
            path = ()
            extra: list[Any] = []
            for i, arg in enumerate(args):
                if i == 0 and isinstance(arg, Tree) and arg.data == "ref":
                    head, rest = _ref_parts(arg)
                    tool = None if head == "any" else head
                    path = rest
                    if tool is not None:
                        self._check_tool(tool, arg, src)
                else:
                    term = self._term(arg, env, in_event=False)
                    if not isinstance(term, A.Literal):
                        raise self._problem(
                            "extractor arguments after the first must be constants", arg, src
                        )
                    extra.append(term.value)
            return A.Domain(name, tool, path, tuple(extra), self._span(node, src))
        raise self._problem(f"{_describe_node(node)} is not a domain", node, src)

    def _is_extractor(self, name: str) -> bool:
        return (
            name in BUILTIN_EXTRACTORS
            or name in self.declared_extractors
            or name in self.registry.extractors
        )

    def _is_predicate(self, name: str) -> bool:
        return name in self.declared_predicates or name in self.registry.predicates

    def _check_tool(self, tool: str, node: Tree[Any] | Token, src: str) -> None:
        if (
            self.check_tools
            and self.tools
            and tool not in self.tools
            and tool not in IMPLICIT_TOOLS
        ):
            raise self._problem(
                f"unknown tool {tool!r} (this spec declares: {', '.join(sorted(self.tools))})",
                node,
                src,
            )

    def _ref_formula(self, node: Tree[Any], env: _Env) -> A.Formula:
        name, path = _ref_parts(node)
        src = env.source
        span = self._span(node, src)
        if len(path) == 1 and path[0] in A.OUTCOMES and name not in env.bound:
            bare = Tree("ref", node.children[:1], node.meta)
            return self._outcome(self._ref_formula(bare, env), str(path[0]), node, src)
        if path:
            outcome = " or test how the call ended: `.ok`, `.error`" if len(path) == 1 else ""
            raise self._problem(
                f"{_ref_text(name, path)} is a value, not a formula (compare it: `... = v`"
                f"{outcome})",
                node,
                src,
            )
        if name in env.macro_args:
            arg, arg_env = env.macro_args[name]
            return self._macro_arg_formula(arg, arg_env)
        if name in env.bound:
            raise self._problem(f"variable {name!r} is used as a formula", node, src)
        if name == "any":
            return A.Event(None, span=span)
        if name in self.macros:
            return self._expand(name, [], node, env)
        if name in A.TRACE_PREDICATES or self._is_predicate(name):
            raise self._problem(f"{name!r} needs arguments: {name}(...)", node, src)
        self._check_tool(name, node, src)
        return A.Event(name, span=span)

    def _outcome(self, inner: A.Formula, word: str, node: Tree[Any], src: str) -> A.Formula:
        """``atom.ok`` / ``atom.error``: the atom, also testing how its call ended."""
        if word not in A.OUTCOMES:
            raise self._problem(
                f"unknown call outcome `.{word}` (an atom ends in `.ok` or `.error`)", node, src
            )
        if not isinstance(inner, A.Event):
            raise self._problem(
                f"`.{word}` applies to a tool atom such as `lookup.{word}`", node, src
            )
        if inner.outcome not in (None, word):
            raise self._problem(
                f"an atom cannot test both `.{inner.outcome}` and `.{word}`", node, src
            )
        return A.Event(inner.tool, inner.tests, word, self._span(node, src))

    def _macro_arg_formula(self, arg: Tree[Any] | Token, arg_env: _Env) -> A.Formula:
        if isinstance(arg, Tree) and arg.data in (
            "op_arg",
            "string",
            "number",
            "list",
            "map",
            "regex",
            "null",
        ):
            raise self._problem("macro argument is not a formula here", arg, arg_env.source)
        return self._formula(arg, arg_env)

    def _expand(
        self, name: str, args: list[Tree[Any] | Token], node: Tree[Any], env: _Env
    ) -> A.Formula:
        macro = self.macros[name]
        src = env.source
        if len(args) != len(macro.params):
            raise self._problem(
                f"macro {name!r} takes {len(macro.params)} argument(s), got {len(args)}", node, src
            )
        if env.depth >= _MAX_MACRO_DEPTH:
            raise self._problem(f"macro {name!r} expands recursively", node, src)
        bindings = {p: (a, env) for p, a in zip(macro.params, args, strict=True)}
        inner = _Env((), bindings, env.depth + 1, macro.source)
        return self._formula(macro.body, inner)

    def _call_formula(self, node: Tree[Any], env: _Env) -> A.Formula:
        name = _name(node.children[0])
        args = [a for a in node.children[1:] if a is not None]
        src = env.source
        span = self._span(node, src)
        if name in env.macro_args and not args:  # pragma: no cover - grammar forbids name()
            return self._macro_arg_formula(*env.macro_args[name])
        if name in A.TRACE_PREDICATES:
            return A.TracePredicate(name, self._trace_predicate_args(name, args, node, env), span)
        if name in self.macros:
            return self._expand(name, args, node, env)
        if self._is_predicate(name):
            arity = self.declared_predicates.get(name)
            if arity is None and name in self.registry.predicates:
                arity = self.registry.predicates[name][1]
            if arity is not None and arity != len(args):
                raise self._problem(
                    f"predicate {name!r} takes {arity} argument(s), got {len(args)}", node, src
                )
            return A.UserPredicate(
                name, tuple(self._term(a, env, in_event=False) for a in args), span
            )
        if self._is_extractor(name):
            raise self._problem(
                f"{name!r} is a domain extractor, not a formula (use `x in {name}(...)`)", node, src
            )
        # an event atom: tool(tests...)
        tool = None if name == "any" else name
        tests: list[A.Test] = []
        for arg in args:
            if not (isinstance(arg, Tree) and arg.data == "comparison"):
                if name in self.tools or name == "any":
                    message = f"arguments of tool atom {name!r} must be tests such as `key = value`"
                else:
                    message = (
                        f"unknown macro or predicate {name!r}: define it (`def {name}(...) := ...`), "
                        f"declare a registered predicate (`predicate {name}(...)`), or, for a tool, "
                        "write tests such as `key = value`"
                    )
                raise self._problem(message, arg, src)
            left = arg.children[0]
            if not (isinstance(left, Tree) and left.data == "ref"):
                raise self._problem("a test must start with an argument name or `result`", arg, src)
            head, rest = _ref_parts(left)
            path: tuple[str | int, ...] = (head, *rest)
            field_ref = A.FieldRef(path, self._span(left, src))
            op = _cmp(arg.children[1])
            value = self._term(arg.children[2], env, in_event=True)
            tests.append(A.Test(field_ref, op, value, self._span(arg, src)))
        if tool is not None:
            self._check_tool(tool, node, src)
        return A.Event(tool, tuple(tests), span=span)

    def _trace_predicate_args(
        self, name: str, args: list[Tree[Any] | Token], node: Tree[Any], env: _Env
    ) -> tuple[Any, ...]:
        kinds = A.TRACE_PREDICATES[name].split()
        src = env.source
        optional_last = name == "CalledWithResult"
        if len(args) != len(kinds) and not (optional_last and len(args) == len(kinds) - 1):
            raise self._problem(
                f"{name} takes {len(kinds)} argument(s), got {len(args)}", node, src
            )
        out: list[Any] = []
        for kind, arg in zip(kinds, args, strict=False):  # CalledWithResult may omit its map
            if kind == "t":
                out.append(self._tool_name_arg(arg, env, name))
            elif kind == "[t]":
                if not (isinstance(arg, Tree) and arg.data == "list"):
                    raise self._problem(f"{name} expects a list of tools like [a, b]", arg, src)
                out.append(
                    tuple(self._tool_name_arg(c, env, name) for c in arg.children if c is not None)
                )
            elif kind == "n":
                value = self._term(arg, env, in_event=False)
                if (
                    not isinstance(value, A.Literal)
                    or not isinstance(value.value, int)
                    or isinstance(value.value, bool)
                ):
                    raise self._problem(f"{name} expects an integer here", arg, src)
                if value.value < 0:
                    raise self._problem(f"{name} expects a non-negative integer here", arg, src)
                out.append(value.value)
            elif kind == "op":
                if isinstance(arg, Tree) and arg.data == "op_arg":
                    op = _cmp(arg.children[0])
                else:
                    value = self._term(arg, env, in_event=False)
                    op = value.value if isinstance(value, A.Literal) else ""
                op = _CMP_CANON.get(op, op)
                if op not in ("=", ">=", "<=", ">", "<"):
                    raise self._problem(f"{name} expects one of = >= <= > < here", arg, src)
                out.append(op)
            elif kind == "{}":
                term = self._term(arg, env, in_event=False)
                if not isinstance(term, A.MapLiteral):
                    raise self._problem(
                        f"{name} expects an argument map like {{key: value}}", arg, src
                    )
                out.append(term)
            elif kind == "v":
                out.append(self._term(arg, env, in_event=False))
            elif kind == "f":
                fname = str(self._tool_name_arg(arg, env, name, check=False))
                if (
                    fname not in self.registry.context_predicates
                    and fname not in self.declared_predicates
                ):
                    raise self._problem(
                        f"Predicate({fname}): no such registered predicate "
                        "(register it with agentguard.register_context_predicate or declare it)",
                        arg,
                        src,
                    )
                out.append(fname)
        return tuple(out)

    def _tool_name_arg(
        self, arg: Tree[Any] | Token, env: _Env, pred: str, *, check: bool = True
    ) -> str | A.Var:
        """A tool name (bare or quoted, checked against the declared tools), or a bound
        variable: ``forall x in [a, b]: Called(x)`` substitutes ``x`` (Appendix A.2.4)."""
        src = env.source
        if isinstance(arg, Tree) and arg.data == "ref":
            name, path = _ref_parts(arg)
            if not path:
                if name in env.macro_args:
                    inner, inner_env = env.macro_args[name]
                    return self._tool_name_arg(inner, inner_env, pred, check=check)
                if name in env.bound and check:
                    return A.Var(name, (), self._span(arg, src))
                if check:
                    self._check_tool(name, arg, src)
                return name
        if isinstance(arg, Tree) and arg.data == "string":
            text = _string_value(arg.children[0])
            if check:
                self._check_tool(text, arg, src)
            return text
        raise self._problem(f"{pred} expects a tool name here", arg, src)

    # ------------------------------------------------------------- terms
    def _term(self, node: Tree[Any] | Token, env: _Env, *, in_event: bool) -> A.Term:
        src = env.source
        span = self._span(node, src)
        if isinstance(node, Token):  # pragma: no cover - literals are wrapped by the grammar
            raise self._problem(f"unexpected {node!s}", node, src)
        kind = node.data
        if kind == "string":
            return A.Literal(_string_value(node.children[0]), span)
        if kind == "number":
            return A.Literal(_number(str(node.children[0])), span)
        if kind == "true":
            return A.Literal(True, span)
        if kind == "false":
            return A.Literal(False, span)
        if kind == "null":
            return A.Literal(None, span)
        if kind == "regex":
            text = str(node.children[0])
            end = text.rfind("/")
            regex = A.Regex(text[1:end].replace("\\/", "/"), text[end + 1 :], span)
            try:
                compile_regex(regex.pattern, regex.flags)
            except re.error as exc:
                raise self._problem(
                    f"invalid regular expression /{regex.pattern}/: {exc}", node, src
                ) from None
            return regex
        if kind == "list":
            return A.ListLiteral(
                tuple(
                    self._term(c, env, in_event=in_event) for c in node.children if c is not None
                ),
                span,
            )
        if kind == "map":
            items: list[tuple[str, A.Term]] = []
            for pair in node.children:
                if pair is None:
                    continue
                key_tok = pair.children[0]
                is_string = isinstance(key_tok, Token) and key_tok.type == "STRING"
                key = _string_value(key_tok) if is_string else str(key_tok)
                items.append((key, self._term(pair.children[1], env, in_event=in_event)))
            return A.MapLiteral(tuple(items), span)
        if kind == "ref":
            name, path = _ref_parts(node)
            if name in env.macro_args and not path:
                inner, inner_env = env.macro_args[name]
                return self._term(inner, inner_env, in_event=in_event)
            if name in env.bound:
                return A.Var(name, path, span)
            if name == "metrics" and path:
                return A.MetricRef(path, span)
            if not path and self._is_extractor(name):
                return A.Domain(name, span=span)
            hint = f' (quote it for a string: "{name}")' if not path else ""
            raise self._problem(f"unbound variable {_ref_text(name, path)!r}{hint}", node, src)
        if kind == "call":
            return self._domain(node, env)
        if kind == "op_arg":
            return A.Literal(_cmp(node.children[0]), span)
        raise self._problem(f"{_describe_node(node)} is not a value", node, src)


# --------------------------------------------------------------------------- utils
def _with_span(node: A.Formula, span: A.Span | None) -> A.Formula:
    return dataclasses.replace(node, span=span)


def _name(node: Tree[Any] | Token) -> str:
    tok = node.children[0] if isinstance(node, Tree) else node
    text = str(tok)
    return text[1:-1] if text.startswith("`") else text


def _ref_parts(node: Tree[Any]) -> tuple[str, tuple[str | int, ...]]:
    head = _name(node.children[0])
    path: list[str | int] = []
    for seg in node.children[1:]:
        if isinstance(seg, Token) and seg.type == "INT":
            path.append(int(str(seg)))
        else:
            path.append(_name(seg))
    return head, tuple(path)


def _ref_text(name: str, path: tuple[str | int, ...]) -> str:
    out = name
    for seg in path:
        out += f"[{seg}]" if isinstance(seg, int) else f".{seg}"
    return out


def _cmp(node: Tree[Any] | Token) -> str:
    text = str(node.children[0]) if isinstance(node, Tree) else str(node)
    return _CMP_CANON.get(text, text)


def _string_value(tok: Token | Tree[Any]) -> str:
    text = str(tok.children[0]) if isinstance(tok, Tree) else str(tok)
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            value = pyast.literal_eval(text)
        return str(value)
    return str(pyast.literal_eval(text))


def _number(text: str) -> int | float:
    if any(ch in text for ch in ".eE"):
        return float(text)
    return int(text)


def _describe_node(node: Tree[Any] | Token) -> str:
    if isinstance(node, Token):
        return repr(str(node))
    return {
        "string": "a string",
        "number": "a number",
        "list": "a list",
        "map": "a map",
        "regex": "a regex",
        "null": "null",
        "op_arg": "an operator",
        "ref": "a name",
    }.get(str(node.data), str(node.data))
