"""Which constraints the result of a call (or a user predicate) may decide.

When a call completes, the monitor steps it with its result. For a constraint that
reads no result, no error text and no user predicate, that step gives exactly the
verdict its proposal was judged with (the proposal was checked with the result unknown,
and nothing unknown is read). The firewall relies on this to skip work at completion
for every other constraint; this module says conservatively which ones are the others.
"""

from __future__ import annotations

from typing import Any

from agentguard.language import ast as A
from agentguard.language.reads import reads_results

_KNOWN: dict[int, tuple[A.Formula, bool]] = {}
"""Answers by formula identity (the formula kept, so its id cannot be reused): every
Firewall of a spec asks for each constraint, and walking the formulas was most of the
cost of a new firewall. Bounded: cleared when full."""
_KNOWN_MAX = 4096


def result_sensitive(formula: A.Formula) -> bool:
    """May a call's result change the truth of ``formula`` at that call?"""
    known = _KNOWN.get(id(formula))
    if known is not None and known[0] is formula:
        return known[1]
    answer = reads_results(formula) or has_user_predicate(formula)
    if len(_KNOWN) >= _KNOWN_MAX:
        _KNOWN.clear()
    _KNOWN[id(formula)] = (formula, answer)
    return answer


def has_user_predicate(f: Any) -> bool:
    """A user predicate may raise or read anything (a registered domain extractor too)."""
    if isinstance(f, (A.UserPredicate, A.Domain)):
        return True
    if isinstance(f, tuple):
        return any(has_user_predicate(x) for x in f)
    if hasattr(f, "__dataclass_fields__"):
        return any(has_user_predicate(getattr(f, n)) for n in f.__dataclass_fields__ if n != "span")
    return False


__all__ = ["has_user_predicate", "result_sensitive"]
