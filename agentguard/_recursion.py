"""Room for deeply nested formulas.

Formulas are trees and every stage (resolution, printing, evaluation, compilation) walks
them recursively. A generated deny-list such as ``G !(t0 | t1 | ... | t500)`` nests a few
hundred levels, past Python's default limit of 1000 frames; stages therefore run under
a higher limit, and a formula nested deeper still is reported as such, never as a bare
RecursionError.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import ParamSpec, TypeVar

LIMIT = 12_000
_lock = threading.Lock()

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def deep_recursion(limit: int = LIMIT) -> Iterator[None]:
    """Raise the interpreter's recursion limit to at least ``limit`` for the block."""
    with _lock:
        before = sys.getrecursionlimit()
        if before < limit:
            sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        # the limit is process-wide: lowering it again under another thread's deep walk would
        # break that walk, so it stays raised (it only ever grows, to LIMIT at most)
        pass


def allow_deep(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator: run ``fn`` under :func:`deep_recursion`."""

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with deep_recursion():
            return fn(*args, **kwargs)

    return wrapper
