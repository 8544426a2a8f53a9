"""Computing :class:`~agentguard.enforcement.permissions.Permissions` from a firewall's
state, by the same rules ``propose`` applies (nothing is proposed, nothing moves).

Per tool and constraint, :func:`agentguard.monitor.outlook.outlook` says whether a call
would violate it (free, refused, under argument conditions, or unknown); the
constraint's severity then says what ``propose`` would do of that violation, exactly as
:func:`agentguard.enforcement.policy.judge` would: TOLERATE never refuses, HARD_STOP and
SOFT_BLOCK refuse (a SOFT_BLOCK past its limit stops), BLOCK_AND_WARN refuses (unless
the model repeats a warned call: then the tool is labelled, not listed as refused), ASK
needs approval with an approver and is ``ask_fallback`` without one. The tool
declarations add their own conditions (the signature, the values a ``from`` argument
may take, the precondition).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from agentguard.enforcement.decision import Action
from agentguard.enforcement.doomed import doomed_tools
from agentguard.enforcement.permissions import (
    OTHER_TOOLS,
    Condition,
    Declared,
    Obligation,
    Permissions,
    Status,
    ToolPermission,
)
from agentguard.language import ast as A
from agentguard.language.walk import subformulas
from agentguard.monitor.nodes import Node
from agentguard.monitor.outlook import Outlook, ending_hint, outlook
from agentguard.monitor.verdict import Verdict
from agentguard.severity import Severity, SeverityKind
from agentguard.tools.checker import is_tool_check
from agentguard.trace.identity import call_key
from agentguard.trace.model import DIALOGUE_NAMES, Call

if TYPE_CHECKING:
    from agentguard.enforcement.core import FirewallCore

UNLISTED: Final = "\x00unlisted"
"""The name analysed for the ``other`` entry: a tool no spec can name."""

_REFUSING: Final = frozenset(
    (SeverityKind.HARD_STOP, SeverityKind.SOFT_BLOCK, SeverityKind.BLOCK_AND_WARN)
)


def permissions(fw: FirewallCore, tools: Iterable[str] | None = None) -> Permissions:
    """What may run now on ``fw``'s prefix (call under the firewall's lock)."""
    from agentguard.enforcement.agent_tools import spec_tool_names

    named = [*spec_tool_names(fw.spec), *fw.final_tools, *(tools or ()), *fw.tools.tools]
    names = [n for n in dict.fromkeys(named) if n not in DIALOGUE_NAMES]  # tools only
    position = fw._executed
    if fw._stopped or fw._ending:
        action = Action.STOP if fw._stopped else Action.BLOCK
        why = "the run was stopped" if fw._stopped else "the run has ended"
        entries = tuple(ToolPermission(n, "refused", action, reason=why) for n in names)
        other = ToolPermission(OTHER_TOOLS, "refused", action, reason=why)
        return Permissions(fw.run_id, position, fw.mode, entries, other, (), fw._stopped)
    extra = [f.call for f in fw._inflight.values()]
    live = _live(fw, extra)
    # a constraint whose node a call to a tool it does not mention leaves as it is
    # cannot refuse such a call (outlook's first answer): it is asked only of its tools
    final = set(fw.final_tools)
    anywhere: Live = []
    by_tool: dict[str, Live] = {}
    for entry in live:
        node, judged = entry[3], entry[5]
        mentioned = node.names
        if extra or judged or mentioned is None or not node.stable():
            anywhere.append(entry)
            continue
        for tool in mentioned | final:
            by_tool.setdefault(tool, []).append(entry)
    order = {e[0]: i for i, e in enumerate(live)}

    def asked(tool: str) -> Live:
        mine = by_tool.get(tool)
        if not mine:
            return anywhere
        return sorted([*anywhere, *mine], key=lambda e: order[e[0]])

    entries = tuple(_tool(fw, n, extra, asked(n)) for n in names)
    doomed = doomed_tools(fw, (e.tool for e in entries if e.status != "refused"))
    if doomed:
        entries = tuple(replace(e, doomed=doomed.get(e.tool, "")) for e in entries)
    other = replace(_tool(fw, UNLISTED, extra, anywhere), tool=OTHER_TOOLS)
    return Permissions(fw.run_id, position, fw.mode, entries, other, _obligations(fw, extra))


Live = list[tuple[str, A.Constraint, Severity, Node, Verdict, bool]]
"""The constraints that can still refuse a call: name, constraint, effective severity,
the node that judges it, its verdict now, whether a user predicate decides it."""


def _live(fw: FirewallCore, extra: Sequence[Call]) -> Live:
    """Every constraint a call could violate now (not TOLERATE, not violated for good),
    found once per answer, not once per tool."""
    base = fw.monitor.peek(extra).verdicts if extra else fw.monitor.verdicts
    judge = fw.monitor._judge  # constraints with a user predicate: the evaluator decides
    judged = judge.names if judge is not None else ()
    shadows = fw._shadows.active
    out: Live = []
    for name, constraint in fw._constraints.items():
        severity = _effective(fw, constraint.severity)
        if severity.kind is SeverityKind.TOLERATE:
            continue
        if name in shadows:  # violated before: its shadow says whether again
            node = shadows[name].node(name)
            before = fw._shadows.base(name, extra)
        else:
            node = fw.monitor.node(name)
            before = base[name]
        if before is not Verdict.VIOLATED:  # decided verdicts never change
            out.append((name, constraint, severity, node, before, name in judged))
    return out


def _tool(fw: FirewallCore, tool: str, extra: Sequence[Call], live: Live) -> ToolPermission:
    """One tool's entry: each constraint's outlook under its severity, then the
    declaration's checks."""
    ending = tool in fw.final_tools
    stops: list[str] = []
    blocks: list[str] = []
    asks: list[str] = []
    conditions: list[Condition] = []
    notes: list[str] = []
    for name, constraint, severity, node, before, judged in live:
        kind = severity.kind
        if judged:
            seen = Outlook("unknown", reason="a user predicate decides it")
        else:
            seen = outlook(node, tool, extra, ending=ending, base=before)
        if seen.kind == "refused" and seen.tested and fw.on_predicate_error == "fail_open":
            # an argument test that cannot be evaluated is ignored under fail-open
            seen = Outlook("unknown", reason="refused unless an argument test raises (fail-open)")
        if seen.kind == "free":
            continue
        if (  # past the send-back limit a finishing call that is only blocked runs
            ending
            and fw._sendbacks >= fw.max_finish_sendbacks
            and not _stops(fw, name, severity)
            and kind is not SeverityKind.ASK
        ):
            continue
        if kind is SeverityKind.BLOCK_AND_WARN and _warned(fw, tool):
            seen = Outlook("unknown", reason="repeating the warned call runs it (BLOCK_AND_WARN)")
        ask = kind is SeverityKind.ASK
        if seen.kind == "refused":
            if ask:
                asks.append(name)
            elif _stops(fw, name, severity):
                stops.append(name)
            else:
                blocks.append(name)
            continue
        exact = seen.kind == "conditional"
        conditions.append(
            Condition(name, severity, constraint.message, seen.when, exact, seen.reason, ask, seen)
        )
        if not exact:
            notes.append(f"{name}: {seen.reason}")
    declaration, refused_by_decl = _declaration(fw, tool, extra)
    if refused_by_decl is not None:
        severity = _effective(fw, fw.schema_severity)
        if severity.kind is SeverityKind.ASK:
            asks.append(refused_by_decl)
        elif _stops(fw, refused_by_decl, severity):
            stops.append(refused_by_decl)
        else:
            blocks.append(refused_by_decl)
    exact = not notes and (declaration is None or declaration.requires != "depends")
    reason = "; ".join(notes)
    if declaration is not None and declaration.requires == "depends":
        reason = "; ".join([*notes, "the precondition reads the call's own arguments"])
    if stops or blocks:
        action = Action.STOP if stops else Action.BLOCK
        return ToolPermission(
            tool,
            "refused",
            action,
            tuple(stops + blocks),
            tuple(conditions),
            declaration,
            True,
            reason,
        )
    status: Status = "needs_approval" if asks else ("conditional" if conditions else "free")
    if status == "free" and declaration is not None and declaration.requires == "depends":
        status = "conditional"
    return ToolPermission(
        tool, status, None, tuple(asks), tuple(conditions), declaration, exact, reason
    )


