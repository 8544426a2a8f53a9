"""A small bounded cache of values built from objects compared by identity.

The monitor and firewall prototypes (``monitor/prototype.py``,
``enforcement/prototype.py``) are built once per spec object and options. A spec is a
frozen AST without weak references, so an entry is keyed by the ids of its objects and
holds the objects themselves (their ids cannot be reused while the entry lives); a hit
is one whose held objects are the very ones asked for. The most recently used
:attr:`IdentityCache.size` entries are kept, so a process that builds many specs does
not grow without bound.

A hit takes no lock (``dict.get`` is one atomic C call); building runs outside the lock
(it may run user code or compile), and when two threads build the same entry at once
the first stored wins, so every caller gets one value per key.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class IdentityCache(Generic[V]):
    """``get(key, first, second, make)``: the value stored for ``key`` with these very
    two objects (compared with ``is``: the spec and the registry), else ``make()``,
    stored."""

    __slots__ = ("_entries", "_lock", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[object, object, V]] = OrderedDict()

    def get(self, key: Hashable, first: object, second: object, make: Callable[[], V]) -> V:
        hit = self._entries.get(key)
        if hit is not None and hit[0] is first and hit[1] is second:
            try:  # noqa: SIM105 - contextlib.suppress costs a Python context manager per call
                self._entries.move_to_end(key)
            except KeyError:  # dropped meanwhile by another thread: still a valid value
                pass
            return hit[2]
        made = make()  # unlocked: it may run user code
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] is first and hit[1] is second:
                return hit[2]  # another thread made it meanwhile: one value per key
            self._entries[key] = (first, second, made)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return made

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


__all__ = ["IdentityCache"]
