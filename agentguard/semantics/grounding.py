"""Trace grounding (AgentLTL Section 4.4, Appendix H.3): is every entity of the answer seen?

``κ_ground ≡ ∀e ∈ ent(a). e ∈ out(τ)``: the answer's referential entities (file
paths, function signatures, identifiers) must each match something the trace's
``read_file`` results showed. Entities come from the answer by regex only; the seen
set comes from read paths and, for ``.py`` contents, Python's :mod:`ast` (a regex
fallback handles chunks that do not parse and non-Python sources).

Edge cases follow Table 21: no ``read_file`` at all -> False; an empty answer ->
False; an answer with no checkable entity (e.g. a refusal) -> True (vacuous).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentguard.semantics.entities import (
    TOKEN_RE,
    Entity,
    extract_entities,
    normal_path,
)
from agentguard.trace.final_tool import FINAL_TOOLS
from agentguard.trace.model import Call, Trace

_DEF_RE = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.MULTILINE)
_ASSIGN_RE = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)", re.MULTILINE)
_C_DEF_RE = re.compile(
    r"(?:^|\n)\s*(?:struct|class|enum|union|typedef|#define)\s+([A-Za-z_]\w*)"
    r"|([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{"
)


@dataclass(frozen=True, slots=True)
class SeenSet:
    """``out(τ)``: what ``read_file`` results showed, by entity type."""

    paths: frozenset[str] = frozenset()
    signatures: frozenset[str] = frozenset()  # lower-case; bare and Class.method names
    identifiers: frozenset[str] = frozenset()  # lower-case
    read_calls: int = 0

    def grounds(self, entity: Entity) -> bool:
        """Exact match for paths and signatures, case-insensitive prefix for identifiers."""
        if entity.kind == "file_path":
            return entity.text in self.paths
        text = entity.text.lower()
        if entity.kind == "function_signature":
            return text in self.signatures or (
                "." not in text and any(s.rsplit(".", 1)[-1] == text for s in self.signatures)
            )
        return any(seen.startswith(text) for seen in self.identifiers)


def _chunks(call: Call) -> list[tuple[str, str]]:
    """(path, content) pairs from one read_file call, whatever shape its result has."""
    result = call.result
    if isinstance(result, str):
        with contextlib.suppress(ValueError):
            result = json.loads(result)
    arg_path = next(
        (str(call.args[k]) for k in ("path", "file_path", "filename", "file") if k in call.args), ""
    )
    if isinstance(result, Mapping):
        if "content" in result:
            path = str(result.get("path", arg_path))
            return [(path, str(result["content"]))]
        return [(str(k), v if isinstance(v, str) else json.dumps(v)) for k, v in result.items()]
    if isinstance(result, str):
        return [(arg_path, result)]
    return [(arg_path, "")] if arg_path else []


def _python_symbols(source: str) -> tuple[set[str], set[str]] | None:
    """(signatures, identifiers) defined in Python source; None if it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    sigs: set[str] = set()
    idents: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            idents.add(node.name)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    sigs.add(f"{node.name}.{item.name}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            sigs.add(node.name)
            idents.add(node.name)
            idents.update(
                a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
            )
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            idents.add(node.id)
        elif isinstance(node, ast.alias):
            idents.add((node.asname or node.name).split(".")[0])
    idents.update(s.rsplit(".", 1)[-1] for s in sigs)
    return sigs, idents


def _regex_symbols(source: str) -> tuple[set[str], set[str]]:
    names = set(_DEF_RE.findall(source)) | set(_ASSIGN_RE.findall(source))
    for struct_name, func_name in _C_DEF_RE.findall(source):
        names.add(struct_name or func_name)
    names.discard("")
    return set(names), set(names)


def _path_words(path: str) -> set[str]:
    return {w for w in TOKEN_RE.findall(path.rsplit(".", 1)[0]) if w}


def call_outputs(call: Call) -> tuple[set[str], set[str], set[str]]:
    """What one read-file call adds to ``out(τ)``: (paths, signatures, identifiers), as
    written (:func:`seen_entities` lower-cases them). ``out(τ)`` is the union of these over
    the trace's read calls, which is what lets a monitor forget a call that adds nothing."""
    paths: set[str] = set()
    sigs: set[str] = set()
    idents: set[str] = set()
    for path, content in _chunks(call):
        found = (
            _chunk_outputs(path, content)
            if len(content) <= _CACHED_CHUNK
            else _chunk_outputs.__wrapped__(path, content)
        )
        paths |= found[0]
        sigs |= found[1]
        idents |= found[2]
    return paths, sigs, idents


_CACHED_CHUNK = 1 << 16
"""Chunks up to this size are remembered: a run that reads the same file again (an agent
in a loop, a monitor asking each call what it adds) parses it once; larger ones are not
kept alive by the cache."""


@functools.lru_cache(maxsize=128)
def _chunk_outputs(
    path: str, content: str
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    paths: set[str] = set()
    idents: set[str] = set()
    if path:
        norm = normal_path(path)
        paths.add(norm)
        idents.update(_path_words(norm))
    found = _python_symbols(content) if not path or path.endswith((".py", ".pyi")) else None
    s, i = found if found is not None else _regex_symbols(content)
    return frozenset(paths), frozenset(s), frozenset(idents | i)


def seen_entities(trace: Iterable[Call], *, read_tools: Sequence[str] = ("read_file",)) -> SeenSet:
    """Build ``out(τ)`` from every read-file call of the trace."""
    paths: set[str] = set()
    sigs: set[str] = set()
    idents: set[str] = set()
    reads = 0
    for call in trace:
        if call.name not in read_tools:
            continue
        reads += 1
        p, s, i = call_outputs(call)
        paths |= p
        sigs |= s
        idents |= i
    return SeenSet(
        frozenset(paths),
        frozenset(s.lower() for s in sigs),
        frozenset(i.lower() for i in idents | sigs),
        reads,
    )


@dataclass(frozen=True, slots=True)
class GroundingVerdict:
    """The predicate's verdict with the evidence behind it."""

    grounded: bool
    reason: str
    entities: tuple[Entity, ...] = ()
    ungrounded: tuple[Entity, ...] = field(default=())

    @property
    def grounded_count(self) -> int:
        return len(self.entities) - len(self.ungrounded)

    def to_dict(self) -> dict[str, Any]:
        return {
            "grounded": self.grounded,
            "reason": self.reason,
            "entities": [[e.kind, e.text] for e in self.entities],
            "ungrounded": [[e.kind, e.text] for e in self.ungrounded],
            "grounded_count": self.grounded_count,
        }


def final_answer(
    trace: Trace | Sequence[Call], *, final_tools: Sequence[str] = FINAL_TOOLS
) -> str | None:
    """The answer text: the last final-answer call's ``answer``, else the metrics' answer."""
    for call in reversed(list(trace)):
        if call.name in final_tools:
            value = call.args.get("answer", next(iter(call.args.values()), None))
            return None if value is None else str(value)
    metrics = getattr(trace, "metrics", {}) or {}
    for key in ("final_answer", "answer", "output"):
        if key in metrics and metrics[key] is not None:
            return str(metrics[key])
    return None


def grounding(
    trace: Trace | Sequence[Call],
    answer: str | None = None,
    *,
    read_tools: Sequence[str] = ("read_file",),
) -> GroundingVerdict:
    """κ_ground with Table 21's edge cases; ``answer`` defaults to the trace's final answer."""
    calls = list(trace)
    if answer is None:
        answer = final_answer(trace)
    seen = seen_entities(calls, read_tools=read_tools)
    if seen.read_calls == 0:
        return GroundingVerdict(False, "no read_file evidence in the trace")
    if answer is None or not answer.strip():
        return GroundingVerdict(False, "empty final answer")
    entities = tuple(extract_entities(answer))
    if not entities:
        return GroundingVerdict(True, "no checkable entities (vacuous)")
    missing = tuple(e for e in entities if not seen.grounds(e))
    if missing:
        return GroundingVerdict(
            False,
            f"{len(entities) - len(missing)}/{len(entities)} answer entities grounded",
            entities,
            missing,
        )
    return GroundingVerdict(
        True, f"{len(entities)}/{len(entities)} answer entities grounded", entities, ()
    )


def is_grounded(trace: Trace | Sequence[Call], answer: str | None = None) -> bool:
    return grounding(trace, answer).grounded


# -- registry hooks ----------------------------------------------------------------------


def grounded_context_predicate(trace: Trace, position: int, metrics: Mapping[str, Any]) -> bool:
    """``Predicate(grounded)``: κ_ground over the whole trace (position is not used)."""
    del position
    answer = final_answer(trace)
    if answer is None:
        for key in ("final_answer", "answer", "output"):
            if metrics.get(key) is not None:
                answer = str(metrics[key])
                break
    return grounding(trace, answer).grounded


def _field(call: Call, path: Sequence[str | int]) -> Any:
    value: Any = call.args
    parts = list(path)
    if parts and parts[0] == "result":
        value, parts = call.result, parts[1:]
    elif parts and parts[0] == "args":
        parts = parts[1:]
    for part in parts:
        indexable = (isinstance(value, Mapping) and part in value) or (
            isinstance(value, list) and isinstance(part, int) and -len(value) <= part < len(value)
        )
        if not indexable:
            return None
        value = value[part]
    return value


def entities_extractor(trace: Trace, tool: str, path: Any = ("answer",), *extra: Any) -> list[str]:
    """Domain extractor ``entities(final_answer.answer)``: answer entities as strings."""
    del extra
    parts = entity_path(path)
    out: dict[str, None] = {}
    for call in trace:
        if call.name == tool:
            out.update(dict.fromkeys(call_entities(call, parts)))
    return list(out)


def entity_path(path: Any) -> tuple[str | int, ...]:
    """An extractor's ``path`` argument as a tuple (a dotted string is split)."""
    return tuple(path.split(".")) if isinstance(path, str) else tuple(path or ())


def call_entities(call: Call, parts: Sequence[str | int]) -> list[str]:
    """The entity texts one call's field at ``parts`` cites (``entities(...)`` is their
    union over the tool's calls, in first-seen order)."""
    value = _field(call, parts)
    return [] if value is None else [e.text for e in extract_entities(str(value))]


def ungrounded_extractor(
    trace: Trace, tool: str, path: Any = ("answer",), *extra: Any
) -> list[str]:
    """Domain extractor ``ungrounded(final_answer.answer)``: entities nothing read grounds."""
    del extra
    seen = seen_entities(trace)
    parts: Sequence[str | int] = path.split(".") if isinstance(path, str) else tuple(path or ())
    out: dict[str, None] = {}
    for call in trace:
        if call.name == tool:
            value = _field(call, parts)
            for e in extract_entities("" if value is None else str(value)):
                if not seen.grounds(e):
                    out[e.text] = None
    return list(out)
