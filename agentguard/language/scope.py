"""What every resolver pass shares: the names declared so far and the problems found.

Resolution runs as passes over :mod:`.syntax` nodes (declarations and imports, macros,
formulas, terms); they all read and extend one :class:`Scope`, so a problem found in any
pass lands in the same list and is raised together with the others.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentguard.errors import Problem, SourceLocation
from agentguard.language import ast as A
from agentguard.language import syntax as S
from agentguard.language.vocabulary import BUILTIN_EXTRACTORS, Vocabulary
from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.model import DIALOGUE_NAMES

IMPLICIT_TOOLS = frozenset({FINAL_TOOL}) | DIALOGUE_NAMES
"""Tools every spec may mention without declaring them (and the dialogue events)."""


class Skip(Exception):
    """Internal: a problem was recorded; abandon the current node."""


@dataclass(frozen=True, slots=True)
class Macro:
    """A ``def``: its body stays unresolved until each use binds the parameters."""

    name: str
    params: tuple[str, ...]
    body: S.Node
    source: str
    span: A.Span | None


@dataclass(frozen=True, slots=True)
class MacroUse:
    """A macro use written outside any macro body: the place an expansion that runs over
    its budget is reported (the use a reader can see and change)."""

    name: str
    span: A.Span | None
    source: str


@dataclass(frozen=True, slots=True)
class Env:
    """Lexical environment while resolving a formula.

    ``inside`` names the macros whose bodies this environment is inside (a use of one
    of them expands recursively); ``expansion`` is the outermost macro use being expanded
    (None outside macros): every node resolved under it is counted against the expansion
    budget (:mod:`.macros`).
    """

    bound: tuple[str, ...] = ()
    macro_args: Mapping[str, tuple[S.Node, Env]] = field(default_factory=dict)
    depth: int = 0
    source: str = "<string>"
    expansion: MacroUse | None = None
    inside: tuple[str, ...] = ()

    def bind(self, name: str) -> Env:
        return dataclasses.replace(self, bound=(*self.bound, name))

    def expanding(self, use: MacroUse | None) -> Env:
        """This environment counted inside ``use``'s expansion: a macro argument is
        resolved in its caller's environment, but once per place the body uses it."""
        if self.expansion is not None or use is None:
            return self
        return dataclasses.replace(self, expansion=use)


@dataclass(slots=True)
class Scope:
    """Names a spec (and its imports) declares, the vocabulary, and the problems so far."""

    vocabulary: Vocabulary
    check_tools: bool = True
    problems: list[Problem] = field(default_factory=list)
    macros: dict[str, Macro] = field(default_factory=dict)
    tools: dict[str, A.ToolDecl] = field(default_factory=dict)
    declared_predicates: dict[str, int] = field(default_factory=dict)
    declared_extractors: set[str] = field(default_factory=set)
    expanded: int = 0  # syntax nodes resolved inside macro expansions (macros.charge)

    def problem(self, message: str, span: A.Span | None, source: str) -> Skip:
        """Record a problem at ``span`` (the source's start when unknown); raise the result
        to abandon the node."""
        loc = (
            SourceLocation(source, span.line, span.column) if span else SourceLocation(source, 1, 1)
        )
        self.problems.append(Problem(message, loc))
        return Skip()

    def is_extractor(self, name: str) -> bool:
        return (
            name in BUILTIN_EXTRACTORS
            or name in self.declared_extractors
            or name in self.vocabulary.extractors
        )

    def is_predicate(self, name: str) -> bool:
        return name in self.declared_predicates or name in self.vocabulary.predicates

    def predicate_arity(self, name: str) -> int | None:
        if name in self.declared_predicates:
            return self.declared_predicates[name]
        if name in self.vocabulary.predicates:
            return self.vocabulary.predicates[name][1]
        return None

    def check_tool(self, tool: str, span: A.Span | None, src: str) -> None:
        """Raise (after recording) when ``tool`` is not declared by a spec that declares tools."""
        if (
            self.check_tools
            and self.tools
            and tool not in self.tools
            and tool not in IMPLICIT_TOOLS
        ):
            close = difflib.get_close_matches(tool, sorted(self.tools), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise self.problem(
                f"unknown tool {tool!r}{hint} (this spec declares: "
                f"{', '.join(sorted(self.tools))})",
                span,
                src,
            )


def ref_text(name: str, path: tuple[str | int, ...]) -> str:
    """``name.seg[0]`` as written."""
    out = name
    for seg in path:
        if isinstance(seg, int):
            out += f"[{seg}]"
        elif A.is_matches(seg):
            pattern, flags = A.matches_regex(seg)
            out += f"[~ /{pattern}/{flags}]"
        else:
            out += "[*]" if seg == A.STAR else f".{seg}"
    return out