def only_the_end_runs(fw: FirewallCore, answer: Permissions, names: Sequence[str]) -> bool:
    """Does ``answer`` (computed now) refuse every one of the agent's tools ``names`` but
    the final answer, for good: no call can run, whatever the model tries (each refusal
    is exact and comes from a constraint that refuses a repeat too: not BLOCK_AND_WARN,
    whose warned repeat runs, nor an approval)? Then nothing can change the run's state
    before it ends, and sending a final answer back could only repeat the refusal."""
    if answer.position != fw._executed or fw._inflight or answer.stopped:
        return False
    final = set(fw.final_tools)
    tools = [answer[n] for n in names if n not in final]
    if not tools:
        return False
    for entry in tools:
        if entry.status != "refused" or not entry.exact:
            return False
        for name in entry.constraints:
            constraint = fw._constraints.get(name)
            declared = constraint.severity if constraint is not None else fw.schema_severity
            severity = _effective(fw, declared)
            if severity.kind not in (SeverityKind.HARD_STOP, SeverityKind.SOFT_BLOCK):
                return False
    return True


def _effective(fw: FirewallCore, severity: Severity) -> Severity:
    """ASK without an approver is the firewall's ``ask_fallback``."""
    if severity.kind is SeverityKind.ASK and fw.approver is None:
        return fw.ask_fallback
    return severity


