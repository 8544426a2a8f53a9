"""The values seen at a spec's ``from`` sources, as a saved firewall state carries them.

A firewall that keeps no trace cannot replay the executed calls into the tool checker on
restore, so its state carries the checker's index instead: for each source (in the plan's
order), the JSON values seen there. Its size grows with the distinct values a run uses,
not with the run's length."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentguard.language import ast as A
from agentguard.trace.identity import value_key


def save_index(index: Mapping[A.Domain, set[Any]]) -> list[list[Any]]:
    """Each source's values, in the index's order (a bool key ``(bool, v)`` as ``v``)."""
    return [[_value(k) for k in seen] for seen in index.values()]


def load_index(index: Mapping[A.Domain, set[Any]], saved: Sequence[Any]) -> None:
    """Fill ``index`` (fresh, of the same plan) from :func:`save_index`'s list;
    ``ValueError`` if the list does not fit the plan's sources."""
    if len(saved) != len(index):
        raise ValueError(
            f"observed lists {len(saved)} `from` sources, the spec declares {len(index)}"
        )
    for seen, values in zip(index.values(), saved, strict=True):
        if not isinstance(values, list):
            raise ValueError(f"observed must hold lists, got {type(values).__name__}")
        for v in values:
            key = value_key(v)
            if key is None:
                raise ValueError(f"observed holds {type(v).__name__}, not a JSON scalar")
            seen.add(key)


def _value(key: Any) -> Any:
    return key[1] if isinstance(key, tuple) and len(key) == 2 and key[0] is bool else key


__all__ = ["load_index", "save_index"]
