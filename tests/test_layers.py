"""The package's imports follow the layer order of the data's path, with no cycles.

errors/trace → language → semantics → scoring/monitor/tools → enforcement →
pec/bench/guard/testing/... → cli/demo. A module may import its own layer or a lower one,
never a higher one; no import cycle exists between modules, and the core never imports
``agentguard.integrations`` (adapters are reached by name, through importlib, at the edge).
Every ``import`` statement counts, also those inside functions and ``TYPE_CHECKING`` blocks:
a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "agentguard"

LAYERS: dict[str, int] = {
    "_recursion": 0,
    "_identity_cache": 0,
    "_checkout_finder": 0,
    "_version": 0,
    "errors": 0,
    "severity": 0,
    "regex": 0,
    "terminal": 0,
    "trace": 0,
    "language": 1,
    "semantics": 2,
    "scoring": 3,
    "tools": 3,
    "monitor": 3,
    "enforcement": 4,
    "analysis": 5,
    "mining": 5,
    "pec": 5,
    "bench": 5,
    "guard": 5,
    "guard_shared": 5,
    "guard_batch": 5,
    "session": 5,
    "testing": 5,
    "report": 5,
    "scale": 5,
    "cli": 6,
    "demo": 6,
    "__main__": 6,
}


# Known violations still being removed (issue 10). The tests fail on any violation not
# listed here AND on any listed one that no longer occurs, so this list only shrinks.
KNOWN_UPWARD: frozenset[str] = frozenset()
KNOWN_CYCLES: frozenset[str] = frozenset()
KNOWN_INIT_CYCLES: frozenset[str] = frozenset()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """Every agentguard module that ``name`` imports (resolved to a known module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" for a in node.names] + [module]
        for target in targets:
            if not target.startswith("agentguard"):
                continue
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: set(_imports(name, path, known)) for name, path in modules.items()}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) == 1:  # agentguard/__init__.py: the public face, above everything
        return 7
    top = parts[1]
    if top == "integrations":
        return None
    if top not in LAYERS:
        raise AssertionError(f"{module}: its top-level name {top!r} has no layer in LAYERS")
    return LAYERS[top]


def test_every_import_points_down_or_across() -> None:
    """No module imports a higher layer than its own."""
    upward = []
    for module, targets in _graph().items():
        mine = _layer(module)
        for target in sorted(targets):
            theirs = _layer(target)
            if mine is not None and theirs is not None and theirs > mine:
                upward.append(f"{module} -> {target}")
    new = sorted(set(upward) - KNOWN_UPWARD)
    gone = sorted(KNOWN_UPWARD - set(upward))
    assert not new, "imports pointing up the layer order:\n" + "\n".join(new)
    assert not gone, "fixed; remove from KNOWN_UPWARD:\n" + "\n".join(gone)


def test_the_core_never_imports_integrations() -> None:
    """No agentguard module imports agentguard.integrations with an import statement."""
    offenders = [
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if target.startswith("agentguard.integrations")
    ]
    assert not offenders, "\n".join(offenders)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """A package's ``__init__`` re-exporting its own submodules is not a cycle of meaning."""
    inits = {m for m, p in _modules().items() if p.name == "__init__.py"}
    return {
        m: {t for t in ts if not (t in inits and m.startswith(t + "."))} for m, ts in graph.items()
    }


def test_no_import_cycles() -> None:
    """The module import graph is acyclic (package __init__ re-exports aside)."""
    cycles = {" <-> ".join(c) for c in _cycles(_without_package_inits(_graph()))}
    new = sorted(cycles - KNOWN_CYCLES)
    gone = sorted(KNOWN_CYCLES - cycles)
    assert not new, "import cycles:\n" + "\n".join(new)
    assert not gone, "fixed; remove from KNOWN_CYCLES:\n" + "\n".join(gone)


def _with_parent_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Importing ``agentguard.a.b.c`` runs ``agentguard.a``'s and ``agentguard.a.b``'s
    ``__init__`` first: an edge to each (but the root, the lazy public face, and the
    importer's own packages, which are already being imported)."""
    inits = {m for m, p in _modules().items() if p.name == "__init__.py"}
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges = set(targets)
        for target in targets:
            parts = target.split(".")
            for end in range(2, len(parts)):
                parent = ".".join(parts[:end])
                if parent in inits and not (module + ".").startswith(parent + "."):
                    edges.add(parent)
        out[module] = edges
    return out


def test_no_import_cycles_through_package_inits() -> None:
    """Importing any module first, in a fresh interpreter, cannot hit a partly initialised
    module: the cycles a package ``__init__`` closes count too (``pec.report`` importing
    ``report.terminal`` ran ``report/__init__``, which imports ``pec.report``)."""
    graph = _without_package_inits(_with_parent_packages(_graph()))
    cycles = {" <-> ".join(c) for c in _cycles(graph)}
    new = sorted(cycles - KNOWN_INIT_CYCLES)
    gone = sorted(KNOWN_INIT_CYCLES - cycles)
    assert not new, "import cycles through package __init__:\n" + "\n".join(new)
    assert not gone, "fixed; remove from KNOWN_INIT_CYCLES:\n" + "\n".join(gone)


@pytest.mark.parametrize("module", sorted(_modules()))
def test_every_module_has_a_layer(module: str) -> None:
    """A new top-level module or package is given a place in the layer order."""
    _layer(module)
