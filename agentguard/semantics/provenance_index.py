"""The provenance index: what each source has shown so far, and each call's view.

One :class:`ProvenanceState` per run (the monitor keeps one and saves it with its state;
the offline evaluator walks a trace once with one: :func:`annotate_trace`). For each
position, :meth:`ProvenanceState.view` gives the call as a spec with provenance sees it
(its text result decoded where its tool ``returns yaml|json``, its ``from`` facts
written, decided from the calls before it only), and :meth:`ProvenanceState.add` then
adds what the call shows to each source part's :class:`~.appearance.Seen`.

Trust classes: every leaf of a tool result is classified by the most specific
``trusted`` / ``untrusted`` declaration covering its location (a longer path is more
specific; at equal length a concrete step beats ``[*]``; a tie between classes is
untrusted); a location no declaration covers is untrusted (fail closed). User messages
are trusted. Arguments are never a trust source: the model wrote them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentguard.language import ast as A
from agentguard.semantics.appearance import Seen, appears, seen_of
from agentguard.semantics.event_tests import passes
from agentguard.semantics.provenance import FromTest, ProvenancePlan
from agentguard.semantics.values import MISSING, call_field, data_regex, get_path, outcome_is
from agentguard.trace.model import Call, Trace
from agentguard.trace.yaml_text import load_yaml

Path = tuple[str | int, ...]


def constant(t: A.Term) -> Any:
    """A constant term's value (sources hold no variables: the resolver saw to it)."""
    if isinstance(t, A.Literal):
        return t.value
    if isinstance(t, A.ListLiteral):
        return [constant(x) for x in t.items]
    if isinstance(t, A.MapLiteral):
        return {k: constant(v) for k, v in t.items}
    if isinstance(t, A.Regex):
        return data_regex(t.pattern, t.flags)
    raise TypeError(f"{type(t).__name__} is not a constant")  # pragma: no cover - resolver


def decode_text(text: str, fmt: str) -> Any:
    """A text result of a tool declared ``returns fmt``, decoded when it holds a mapping
    or a list; any other text (a scalar, not YAML/JSON, past the loader's bounds) stays
    the text it is, never an error."""
    if fmt == "yaml":
        value = load_yaml(text)
    else:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return text
    return value if isinstance(value, (dict, list)) else text


def _covers(decl: Path, path: Path) -> bool:
    if len(decl) > len(path):
        return False
    for d, p in zip(decl, path, strict=False):
        if d == A.STAR:
            if not isinstance(p, int):
                return False
        elif d != p:
            return False
    return True


def is_trusted(decls: Sequence[A.TrustDecl], path: Path) -> bool:
    """The class of a result location: the most specific covering declaration's."""
    best: tuple[int, int, bool] | None = None
    for d in decls:
        if _covers(d.path, path):
            rank = (len(d.path), sum(1 for s in d.path if s != A.STAR), not d.trusted)
            if best is None or rank > best:
                best = rank
    return best is not None and not best[2]


