"""Tool names nothing makes sense of: the misspelt tool that never fires.

A spec without ``tool`` declarations takes any name as a tool, so ``O list_dirctory``
parses, compiles and never matches a call: the constraint is silently vacuous (with
declarations the resolver refuses the name). Lint flags a name when something says it is
wrong:

* a **known tool list** (``lint --tools FILE``, ``lint_spec(spec, tools=...)``: the tools
  the agent has) decides exactly: a name the spec uses or declares that is not in it is
  ``unknown-tool``, with the closest listed tool; the list's parameters are compared with
  the spec's declarations too (``tool-mismatch``), the same comparison the firewall makes
  when an adapter knows the agent's tools (:func:`compare_tools`);
* without one, the **spec itself**: a tool named exactly once in the whole spec (imports
  and ``requires`` clauses included) that is a near miss of another name the spec uses
  (:func:`near_miss`) in another constraint is the telltale of a typo. A name used twice
  or more is taken as meant (a typo is seldom repeated the same way); two near names in
  one formula are two tools it relates (``G(set_a -> O get_a)``); names further apart
  are different tools. A near miss of a name every spec may use (``final_answer``, ``user_message``,
  ``assistant_message``) is flagged however often it is used.

The conversation's events and the final tool are never unknown; ``any`` is no name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from agentguard.analysis.declarations import walk
from agentguard.analysis.findings import LintWarning, located
from agentguard.enforcement.agent_tools import AgentTools, close_tool, compare_tools
from agentguard.language import ast as A
from agentguard.trace.call_fields import DIALOGUE_NAMES
from agentguard.trace.final_tool import FINAL_TOOL

IMPLICIT = frozenset({FINAL_TOOL}) | DIALOGUE_NAMES
"""Names every spec may use without declaring them: the final tool, the dialogue events."""

SHORT_NAME = 4
"""Names shorter than this are near misses only up to case and ``-``/``_``: one edit
turns any short name into another plausible one (``a`` / ``b``, ``pay`` / ``day``)."""
LONG_NAME = 10
"""Names this long or longer are near misses up to two edits apart (shorter: one)."""

_HOW = (
    "(A misspelt tool is another tool to the monitor: it never matches a call. Declare "
    "the spec's tools, or lint with --tools FILE, to have every name checked.)"
)


@dataclass(frozen=True, slots=True)
class Use:
    """Where a tool name is used: its first place, how often, in which constraint first,
    and in which formulas at all (``scopes``: indexes of the spec's formulas)."""

    name: str
    count: int
    span: A.Span | None
    owner: str | None
    scopes: frozenset[int]


def tool_name_findings(
    spec: A.Spec, tools: AgentTools | None = None, source: str | None = None
) -> list[LintWarning]:
    """``unknown-tool`` (and with ``tools``, ``tool-mismatch``) warnings about ``spec``."""
    src = source or spec.source
    uses = _uses(spec)
    if tools is not None:
        return _against_list(spec, uses, tools, src)
    if spec.tools:  # declared: the resolver already refused every other name
        return []
    return _near_misses(uses, src)


def near_miss(a: str, b: str) -> bool:
    """Are two different names likely one misspelt as the other: the same up to case and
    ``-``/``_``, or (both :data:`SHORT_NAME` letters or longer, and no siblings of a
    series, :func:`_siblings`) one edit apart (a letter dropped, added, changed, or two
    neighbours swapped), two when both are :data:`LONG_NAME` letters or longer?"""
    if a == b:
        return False
    if _folded(a) == _folded(b):
        return True
    shorter = min(len(a), len(b))
    if shorter < SHORT_NAME or _siblings(a, b):
        return False
    limit = 2 if shorter >= LONG_NAME else 1
    return edit_distance(a, b, limit) <= limit


def _siblings(a: str, b: str) -> bool:
    """Names of one family rather than a typo: the same length, differing only in their
    first or last letter or in digits (``tool_b`` / ``tool_c``, ``get_a`` / ``set_a``,
    ``step1_x`` / ``step2_x``), as tools are named in series; a typo drops, adds or swaps
    letters inside a word."""
    if len(a) != len(b):
        return False
    last = len(a) - 1
    return all(
        i in (0, last) or (x.isdigit() and y.isdigit())
        for i, (x, y) in enumerate(zip(a, b, strict=True))
        if x != y
    )


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance between ``a`` and ``b`` (insertions, deletions,
    substitutions, adjacent transpositions), or ``limit + 1`` once it must exceed
    ``limit`` (the usual answer: most pairs of names are far apart)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            best = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, before[j - 2] + 1)
            current[j] = best
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return min(row[-1], limit + 1)


def _folded(name: str) -> str:
    return name.casefold().replace("-", "_")


