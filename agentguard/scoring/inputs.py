"""One typed way in: what every public entry accepts as a spec or a trace, and the rule.

Every entry that takes a spec (``verify_trace``, ``verify_traces``, ``Firewall``,
``guard()``, the LangChain middleware, the MCP gateway, ``score_dataset``...) turns it into
a :class:`~agentguard.language.ast.Spec` with :func:`coerce_spec`, so the same value means
the same thing everywhere (docs/language.md, "Passing a spec"):

* a ``Spec`` is used as is;
* an ``os.PathLike`` (``pathlib.Path``) is always a file to load;
* a ``str`` is a file path when it is one line ending in ``.ltl`` (a missing file is an
  error naming it), and spec text otherwise — except that a one-line string naming an
  existing file that is not ``.ltl`` is an error (pass ``Path(...)`` to load it), never
  silently parsed as text;
* anything else is a :class:`SpecInputError` (a ``TypeError``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from agentguard.errors import SpecError
from agentguard.language import ast as A
from agentguard.language import load_spec, parse_spec
from agentguard.semantics.registry import Registry
from agentguard.trace.loaders import trace_from_json
from agentguard.trace.model import Trace

SpecLike: TypeAlias = A.Spec | str | os.PathLike[str]
"""A parsed spec, a path to a ``.ltl`` file, or spec text (see the module docstring)."""

TraceLike: TypeAlias = Trace | Mapping[str, Any] | Sequence[Any]
"""A Trace, a metrics record (``{"tool_calls": [...]}``), call records, or chat messages."""


class SpecInputError(SpecError, TypeError):
    """A value given as a spec is none of: Spec, path, spec text."""


def coerce_spec(spec: SpecLike, registry: Registry | None = None) -> A.Spec:
    """The Spec ``spec`` stands for, by the one rule of this module."""
    if isinstance(spec, A.Spec):
        return spec
    if isinstance(spec, os.PathLike):
        return load_spec(Path(spec), registry=registry)
    if not isinstance(spec, str):
        raise SpecInputError(
            f"a spec is a Spec, a path (pathlib.Path or a '.ltl' file name) or spec text, "
            f"got {type(spec).__name__}"
        )
    one_line = "\n" not in spec.strip()
    if one_line and spec.strip().endswith(".ltl"):
        return load_spec(Path(spec.strip()), registry=registry)
    if one_line and spec.strip() and _is_file(spec.strip()):
        raise SpecInputError(
            f"{spec.strip()!r} is a file but not a '.ltl' spec: pass pathlib.Path({spec.strip()!r}) "
            "to load it, or pass the spec text itself"
        )
    return parse_spec(spec, registry=registry)


def coerce_trace(value: TraceLike) -> Trace:
    """A Trace from a Trace, a metrics record, call records, or chat messages (dialogue
    events kept: the spec judging it decides whether it sees them)."""
    if isinstance(value, Trace):
        return value
    return trace_from_json(value, source="<input>", messages=True)


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a name too long, a NUL byte: not a file
        return False
