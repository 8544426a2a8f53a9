"""The AgentLTL language: grammar, syntax tree, resolution and printing."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentguard._recursion import allow_deep
from agentguard.errors import SpecImportError
from agentguard.language import ast
from agentguard.language.resolver import Resolver
from agentguard.semantics.registry import Registry


@allow_deep
def parse_spec(
    text: str,
    source: str = "<string>",
    *,
    registry: Registry | None = None,
    base_dir: str | Path | None = None,
) -> ast.Spec:
    """Parse and resolve a spec; imports are read relative to ``base_dir`` (or the source's folder)."""
    base = (
        Path(base_dir)
        if base_dir is not None
        else (Path(source).parent if source != "<string>" else None)
    )
    return Resolver(registry).resolve_spec(text.removeprefix("\ufeff"), source, base)


@allow_deep
def load_spec(path: str | Path, *, registry: Registry | None = None) -> ast.Spec:
    """Read and parse a ``.ltl`` file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")  # a leading byte-order mark is tolerated
    except OSError as exc:
        raise SpecImportError(f"{p}: cannot read spec ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise SpecImportError(
            f"{p}: cannot decode spec as UTF-8 (byte {exc.start}: {exc.reason})"
        ) from None
    return Resolver(registry).resolve_spec(text, str(p), p.parent)


@allow_deep
def parse_formula(
    text: str,
    *,
    registry: Registry | None = None,
    tools: Mapping[str, ast.ToolDecl] | None = None,
    source: str = "<formula>",
) -> ast.Formula:
    """Parse one formula (no declarations)."""
    return Resolver(registry).resolve_formula(text, source, tools)


__all__ = ["ast", "load_spec", "parse_formula", "parse_spec"]