def _uses(spec: A.Spec) -> dict[str, Use]:
    """Every tool name used in the spec's formulas, in order of first use."""
    counts: Counter[str] = Counter()
    first: dict[str, tuple[A.Span | None, str | None]] = {}
    scopes: dict[str, set[int]] = {}
    formulas: list[tuple[str | None, A.Formula]] = [(c.name, c.formula) for c in spec.constraints]
    formulas += [(None, d.requires) for d in spec.tools if d.requires is not None]
    for index, (owner, formula) in enumerate(formulas):
        for name, span in _names_in(formula):
            counts[name] += 1
            first.setdefault(name, (span, owner))
            scopes.setdefault(name, set()).add(index)
    return {n: Use(n, counts[n], *first[n], frozenset(scopes[n])) for n in first}


def _names_in(formula: A.Formula) -> Iterator[tuple[str, A.Span | None]]:
    for node in walk(formula):
        if isinstance(node, A.Event) and node.tool is not None:
            yield node.tool, node.span
        elif isinstance(node, A.TracePredicate):
            for name in _tool_arguments(node):
                yield name, node.span


def _tool_arguments(p: A.TracePredicate) -> Iterator[str]:
    """The tool names written in a trace predicate's tool positions (a quantified
    variable there is no name)."""
    kinds = A.TRACE_PREDICATES.get(p.name, "").split()
    for kind, arg in zip(kinds, p.args, strict=False):
        if kind == "t" and isinstance(arg, str):
            yield arg
        elif kind == "[t]" and isinstance(arg, (tuple, list)):
            yield from (a for a in arg if isinstance(a, str))


def _against_list(
    spec: A.Spec, uses: dict[str, Use], tools: AgentTools, src: str
) -> list[LintWarning]:
    """Names outside the known tools, and the declarations' differences with them."""
    out: list[LintWarning] = []
    declared = {d.name: d for d in spec.tools}
    names = list(dict.fromkeys([*declared, *uses]))
    for name in names:
        if name in tools or name in IMPLICIT:
            continue
        close = close_tool(name, (*tools, *IMPLICIT))
        hint = f"; did you mean {close!r}?" if close else _listing(tools)
        use, decl = uses.get(name), declared.get(name)
        where = "declared" if decl is not None else f"named {_times(use.count if use else 0)}"
        span = decl.span if decl is not None else (use.span if use else None)
        out.append(
            located(
                "unknown-tool",
                use.owner if use and decl is None else None,
                f"tool {name!r} ({where}) is not one of the agent's tools{hint}",
                span,
                src,
            )
        )
    for mismatch in compare_tools(spec, tools, names=()):
        decl = declared.get(mismatch.tool)
        span = decl.span if decl is not None else None
        out.append(located("tool-mismatch", None, mismatch.message, span, src))
    return out


def _listing(tools: AgentTools) -> str:
    if not tools:
        return " (the tool list is empty)"
    shown = ", ".join(sorted(tools)[:12])
    more = f" and {len(tools) - 12} more" if len(tools) > 12 else ""
    return f" (the agent's tools: {shown}{more})"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _near_misses(uses: dict[str, Use], src: str) -> list[LintWarning]:
    """Names used once that are near misses of another name (see the module docstring);
    two names used once each and a near miss of each other are one warning, at the
    later."""
    out: list[LintWarning] = []
    position = {name: index for index, name in enumerate(uses)}
    for name, use in uses.items():
        if name in IMPLICIT:
            continue
        implicit = next((n for n in sorted(IMPLICIT) if near_miss(name, n)), None)
        if implicit is not None:
            out.append(_warning(use, implicit, None, src))
            continue
        if use.count != 1:
            continue
        others = [
            other
            for other in uses.values()
            if other.name not in IMPLICIT
            and (other.count > 1 or position[other.name] < position[name])
            and not (other.scopes & use.scopes)  # one formula relating two tools
            and near_miss(name, other.name)
        ]
        if others:
            likely = max(others, key=lambda u: (u.count, -edit_distance(name, u.name, 2)))
            out.append(_warning(use, likely.name, likely, src))
    return out


def _warning(use: Use, other: str, other_use: Use | None, src: str) -> LintWarning:
    if other_use is None:
        message = f"tool {use.name!r} is a near miss of {other!r}: did you mean {other!r}? {_HOW}"
    elif other_use.count > 1:
        message = (
            f"tool {use.name!r} is named only here, a near miss of {other!r} (named "
            f"{_times(other_use.count)}): did you mean {other!r}? {_HOW}"
        )
    else:
        line = f" (line {other_use.span.line})" if other_use.span is not None else ""
        message = (
            f"tools {use.name!r} (here) and {other!r}{line} are each named once and a near "
            f"miss of each other: is one of them misspelt? {_HOW}"
        )
    return located("unknown-tool", use.owner, message, use.span, src)
