"""Turn a spec's text into the resolved AST, collecting every semantic problem.

The pipeline: :mod:`.grammar` parses, :mod:`.transformer` turns lark's tree into
:mod:`.syntax` nodes, and the passes resolve them — :mod:`.declarations` (names, imports,
tools, constraints), :mod:`.macros` (``def`` expansion), :mod:`.formulas` and
:mod:`.terms` — all sharing one :class:`~.scope.Scope`. Resolution classifies names
(tool atom, trace predicate, macro, user predicate, extractor, variable) and checks
arities, bound variables, declared tools, weights and severities. Problems are collected
and raised together as one :class:`SpecSemanticError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentguard.errors import SpecSemanticError
from agentguard.language import ast as A
from agentguard.language.declarations import DeclarationPass
from agentguard.language.scope import IMPLICIT_TOOLS, Env, Scope
from agentguard.language.transformer import parse_file, parse_node
from agentguard.language.vocabulary import Vocabulary, default_vocabulary

__all__ = ["IMPLICIT_TOOLS", "Resolver"]


class Resolver:
    """Resolves one spec (and its imports) against a vocabulary of registered names."""

    def __init__(self, registry: Vocabulary | None = None, *, check_tools: bool = True) -> None:
        vocabulary = registry if registry is not None else default_vocabulary()
        self.scope = Scope(vocabulary, check_tools)
        self.declarations = DeclarationPass(self.scope)

    @property
    def import_roots(self) -> tuple[Path, ...]:
        """Folders imports may reach besides the top spec's own tree."""
        return self.declarations.import_roots

    @import_roots.setter
    def import_roots(self, roots: tuple[Path, ...]) -> None:
        self.declarations.import_roots = roots

    def resolve_spec(self, text: str, source: str, base: Path | None) -> A.Spec:
        file = parse_file(text, source)
        decls, scope = self.declarations, self.scope
        decls.root = (base or Path.cwd()).resolve()
        decls.reads.count_text(text)
        path = Path(source).resolve() if base is not None or Path(source).exists() else None
        if path is not None:
            decls.enter(path)
        decls.collect(file, source, base, top=True)
        decls.resolve_items(file, source)
        if scope.problems:
            raise SpecSemanticError(scope.problems)
        name = decls.spec_name or (Path(source).stem if source not in ("<string>", "") else None)
        return A.Spec(
            name=name,
            constraints=tuple(decls.constraints),
            tools=tuple(scope.tools.values()),
            predicates=tuple(sorted(scope.declared_predicates.items())),
            extractors=tuple(sorted(scope.declared_extractors)),
            trust=tuple(decls.trust),
            source=source,
            text=text,
        )

    def resolve_formula(
        self, text: str, source: str, tools: Mapping[str, A.ToolDecl] | None
    ) -> A.Formula:
        node = parse_node(text, source)
        if tools:
            self.scope.tools = dict(tools)
        formula = self.declarations.formulas.try_formula(node, Env(source=source))
        if self.scope.problems or formula is None:
            raise SpecSemanticError(self.scope.problems)
        return formula
