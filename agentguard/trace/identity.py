"""What makes two calls, or two values, the same: the one home of call identity.

A leaf (it imports nothing from the package), because three parts ask the question: the
firewall's BLOCK_AND_WARN rule (is this proposal an identical retry of the warned one?),
the decision log (a redacted result is shown as a digest of its content) and the tool
checker's ``from`` dependencies (was this argument value seen earlier in the run?). The
first two compare content, so they share :func:`canonical`; the third indexes single
values with the occurrence test's equality (``1 == 1.0``, a bool never a number).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def canonical(value: Any) -> str:
    """The content of ``value`` as one text: sorted keys, no spaces, ``repr`` for what
    JSON cannot say. Equal content gives equal text."""
    return json.dumps(value, sort_keys=True, default=repr, separators=(",", ":"))


def call_key(name: str, args: Mapping[str, Any]) -> str:
    """The identity of a call by its tool and argument content (an identical retry)."""
    return name + "\x00" + canonical(args)


def digest(value: Any) -> str:
    """SHA-256 of a value's content: what a redacted log line shows of a result."""
    return hashlib.sha256(canonical(value).encode()).hexdigest()


def value_key(value: Any) -> Any:
    """A set key with the occurrence test's equality (a bool never equals a number);
    None for an unhashable value."""
    if isinstance(value, bool):
        return (bool, value)
    try:
        hash(value)
    except TypeError:
        return None
    return value


__all__ = ["call_key", "canonical", "digest", "value_key"]
