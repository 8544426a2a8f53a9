"""Gzipped trace files read as far as they go: a ``.jsonl.gz`` cut short (a writer
killed mid-stream, a partial download) or corrupted past some point still gives every
line before the damage, and the damage is said, not hidden.

``gzip.decompress`` raises at the end of a truncated stream and drops everything it had
decompressed, so one missing byte at the end lost a file of thousands of good records.
Here the members are decompressed incrementally; what came out before the stream broke
is kept, with the reason it broke.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Final

_GZIP: Final = 16 + zlib.MAX_WBITS
"""``wbits`` for a gzip header and trailer (RFC 1952)."""


@dataclass(frozen=True, slots=True)
class Gunzipped:
    """What a gzip file holds, as far as it could be read."""

    data: bytes
    broken: str | None = None
    """Why the stream stops before its end (None: it is whole)."""


def gunzip(raw: bytes) -> Gunzipped:
    """The decompressed bytes of every gzip member of ``raw`` (as ``gzip.decompress``
    gives them), or those before the point where the stream is cut off or corrupted."""
    out: list[bytes] = []
    rest = raw
    while rest:
        engine = zlib.decompressobj(_GZIP)
        try:
            out.append(engine.decompress(rest))
        except zlib.error as exc:
            return Gunzipped(b"".join(out), f"the gzip stream is corrupted ({exc})")
        if not engine.eof:
            out.append(engine.flush())
            return Gunzipped(
                b"".join(out), "the gzip stream ends early (the file was cut off or damaged)"
            )
        rest = engine.unused_data.lstrip(b"\x00")  # members may be padded with zeros
    return Gunzipped(b"".join(out))


__all__ = ["Gunzipped", "gunzip"]
