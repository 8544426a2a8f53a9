"""Authenticated state documents: an HMAC-SHA256 over a canonical JSON form.

A saved monitor or firewall state decides what a continued run may do (a stopped run
stays stopped, a refund already counted stays counted), so a state that was edited must
be refused. With a key, ``save(key=...)`` adds ``"mac"``; ``restore(..., key=...)``
recomputes it and refuses a document whose MAC is missing or differs. The canonical
form is the JSON text with sorted keys and no spaces, so a document that went through
``json.dumps``/``json.loads`` (tuples to lists, int keys to strings) keeps its MAC.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any, Final

MAC_FIELD: Final = "mac"

Key = bytes | str


def canonical(doc: Mapping[str, Any]) -> bytes:
    """The bytes the MAC covers: every field but the MAC, as canonical JSON."""
    body = {k: v for k, v in doc.items() if k != MAC_FIELD}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    # a lone surrogate (trace data such as a non-UTF-8 file name) is kept as its own
    # three bytes, not refused: the form stays one-to-one, so no two states share a MAC
    return text.encode("utf-8", "surrogatepass")


def mac(doc: Mapping[str, Any], key: Key) -> str:
    """The hex HMAC-SHA256 of ``doc`` under ``key``."""
    raw = key.encode("utf-8") if isinstance(key, str) else bytes(key)
    return hmac.new(raw, canonical(doc), hashlib.sha256).hexdigest()


def sign(doc: dict[str, Any], key: Key | None) -> dict[str, Any]:
    """``doc`` with its MAC (unchanged without a key)."""
    if key is not None:
        doc[MAC_FIELD] = mac(doc, key)
    return doc


def verify(doc: Mapping[str, Any], key: Key | None) -> str | None:
    """Why ``doc`` is refused under ``key`` (None: accepted; no key: nothing checked)."""
    if key is None:
        return None
    found = doc.get(MAC_FIELD)
    if not isinstance(found, str):
        return "the state is not authenticated (no MAC), but a key was given"
    try:
        expected = mac(doc, key)
    except (TypeError, ValueError, RecursionError):
        return "the state cannot be put in canonical form"
    if not hmac.compare_digest(found, expected):
        return "the state was modified after it was saved (its MAC does not match)"
    return None