def _stops(fw: FirewallCore, name: str, severity: Severity) -> bool:
    """Would a violation of ``name`` stop the run now (HARD_STOP, or a SOFT_BLOCK whose
    blocked attempts reached its limit)?"""
    if severity.kind is SeverityKind.HARD_STOP:
        return True
    if severity.kind is SeverityKind.SOFT_BLOCK:
        limit = severity.limit if severity.limit is not None else fw.soft_block_limit
        return fw._soft_counts.get(name, 0) >= limit
    return False


def _warned(fw: FirewallCore, tool: str) -> bool:
    """Is a BLOCK_AND_WARN warning of a call to ``tool`` live (its identical repeat in
    the next generation runs as an override)?"""
    prefix = call_key(tool, {}).split("\x00", 1)[0] + "\x00"
    return any(k.startswith(prefix) and g == fw._generation for k, g in fw._warned.items())


def _declaration(
    fw: FirewallCore, tool: str, extra: Sequence[Call]
) -> tuple[Declared | None, str | None]:
    """The declaration's part of the answer, and the synthetic constraint that refuses
    every call to the tool (None when none does)."""
    checker = fw.tools
    if not fw._tools_check or _effective(fw, fw.schema_severity).kind is SeverityKind.TOLERATE:
        return None, None
    decl = checker.tools.get(tool)
    if decl is None:
        if tool in checker.implicit:
            return None, None
        return None, f"tool:{OTHER_TOOLS if tool == UNLISTED else tool}:schema"
    one_of: list[tuple[str, tuple[object, ...]]] = []
    for p in decl.params:
        src = p.source
        if src is None or src.extractor not in ("results", "args"):
            continue
        seen = checker._index.get(A.Domain(src.extractor, src.tool, tuple(src.path)), set())
        values = tuple(sorted((_plain(k) for k in seen), key=repr))
        if src.extractor == "args" and extra:
            return Declared(decl, (), "depends"), None  # in-flight arguments count too
        one_of.append((p.name, values))
        if not values and not p.optional and p.type not in ("list", "any"):
            # nothing seen yet at its source: every value of it is refused
            return Declared(decl, tuple(one_of)), f"tool:{tool}:dependency"
    requires = "none"
    if decl.requires is not None:
        if _reads_own_arguments(decl.requires, tool):
            requires = "depends"
        else:
            problems = checker._precondition(decl, {}, fw._calls, extra)
            requires = "fails" if problems else "holds"
    declared = Declared(decl, tuple(one_of), requires)  # type: ignore[arg-type]
    trivial = all(p.optional for p in decl.params)
    if requires == "fails" and not trivial:
        return declared, f"tool:{tool}:requires"
    return declared, None


def _plain(key: object) -> object:
    """A value back from its occurrence-test key (:func:`value_key`)."""
    if isinstance(key, tuple) and len(key) == 2 and key[0] is bool:
        return key[1]
    return key


def _reads_own_arguments(requires: A.Formula, tool: str) -> bool:
    """Can the precondition's truth at the proposed call depend on its arguments?"""
    for f in subformulas(requires):
        if isinstance(f, A.Event):
            if f.tool in (None, tool) and (f.tests or f.outcome):
                return True
        elif isinstance(f, (A.TracePredicate, A.UserPredicate, A.Compare, A.Quantified)):
            return True
    return False


def _obligations(fw: FirewallCore, extra: Sequence[Call]) -> tuple[Obligation, ...]:
    """Constraints that ending the run now would leave unsatisfied (or may)."""
    ends = fw.monitor.peek(extra, ending=True).final if extra else fw.monitor.peek_end()
    out = []
    for name, ok in ends.items():
        if ok is True or is_tool_check(name):
            continue
        c = fw._constraints[name]
        if fw.monitor.verdicts[name] is Verdict.VIOLATED:
            continue  # already broken: no call can satisfy it any more
        hint = ending_hint(fw.monitor, name) if ok is False else ""
        out.append(Obligation(name, c.severity, c.message, hint, ok is False))
    return tuple(out)


__all__ = ["UNLISTED", "permissions"]