class ProvenanceState:
    """Per-source indexes of one run (see the module docstring)."""

    def __init__(self, plan: ProvenancePlan) -> None:
        self.plan = plan
        self.seen: list[Seen] = [
            seen_of(constant(p.values)) if p.values is not None else Seen() for p in plan.parts
        ]
        self._formats = dict(plan.formats)
        trust: dict[str, list[A.TrustDecl]] = {}
        for d in plan.trust:
            trust.setdefault(d.tool, []).append(d)
        self._trust = trust
        self._expected = [
            [(t, constant(t.value)) for t in p.pattern.tests] if p.pattern is not None else []
            for p in plan.parts
        ]
        kinds = {p.kind for p in plan.parts}
        # the facts of the last call viewed (a proposal's, reused when it is committed)
        self._last: tuple[str, Any, dict[str, bool]] | None = None
        # the tests a call of each tool runs (a test is read by its atoms' tools only)
        self._any = tuple(t for t in plan.tests if t.tools is None)
        by_tool: dict[str, list[FromTest]] = {}
        for t in plan.tests:
            for tool in t.tools or ():
                by_tool.setdefault(tool, []).append(t)
        self._by_tool = {tool: (*self._any, *tests) for tool, tests in by_tool.items()}
        self._classes = "trusted" in kinds or "untrusted" in kinds

    # ------------------------------------------------------------------ views
    def view(self, call: Call) -> Call:
        """``call`` as the lowered spec reads it at its position (see module docstring)."""
        result = call.result
        fmt = self._formats.get(call.name)
        if fmt is not None and type(result) is str:
            result = decode_text(result, fmt)
        last = self._last
        if last is not None and last[0] == call.name and last[1] == call.args:
            facts = last[2]  # proposed, then committed: nothing was added in between
        else:
            facts = self._facts(call)
            self._last = (call.name, call.args, facts)
        if not facts:  # no test of this tool's atoms: an absent fact is ⊥, as it should
            return call if result is call.result else call.seen_as(call.args, result)
        args = dict(call.args)
        args[A.PROVENANCE_FIELD] = facts
        return call.seen_as(args, result)

    def _facts(self, call: Call) -> dict[str, bool]:
        facts: dict[str, bool] = {}
        for t in self._by_tool.get(call.name, self._any):
            value = call_field(call, t.path)
            if value is MISSING:
                continue  # ⊥: neither `from` nor `not from` holds
            facts[t.key] = appears(value, [self.seen[i] for i in t.parts]) != t.negated
        return facts

    # ------------------------------------------------------------------ commits
    def add(self, view: Call) -> None:
        """Add what ``view`` (a call as :meth:`view` gave it) shows to every source."""
        self._last = None  # the indexes may change: no fact computed before holds now
        user = view.kind == "user"
        classified: tuple[list[Any], list[Any]] | None = None
        for i, part in enumerate(self.plan.parts):
            kind, seen = part.kind, self.seen[i]
            if kind == "user" or (kind == "trusted" and user):
                if user:
                    text = view.args.get("text", MISSING)
                    if text is not MISSING:
                        seen.add(text)
                if kind == "user":
                    continue
            if kind in ("trusted", "untrusted"):
                if view.is_tool and view.has_result:
                    if classified is None:
                        classified = self._classify(view)
                    seen.add(classified[0 if kind == "trusted" else 1])
            elif kind in ("results", "args") and self._matches(i, part, view):
                if kind == "results":
                    if not view.has_result:
                        continue
                    value = get_path(view.result, part.path) if part.path else view.result
                else:
                    value = call_field(view, part.path)
                if value is not MISSING:
                    seen.add(value)

    def _matches(self, i: int, part: A.SourcePart, call: Call) -> bool:
        pattern: A.Event = part.pattern
        if pattern.tool is not None and pattern.tool != call.name:
            return False
        if pattern.outcome is not None and not outcome_is(call, pattern.outcome):
            return False
        return passes(call, pattern, self._expected[i])

    def _classify(self, call: Call) -> tuple[list[Any], list[Any]]:
        """(trusted, untrusted) values of ``call``'s result, by trust declarations."""
        trusted: list[Any] = []
        untrusted: list[Any] = []
        decls = self._trust.get(call.name, ())
        if not self._classes:
            return trusted, untrusted
        if all(not d.path for d in decls):  # the whole result has one class
            (trusted if any(d.trusted for d in decls) else untrusted).append(call.result)
            return trusted, untrusted
        stack: list[tuple[Any, Path]] = [(call.result, ())]
        while stack:
            value, path = stack.pop()
            if isinstance(value, Mapping):
                for k, v in value.items():
                    key_path = (*path, str(k))
                    (trusted if is_trusted(decls, key_path) else untrusted).append(str(k))
                    stack.append((v, key_path))
            elif isinstance(value, (list, tuple)):
                stack.extend((v, (*path, j)) for j, v in enumerate(value))
            else:
                (trusted if is_trusted(decls, path) else untrusted).append(value)
        return trusted, untrusted

    # ------------------------------------------------------------------ state files
    def save(self) -> list[Any]:
        """The indexes as JSON data (a literal list's comes back from the plan)."""
        return [
            None if p.values is not None else s.save()
            for p, s in zip(self.plan.parts, self.seen, strict=True)
        ]

    def restore(self, doc: Any) -> None:
        if not isinstance(doc, list) or len(doc) != len(self.plan.parts):
            raise ValueError("the saved provenance indexes are not this spec's")
        self._last = None
        for i, (p, saved) in enumerate(zip(self.plan.parts, doc, strict=True)):
            if p.values is None:
                if not isinstance(saved, Mapping):
                    raise TypeError("a saved provenance index is not a mapping")
                self.seen[i] = Seen.restore(saved)


def annotate_trace(plan: ProvenancePlan, trace: Trace) -> Trace:
    """Every call of ``trace`` as its view: one pass, each source indexed once."""
    state = ProvenanceState(plan)
    out: list[Call] = []
    for call in trace.calls:
        view = state.view(call)
        out.append(view)
        state.add(view)
    return Trace(out, trace.metrics)


def views(state: ProvenanceState, calls: Sequence[Call]) -> list[Call]:
    """The views of ``calls`` proposed one after another (not committed): each sees what
    the ones before it would show, on a copy of ``state``."""
    if len(calls) == 1:
        return [state.view(calls[0])]
    fork = ProvenanceState(state.plan)
    fork.restore(state.save())
    out: list[Call] = []
    for call in calls:
        view = fork.view(call)
        out.append(view)
        fork.add(view)
    return out
