"""Answers about the call being processed, shared by every constraint that asks.

The monitor hands one ``Call`` object to each constraint it moves; fifty quantified
constraints over the same tools would each extract the same fields and run the same
tests on it. The memo keeps those answers for the current call only (per thread: the
firewall may check calls in several), keyed by what was asked, and forgets them as soon
as another call comes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from agentguard.trace.model import Call

T = TypeVar("T")


class _Memo(threading.local):
    def __init__(self) -> None:
        self.call: Call | None = None
        self.answers: dict[Hashable, Any] = {}


_memo = _Memo()


def about(call: Call, question: Hashable, answer: Callable[[], T]) -> T:
    """``answer()``, computed once per ``call`` (by identity) and ``question``."""
    memo = _memo
    if memo.call is not call:
        memo.call = call  # held, so its id cannot be reused while it is cached
        memo.answers = {}
    answers = memo.answers
    try:
        return answers[question]  # type: ignore[no-any-return]
    except KeyError:
        found = answers[question] = answer()
        return found


def hashable(key: Any) -> bool:
    """Can ``key`` be a question (literal lists inside a formula are not hashable)?"""
    try:
        hash(key)
    except TypeError:
        return False
    return True
