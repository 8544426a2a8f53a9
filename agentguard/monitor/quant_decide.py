"""A quantifier's verdict from its instances' verdicts (Kleene ``forall`` / ``exists``).

Members of the domain decide; values seen only at a site and the fresh state (every value
not seen yet) can only keep a verdict open: ``forall`` is SATISFIED only when everyone is,
``exists`` VIOLATED only when everyone is.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentguard.monitor.verdict import Verdict


def decide(
    forall: bool, elements: Iterable[tuple[Verdict, bool]], fresh: Verdict | None
) -> Verdict:
    """elements: (verdict, in domain); fresh None when the domain cannot grow."""
    members: list[Verdict] = []
    others: list[Verdict] = []
    for v, inside in elements:
        (members if inside else others).append(v)
    everyone = [*members, *others, *([fresh] if fresh is not None else [])]
    if forall:
        if Verdict.VIOLATED in members:
            return Verdict.VIOLATED
        return (
            Verdict.SATISFIED if all(v is Verdict.SATISFIED for v in everyone) else Verdict.PENDING
        )
    if Verdict.SATISFIED in members:
        return Verdict.SATISFIED
    return Verdict.VIOLATED if all(v is Verdict.VIOLATED for v in everyone) else Verdict.PENDING


def decide_final(
    forall: bool, elements: Iterable[tuple[bool | None, bool]], fresh: bool | None, grows: bool
) -> bool | None:
    """The truth if the run ended: elements (truth, in domain); ``fresh`` counts when the
    domain may still grow (``grows``)."""
    values = [v for v, inside in elements if inside]
    maybe = [v for v, inside in elements if not inside] + ([fresh] if grows else [])
    if forall:
        if False in values:
            return False
        if None in values or (maybe and any(v is not True for v in maybe)):
            return None
        return True
    if True in values:
        return True
    if None in values or (maybe and any(v is not False for v in maybe)):
        return None
    return False
