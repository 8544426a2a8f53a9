"""Resolution passes for declarations: collect names and imports, then resolve bodies.

Pass 1 (:meth:`DeclarationPass.collect`) records every declared name (tools, macros,
predicates, extractors) and inlines ``import``-ed files, so a constraint may use a tool
or macro declared below it. Pass 2 (:meth:`DeclarationPass.resolve_items`) resolves tool
parameters, ``requires`` clauses and constraints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentguard.errors import Problem, SpecError, SpecSyntaxError
from agentguard.language import ast as A
from agentguard.language import macros
from agentguard.language import syntax as S
from agentguard.language.files import SpecReads, identity, inside
from agentguard.language.formulas import FormulaPass
from agentguard.language.scope import Env, Scope, Skip, ref_text
from agentguard.language.transformer import parse_file
from agentguard.severity import DEFAULT_SEVERITY, Severity, SeverityKind
from agentguard.trace.model import DIALOGUE_NAMES


class DeclarationPass:
    """Declarations of one spec and the files it imports, into one scope."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.formulas = FormulaPass(scope)
        self.constraints: list[A.Constraint] = []
        self.trust: list[A.TrustDecl] = []
        self.spec_name: str | None = None
        self._constraint_names: set[str] = set()
        self.loading: list[Path] = []
        self.loaded: set[Path] = set()  # read once each, however many files import them
        self.reads = SpecReads()  # bytes and files read, capped for the spec as a whole
        self._names: dict[tuple[int, int], Path] = {}  # a file's first path, by identity
        self.import_roots: tuple[Path, ...] = ()  # folders imports may reach besides root
        self.root = Path.cwd()  # the top spec's folder: imports stay inside its tree

    def canonical(self, path: Path) -> Path:
        """The path a file already loaded was loaded under: a file imported under another
        name (a hard link) is the same import, read once, and a cycle through it is found."""
        ident = identity(path)
        return path if ident is None else self._names.get(ident, path)

    def enter(self, path: Path) -> None:
        """``path`` is being loaded: on the stack of open imports, and loaded for good."""
        ident = identity(path)
        if ident is not None:
            self._names.setdefault(ident, path)
        self.loading.append(path)
        self.loaded.add(path)

    # ------------------------------------------------------------ pass 1: names
    def collect(self, file: S.SpecFile, source: str, base: Path | None, *, top: bool) -> None:
        scope = self.scope
        for item in file.items:
            if isinstance(item, S.SpecDecl):
                if top:
                    self.spec_name = item.name
            elif isinstance(item, S.ImportDecl):
                self._import(item, source, base)
            elif isinstance(item, S.DefDecl):
                macros.define(scope, item, source)
            elif isinstance(item, S.PredicateDecl):
                scope.declared_predicates[item.name] = item.arity
            elif isinstance(item, S.ExtractorDecl):
                scope.declared_extractors.add(item.name)
            elif isinstance(item, S.ToolDecl):
                if item.name in DIALOGUE_NAMES:
                    scope.problem(
                        f"{item.name!r} is a dialogue event, not a tool: it cannot be declared",
                        item.span,
                        source,
                    )
                elif item.name in scope.tools:
                    scope.problem(f"tool {item.name!r} is declared twice", item.span, source)
                else:
                    # placeholder until pass 2 resolves parameter sources and `requires`
                    scope.tools[item.name] = A.ToolDecl(item.name, span=item.span)

    def _import(self, item: S.ImportDecl, source: str, base: Path | None) -> None:
        rel = item.path
        where = (base or Path.cwd()) / rel
        try:
            path = where.resolve()
        except (OSError, ValueError):  # ValueError: a NUL byte in the path
            path = where
        path = self.canonical(path)
        if path in self.loading:
            chain = " -> ".join(p.name for p in [*self.loading, path])
            self.scope.problem(f"cyclic import: {chain}", item.span, source)
            return
        if path in self.loaded:
            return
        roots = (self.root, *(r.resolve() for r in self.import_roots))
        if not inside(path, roots):
            self.scope.problem(
                f"cannot import {rel!r}: outside the spec's folder {self.root} (imports stay "
                "in its tree, symlinks resolved; allow more with allow_imports_from)",
                item.span,
                source,
            )
            return
        try:
            text = self.reads.read(path)
        except SpecError as exc:  # never the file's content: only why it cannot be read
            self.scope.problem(
                f"cannot import {rel!r}: {str(exc).removeprefix(f'{path}: ')}", item.span, source
            )
            return
        except ValueError as exc:  # a NUL byte in the path
            self.scope.problem(f"cannot import {rel!r}: {exc}", item.span, source)
            return
        try:
            file = parse_file(text, str(path))
        except SpecSyntaxError as exc:
            # a file that is not a spec would have its first token echoed: name the place only
            detail = exc.message if path.suffix == ".ltl" else "not AgentLTL (syntax error)"
            self.scope.problems.append(Problem(f"in imported file: {detail}", exc.location))
            return
        self.enter(path)
        self.collect(file, str(path), path.parent, top=False)
        self.resolve_items(file, str(path))
        self.loading.pop()

    # ----------------------------------------------------------- pass 2: bodies
    def resolve_items(self, file: S.SpecFile, source: str) -> None:
        for item in file.items:
            if isinstance(item, S.ToolDecl):
                self._tool(item, source)
            elif isinstance(item, S.ConstraintDecl):
                self._constraint(item, source)
            elif isinstance(item, S.TrustDecl):
                self._trust(item, source)

    def _trust(self, item: S.TrustDecl, source: str) -> None:
        """``trusted`` / ``untrusted`` items: a location declared with both classes is a
        spec error (most-specific-wins could not choose between them)."""
        for ref in item.items:
            self.scope.check_tool(ref.head, ref.span, source)
            decl = A.TrustDecl(item.trusted, ref.head, ref.path, ref.span)
            clash = next(
                (d for d in self.trust if (d.tool, d.path) == (decl.tool, decl.path)), None
            )
            if clash is not None and clash.trusted != decl.trusted:
                self.scope.problem(
                    f"{ref_text(ref.head, ref.path)!r} is declared both trusted and untrusted",
                    ref.span,
                    source,
                )
            elif clash is None:
                self.trust.append(decl)

    def _tool(self, item: S.ToolDecl, source: str) -> None:
        params: list[A.Param] = []
        seen: set[str] = set()
        for decl in item.params:
            p = self._param(decl, source)
            if p is None:
                continue
            if p.name in seen:
                self.scope.problem(
                    f"tool {item.name!r} repeats parameter {p.name!r}", decl.span, source
                )
            seen.add(p.name)
            params.append(p)
        requires = (
            self.formulas.try_formula(item.requires, Env(source=source))
            if item.requires is not None
            else None
        )
        if item.returns is not None and item.returns not in A.RESULT_FORMATS:
            self.scope.problem(
                f"unknown result format {item.returns!r} (use one of: "
                f"{', '.join(A.RESULT_FORMATS)})",
                item.returns_span,
                source,
            )
        existing = self.scope.tools.get(item.name)
        if existing is not None and existing.params == () and existing.requires is None:
            self.scope.tools[item.name] = A.ToolDecl(
                item.name, tuple(params), requires, item.span, returns=item.returns
            )

    def _param(self, decl: S.ParamDecl, source: str) -> A.Param | None:
        ptype = A.PARAM_TYPE_ALIASES.get(decl.type_name)
        if ptype is None:
            self.scope.problem(
                f"unknown parameter type {decl.type_name!r} "
                f"(use one of: {', '.join(sorted(A.PARAM_TYPE_ALIASES))})",
                decl.type_span,
                source,
            )
            return None
        src: A.Domain | None = None
        bound: tuple[str, Any] | None = None
        env = Env(source=source)
        if decl.source is not None:
            try:
                dom = self.formulas.terms.domain(decl.source.operand, env)
                if not isinstance(dom, A.Domain):
                    raise self.scope.problem(
                        "`from` needs a domain such as results(tool)", decl.source.span, source
                    )
                src = dom
            except Skip:
                pass
        if decl.bound is not None:
            try:
                value = self.formulas.terms.term(decl.bound.value, env)
                if not isinstance(value, A.Literal):
                    raise self.scope.problem(
                        "a parameter bound must be a constant", decl.bound.span, source
                    )
                bound = (decl.bound.op, value.value)
            except Skip:
                pass
        return A.Param(decl.name, ptype, decl.optional, src, bound, decl.span)

    def _constraint(self, item: S.ConstraintDecl, source: str) -> None:
        name = item.name
        layer: str | None = None
        weight = 1.0
        severity = DEFAULT_SEVERITY
        message = ""
        given: set[str] = set()
        for clause in item.clauses:
            if clause.kind in given:
                self.scope.problem(
                    f"constraint {name!r}: `{clause.kind}` is given twice", clause.span, source
                )
            given.add(clause.kind)
            if clause.kind == "layer":
                layer = clause.text
            elif clause.kind == "weight":
                weight = float(clause.text)
                if not 0 < weight < float("inf"):
                    self.scope.problem(
                        f"constraint {name!r}: weight must be a finite number > 0, "
                        f"got {clause.text}",
                        clause.span,
                        source,
                    )
            elif clause.kind == "severity":
                sev = self._severity(clause, source, name)
                if sev is not None:
                    severity = sev
            elif clause.kind == "message":
                message = clause.text
        if name in self._constraint_names:
            self.scope.problem(f"constraint {name!r} is defined twice", item.span, source)
            return
        self._constraint_names.add(name)
        formula = self.formulas.try_formula(item.body, Env(source=source))
        if formula is None:
            return
        self.constraints.append(
            A.Constraint(name, formula, layer, weight, severity, message, item.span)
        )

    def _severity(self, clause: S.Clause, source: str, cname: str) -> Severity | None:
        word, arg = clause.text, clause.arg
        try:
            kind = SeverityKind(word)
        except ValueError:
            self.scope.problem(
                f"constraint {cname!r}: unknown severity {word!r} "
                "(HARD_STOP, SOFT_BLOCK(n), BLOCK_AND_WARN, TOLERATE, ASK)",
                clause.span,
                source,
            )
            return None
        if arg is None:
            return Severity(kind)
        if kind is not SeverityKind.SOFT_BLOCK:
            self.scope.problem(
                f"constraint {cname!r}: only SOFT_BLOCK takes a count", clause.span, source
            )
            return None
        if not arg.isdigit() or int(arg) < 1:
            self.scope.problem(
                f"constraint {cname!r}: SOFT_BLOCK count must be a positive integer",
                clause.span,
                source,
            )
            return None
        return Severity(kind, int(arg))
