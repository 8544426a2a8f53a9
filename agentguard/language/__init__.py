"""The AgentLTL language: grammar, syntax tree, resolution and printing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from agentguard._recursion import allow_deep
from agentguard.language import ast
from agentguard.language.files import check_size, read_spec_file
from agentguard.language.resolver import Resolver
from agentguard.language.vocabulary import Vocabulary


@allow_deep
def parse_spec(
    text: str,
    source: str = "<string>",
    *,
    registry: Vocabulary | None = None,
    base_dir: str | Path | None = None,
    allow_imports_from: Iterable[str | Path] = (),
) -> ast.Spec:
    """Parse and resolve a spec; imports are read relative to ``base_dir`` (or the source's folder).

    Imports must stay inside that folder's tree (or the current directory for text with
    no folder), or inside one of ``allow_imports_from``.
    """
    check_size(len(text), source)
    base = (
        Path(base_dir)
        if base_dir is not None
        else (Path(source).parent if source != "<string>" else None)
    )
    resolver = Resolver(registry)
    resolver.import_roots = tuple(Path(p) for p in allow_imports_from)
    return resolver.resolve_spec(text.removeprefix("\ufeff"), source, base)


@allow_deep
def load_spec(
    path: str | Path,
    *,
    registry: Vocabulary | None = None,
    allow_imports_from: Iterable[str | Path] = (),
) -> ast.Spec:
    """Read and parse a ``.ltl`` file (a regular file of at most ``MAX_SPEC_BYTES``)."""
    p = Path(path)
    text = read_spec_file(p)
    resolver = Resolver(registry)
    resolver.import_roots = tuple(Path(r) for r in allow_imports_from)
    return resolver.resolve_spec(text, str(p), p.parent)


@allow_deep
def parse_formula(
    text: str,
    *,
    registry: Vocabulary | None = None,
    tools: Mapping[str, ast.ToolDecl] | None = None,
    source: str = "<formula>",
) -> ast.Formula:
    """Parse one formula (no declarations)."""
    return Resolver(registry).resolve_formula(text, source, tools)


__all__ = ["ast", "load_spec", "parse_formula", "parse_spec"]
