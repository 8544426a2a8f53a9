"""JSON Schema ``pattern``: a tool's string arguments checked against the regular
expressions of its ``inputSchema``, before the call is forwarded.

A server's schema is input the gateway does not control, and a hostile or careless
pattern (``^(a+)+$``) takes a backtracking engine exponential time on a crafted argument
while the call waits. Patterns are therefore compiled as a spec's regexes are
(:func:`agentguard.regex.compile_regex`, RE2: matching time linear in the text), and
matched as JSON Schema says: anywhere in the string (``re.search``), not anchored.

A pattern RE2 cannot take (look-around, backreferences, one too large to compile)
cannot be checked, so the gateway cannot say the argument follows the schema: the call
is refused, saying which pattern and why, rather than let through unchecked. Like the
schema's other checks, none of this runs with ``schema_checks=False``
(``--no-schema-checks``). The properties checked are the schema's top-level ones, as for
its bounds (:mod:`agentguard.tools.json_schema`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentguard.regex import compile_regex


def pattern_problem(schema: Mapping[str, Any] | None, args: Mapping[str, Any]) -> str | None:
    """How ``args`` break a ``pattern`` of ``schema``'s properties, or None (see the module)."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return None
    for key, value in args.items():
        prop = properties.get(key)
        pattern = prop.get("pattern") if isinstance(prop, Mapping) else None
        if not isinstance(pattern, str) or not isinstance(value, str):
            continue  # no pattern, or not a string: JSON Schema's pattern does not apply
        try:
            compiled = compile_regex(pattern)
        except re.error as exc:
            return (
                f"the tool's input schema gives argument {key!r} the pattern "
                f"{pattern!r:.120}, which cannot be checked safely ({exc}), so the "
                "argument cannot be shown to follow it"
            )
        if not compiled.search(value):
            return (
                f"argument {key!r} = {value!r:.60} does not match the pattern "
                f"{pattern!r:.120} of the tool's input schema"
            )
    return None


__all__ = ["pattern_problem"]
