"""YAML text to values, bounded: the one YAML reader of the trace layer.

AgentDojo renders a tool's structured result as YAML text for the model
(``yaml.safe_dump``), and a reader that knows this decodes it so that a spec tests the
structure (``result[0].recipient``), not a text. YAML is a larger language than JSON, so
the reader is fenced:

* a text longer than :data:`MAX_YAML_TEXT` characters is not decoded;
* anchors and aliases are refused (an alias shares a node: a few lines that name one
  list a billion times are a "billion laughs" for whoever walks the value), and so is a
  value nested deeper than :data:`MAX_YAML_DEPTH` or holding more than
  :data:`MAX_YAML_NODES` nodes;
* only the safe tags are read (``yaml.safe_load``'s), through libyaml when PyYAML has it.

A text that does not decode within those bounds is not an error: :func:`load_yaml`
answers :data:`NOT_YAML` and the caller keeps the text. Dates and times stay the text
they were written as (``2024-05-15 10:00``), not Python ``date`` objects: a trace is JSON
data, and the text is what the model read (``timestamps=True`` reads them as PyYAML does,
for a caller that must dump the value back and compare).
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from agentguard.errors import MissingExtraError

try:
    import yaml  # type: ignore[import-untyped,unused-ignore]
except ImportError as exc:  # pragma: no cover - exercised only without PyYAML
    raise MissingExtraError("agentdojo", "PyYAML") from exc

MAX_YAML_TEXT: Final = 4 * 1024 * 1024
"""The longest text decoded (characters); a longer one stays text."""
MAX_YAML_DEPTH: Final = 100
"""The deepest nesting decoded (as the frozen arguments' ``MAX_ARGUMENT_DEPTH``)."""
MAX_YAML_NODES: Final = 1_000_000
"""The most nodes (scalars and collections) a decoded text may hold."""

_TIMESTAMP: Final = "tag:yaml.org,2002:timestamp"


class _NotYaml:
    """Type of :data:`NOT_YAML`."""

    def __repr__(self) -> str:
        return "NOT_YAML"


NOT_YAML: Final = _NotYaml()
"""What :func:`load_yaml` answers for a text it does not decode."""

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc]  # PyYAML ships no types for its loaders
    """``SafeLoader`` (libyaml's when present) without the timestamp resolver: a date
    stays its text."""

    yaml_implicit_resolvers: ClassVar[dict[Any, list[Any]]] = {
        first: [r for r in resolvers if r[0] != _TIMESTAMP]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


def load_yaml(text: str, *, timestamps: bool = False) -> Any:
    """The value one YAML document ``text`` holds, or :data:`NOT_YAML` (past a bound, not
    YAML, several documents, an alias, an unsafe tag). ``timestamps``: dates and times are
    ``date`` / ``datetime`` objects, as ``yaml.safe_load`` makes them."""
    if len(text) > MAX_YAML_TEXT:
        return NOT_YAML
    loader = _Base(text) if timestamps else _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None or not _bounded(node):
            return NOT_YAML
        return loader.construct_document(node)
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError):
        return NOT_YAML
    finally:
        loader.dispose()


def _bounded(root: Any) -> bool:
    """The node graph is a tree (no node reached twice: no alias), at most
    :data:`MAX_YAML_DEPTH` deep and :data:`MAX_YAML_NODES` large; walked without
    recursion."""
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen or depth > MAX_YAML_DEPTH or len(seen) >= MAX_YAML_NODES:
            return False
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
    return True


def dump_yaml(value: Any) -> str:
    """``yaml.safe_dump(value)``, exactly (PyYAML's own emitter, not libyaml's, whose
    line folding may differ): the text AgentDojo's ``tool_result_to_str`` writes for a
    structured result, before its ``strip()``."""
    text: str = yaml.safe_dump(value)
    return text


__all__ = [
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "MAX_YAML_TEXT",
    "NOT_YAML",
    "dump_yaml",
    "load_yaml",
]
